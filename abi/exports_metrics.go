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

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/metrics"
)

var errSeriesAlloc = errors.New("out of memory for the series")

// hostOrError returns the Host of a C server, or an error for the backend
// calling fn once it is closed.
func hostOrError(host *C.struct_thost_host, fn string) (*Host, *C.TRITONSERVER_Error) {
	if h := hostOf(host); h != nil {
		return h, nil
	}
	return nil, cErrorf(core.CodeUnavailable, "%s: the server has stopped", fn)
}

//export thostMetricFamilyNew
func thostMetricFamilyNew(host *C.struct_thost_host, kind C.int, name, description *C.char, key *C.uint64_t) (ret *C.TRITONSERVER_Error) {
	const fn = "TRITONSERVER_MetricFamilyNew"
	defer recoverError(fn, &ret)
	h, cerr := hostOrError(host, fn)
	if cerr != nil {
		return cerr
	}
	f, err := h.metrics.Register(C.GoString(name), C.GoString(description), metrics.Kind(kind))
	if err != nil {
		return cErrorf(core.CodeInvalidArg, "%s: %v", fn, err)
	}
	*key = C.uint64_t(h.families.add(familyHandle{fam: f}))
	return nil
}

//export thostMetricFamilyDelete
func thostMetricFamilyDelete(host *C.struct_thost_host, key C.uint64_t) {
	defer recoverLog("TRITONSERVER_MetricFamilyDelete")
	h := hostOf(host)
	if h == nil {
		return
	}
	if fh, ok := h.families.take(uint64(key)); ok {
		h.metrics.Unregister(fh.fam)
	}
}

//export thostMetricNew
func thostMetricNew(host *C.struct_thost_host, famKey C.uint64_t, labels **C.TRITONSERVER_Parameter, nlabels C.uint64_t,
	buckets *C.double, nbuckets C.uint64_t, key *C.uint64_t, series **C.struct_thost_series) (ret *C.TRITONSERVER_Error) {
	const fn = "TRITONSERVER_MetricNew"
	defer recoverError(fn, &ret)
	h, cerr := hostOrError(host, fn)
	if cerr != nil {
		return cerr
	}
	fh, ok := h.families.get(uint64(famKey))
	if !ok {
		return cErrorf(core.CodeInternal, "%s: the metric family is no longer known to the server", fn)
	}
	kind := fh.fam.Kind()
	var bounds []float64 // a histogram's buckets, in C memory
	if kind == metrics.KindHistogram {
		bounds = unsafe.Slice((*float64)(unsafe.Pointer(buckets)), int(nbuckets))
	}
	s, err := fh.fam.Add(labelsFromC(labels, nlabels), func() (metrics.Collector, error) {
		c := C.thost_series_new(host, C.int(kind), (*C.double)(unsafe.SliceData(bounds)), C.uint64_t(len(bounds)))
		if c == nil {
			return nil, errSeriesAlloc
		}
		return &cSeries{c: c, kind: kind, bounds: slices.Clone(bounds)}, nil
	})
	switch {
	case errors.Is(err, errSeriesAlloc):
		return cErrorf(core.CodeInternal, "%s: %v", fn, err)
	case err != nil:
		return cErrorf(core.CodeInvalidArg, "%s: %v", fn, err)
	}
	cs := s.Collector().(*cSeries)
	if !slices.Equal(cs.bounds, bounds) {
		// Triton (prometheus-cpp) also keeps the first metric's buckets.
		h.log.Warnf("TRITONSERVER_MetricNewWithArgs: histogram %s%v already exists with buckets %v: "+
			"the new metric shares it, not buckets %v", fh.fam.Name(), s.Labels(), cs.bounds, bounds)
	}
	*series = cs.c
	*key = C.uint64_t(h.metricHandles.add(metricHandle{fam: fh.fam, series: s}))
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
func thostMetricDelete(host *C.struct_thost_host, key C.uint64_t) (ret *C.TRITONSERVER_Error) {
	const fn = "TRITONSERVER_MetricDelete"
	defer recoverError(fn, &ret)
	h, cerr := hostOrError(host, fn)
	if cerr != nil {
		return cerr
	}
	mh, ok := h.metricHandles.take(uint64(key))
	if !ok {
		return cErrorf(core.CodeInternal, "%s: the metric is no longer known to the server", fn)
	}
	if mh.fam.Remove(mh.series) {
		// Remove waited for any gathering in progress; nothing reads it now.
		C.thost_series_free(mh.series.Collector().(*cSeries).c)
	}
	return nil
}
