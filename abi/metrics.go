package abi

/*
#include "metrics.h"
*/
import "C"

import (
	"github.com/tritonhost/tritonhost/core/metrics"
)

// familyHandle is the Go side of one TRITONSERVER_MetricFamily: one
// registration of a registry family (several handles may share a family).
type familyHandle struct {
	fam *metrics.Family
}

// metricHandle is the Go side of one TRITONSERVER_Metric: one reference to a
// series (several handles with the same family and labels share it).
type metricHandle struct {
	fam    *metrics.Family
	series *metrics.Series
}

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
	C.thost_series_read(s.c, &value, &sum, (*C.uint64_t)(&counts[0]))
	out.Bounds = s.bounds
	out.Counts = counts
	out.Sum = float64(sum)
}
