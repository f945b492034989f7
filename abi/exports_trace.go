package abi

// This file holds the Go functions the C side of the trace API calls
// (//export): making and spawning traces, their contexts and activities;
// see exports_request.go for why no C is defined here.

/*
#include "inprocess.h"
*/
import "C"

import "github.com/tritonhost/tritonhost/core"

//export thostTraceNew
func thostTraceNew(t *C.struct_thost_trace, parent C.uint64_t) {
	defer recoverLog("TRITONSERVER_InferenceTraceNew")
	addTraceRecord(t, core.NewOwnTrace(uint64(parent)))
}

//export thostTraceForget
func thostTraceForget(key C.uint64_t) {
	defer recoverLog("TRITONSERVER_InferenceTraceDelete")
	if rec, ok := traceRecords.byKey.take(uint64(key)); ok {
		traceRecords.byTrace.Delete(rec.tr)
	}
}

//export thostTraceSpawn
func thostTraceSpawn(parent, child *C.struct_thost_trace) (ret *C.TRITONSERVER_Error) {
	const fn = "TRITONSERVER_InferenceTraceSpawnChildTrace"
	defer recoverError(fn, &ret)
	tr, cerr := coreTrace(parent, fn)
	if cerr != nil {
		return cerr
	}
	// The child takes the callbacks of the trace the parent's request was
	// submitted with, when a caller made it.
	owner := parent
	if !parent.standalone {
		owner = nil
		if v, ok := traceRecords.byTrace.Load(tr); ok {
			owner = v.(*traceRecord).c
		}
	}
	if owner != nil {
		C.thost_trace_inherit(child, owner)
	}
	addTraceRecord(child, tr.SpawnChild())
	return nil
}

//export thostTraceSetContext
func thostTraceSetContext(t *C.struct_thost_trace, context *C.char) (ret *C.TRITONSERVER_Error) {
	const fn = "TRITONSERVER_InferenceTraceSetContext"
	defer recoverError(fn, &ret)
	tr, cerr := coreTrace(t, fn)
	if cerr != nil {
		return cerr
	}
	tr.SetContext(C.GoString(context))
	return nil
}

//export thostTraceActivity
func thostTraceActivity(t *C.struct_thost_trace, timestamp C.uint64_t, name *C.char) (ret *C.TRITONSERVER_Error) {
	const fn = "TRITONSERVER_InferenceTraceReportActivity"
	defer recoverError(fn, &ret)
	tr, cerr := coreTrace(t, fn)
	if cerr != nil {
		return cerr
	}
	tr.Report(C.GoString(name), uint64(timestamp))
	return nil
}
