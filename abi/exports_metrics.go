package abi

// This file holds the Go functions metrics.c calls to create and delete
// custom metric families and metrics (//export). cgo forbids C definitions
// in the preamble of a file with //export, so the C side lives in metrics.c.
// Metric values never come here: they are updated in C.

/*
#include "metrics.h"
*/
import "C"

import (
	"errors"
	"slices"
	"unsafe"

	"tritonhost/core"
	"tritonhost/core/metrics"
)

var errSeriesAlloc = errors.New("out of memory for the series")

//export thostMetricFamilyNew
func thostMetricFamilyNew(kind C.int, name, description *C.char, key *C.uint64_t) (ret *C.TRITONSERVER_Error) {
	defer recoverError("TRITONSERVER_MetricFamilyNew", &ret)
	reg := Metrics()
	f, err := reg.Register(C.GoString(name), C.GoString(description), metrics.Kind(kind))
	if err != nil {
		return cErrorf(core.CodeInvalidArg, "TRITONSERVER_MetricFamilyNew: %v", err)
	}
	*key = C.uint64_t(metricFamilies.add(familyHandle{reg: reg, fam: f}))
	return nil
}

//export thostMetricFamilyDelete
func thostMetricFamilyDelete(key C.uint64_t) {
	if h, ok := metricFamilies.take(uint64(key)); ok {
		h.reg.Unregister(h.fam)
	}
}

//export thostMetricNew
func thostMetricNew(famKey C.uint64_t, labels **C.TRITONSERVER_Parameter, nlabels C.uint64_t,
	args *C.TRITONSERVER_MetricArgs, key *C.uint64_t, series **C.struct_thost_series) (ret *C.TRITONSERVER_Error) {
	defer recoverError("TRITONSERVER_MetricNew", &ret)
	fh, ok := metricFamilies.get(uint64(famKey))
	if !ok {
		return cErrorf(core.CodeInternal, "TRITONSERVER_MetricNew: the metric family is no longer known to the server")
	}
	kind := fh.fam.Kind()
	var bounds []float64 // a histogram's buckets, in args (C memory)
	if kind == metrics.KindHistogram && args != nil {
		bounds = unsafe.Slice((*float64)(unsafe.Pointer(args.buckets)), int(args.bucket_count))
	}
	s, err := fh.fam.Add(labelsFromC(labels, nlabels), func() (metrics.Collector, error) {
		c := C.thost_series_new(C.int(kind), (*C.double)(unsafe.SliceData(bounds)), C.uint64_t(len(bounds)))
		if c == nil {
			return nil, errSeriesAlloc
		}
		return &cSeries{c: c, kind: kind, bounds: slices.Clone(bounds)}, nil
	})
	switch {
	case errors.Is(err, errSeriesAlloc):
		return cErrorf(core.CodeInternal, "TRITONSERVER_MetricNew: %v", err)
	case err != nil:
		return cErrorf(core.CodeInvalidArg, "TRITONSERVER_MetricNew: %v", err)
	}
	cs := s.Collector().(*cSeries)
	if !slices.Equal(cs.bounds, bounds) {
		// Triton (prometheus-cpp) also keeps the first metric's buckets.
		logger.Load().Warnf("TRITONSERVER_MetricNewWithArgs: histogram %s%v already exists with buckets %v: "+
			"the new metric shares it, not buckets %v", fh.fam.Name(), s.Labels(), cs.bounds, bounds)
	}
	*series = cs.c
	*key = C.uint64_t(metricHandles.add(metricHandle{fam: fh.fam, series: s}))
	return nil
}

// labelsFromC copies STRING parameters (checked by the caller) into labels.
// A name given twice keeps its last value, as in Triton, which collects the
// labels into a std::map.
func labelsFromC(labels **C.TRITONSERVER_Parameter, n C.uint64_t) []metrics.Label {
	if n == 0 {
		return nil
	}
	out := make([]metrics.Label, 0, int(n))
	for _, p := range unsafe.Slice(labels, int(n)) {
		l := metrics.Label{Name: C.GoString(p.name), Value: C.GoString(p.s)}
		if i := slices.IndexFunc(out, func(o metrics.Label) bool { return o.Name == l.Name }); i >= 0 {
			out[i].Value = l.Value
			continue
		}
		out = append(out, l)
	}
	return out
}

//export thostMetricDelete
func thostMetricDelete(key C.uint64_t) (ret *C.TRITONSERVER_Error) {
	defer recoverError("TRITONSERVER_MetricDelete", &ret)
	h, ok := metricHandles.take(uint64(key))
	if !ok {
		return cErrorf(core.CodeInternal, "TRITONSERVER_MetricDelete: the metric is no longer known to the server")
	}
	if h.fam.Remove(h.series) {
		// Remove waited for any gathering in progress; nothing reads it now.
		C.thost_series_free(h.series.Collector().(*cSeries).c)
	}
	return nil
}
