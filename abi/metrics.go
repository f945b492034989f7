package abi

/*
#include "metrics.h"
*/
import "C"

import (
	"unsafe"

	"tritonhost/core/metrics"
)

// metricsRegistry holds the metric families backends create. Like Triton's,
// it is one per process.
var metricsRegistry = metrics.NewRegistry()

// Metrics returns the registry that backends' custom metrics
// (TRITONSERVER_MetricFamilyNew, TRITONSERVER_MetricNew) are registered in,
// for the server to serve (Registry.WriteText). It is the same registry for
// the life of the process; server-side metrics may be registered in it too.
// A family name a backend registers with the same kind as an existing family
// shares that family, as in Triton.
func Metrics() *metrics.Registry { return metricsRegistry }

// familyHandle is the Go side of one TRITONSERVER_MetricFamily: one
// registration of a registry family (several handles may share a family).
type familyHandle struct {
	reg *metrics.Registry
	fam *metrics.Family
}

// metricHandle is the Go side of one TRITONSERVER_Metric: one reference to a
// series (several handles with the same family and labels share it).
type metricHandle struct {
	fam    *metrics.Family
	series *metrics.Series
}

var (
	metricFamilies table[familyHandle]
	metricHandles  table[metricHandle]
)

// cSeries reads a series that backends update in C memory. The registry
// calls Collect only while the series is registered, and Family.Remove
// waits for a Collect in progress, so c is valid whenever Collect runs.
type cSeries struct {
	c      *C.struct_thost_series
	kind   metrics.Kind
	bounds []float64 // histogram: the bounds c was made with (immutable)
}

// Collect implements metrics.Collector.
func (s *cSeries) Collect(out *metrics.Sample) {
	var value, sum C.double
	if s.kind != metrics.KindHistogram {
		C.thost_series_read(s.c, &value, &sum, nil)
		out.Value = float64(value)
		return
	}
	counts := make([]uint64, len(s.bounds)+1)
	C.thost_series_read(s.c, &value, &sum, (*C.uint64_t)(unsafe.Pointer(&counts[0])))
	out.Bounds = s.bounds
	out.Counts = counts
	out.Sum = float64(sum)
}

// MetricObjects counts the live objects of the custom-metrics API. Families
// and metrics a backend never deletes stay counted: they are the backend's
// leak, not the server's, so these counts are not part of LiveObjects.
type MetricObjects struct {
	Families   int64 // TRITONSERVER_MetricFamily handles not deleted
	Metrics    int64 // TRITONSERVER_Metric handles not deleted
	Args       int64 // TRITONSERVER_MetricArgs not deleted
	Series     int64 // series in C memory (shared by metrics of the same labels)
	GoFamilies int   // Go family handles
	GoMetrics  int   // Go metric handles
}

// LiveMetrics returns the current counts.
func LiveMetrics() MetricObjects {
	load := func(i int) int64 { return int64(C.thost_metric_live(C.int(i))) }
	return MetricObjects{
		Families:   load(C.THOST_METRIC_COUNT_FAMILY),
		Metrics:    load(C.THOST_METRIC_COUNT_METRIC),
		Args:       load(C.THOST_METRIC_COUNT_ARGS),
		Series:     load(C.THOST_METRIC_COUNT_SERIES),
		GoFamilies: metricFamilies.len(),
		GoMetrics:  metricHandles.len(),
	}
}

// Zero reports whether nothing is live.
func (m MetricObjects) Zero() bool { return m == MetricObjects{} }
