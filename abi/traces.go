package abi

/*
#include "inprocess.h"
*/
import "C"

import (
	"encoding/json"
	"sort"
	"strconv"
	"sync"

	"github.com/tritonhost/tritonhost/core"
)

// traceRecord is the Go side of a trace a caller owns (trace.c): the
// core.Trace a request traced with it records into, and the C object with
// its callbacks.
type traceRecord struct {
	c  *C.struct_thost_trace
	tr *core.Trace
}

// traceRecords holds the records of every trace callers own, in the whole
// process (a trace is made before it names a server, as in Triton): by key,
// for C, and by core.Trace, for a child spawned from the trace of a request
// a caller's trace follows.
var traceRecords struct {
	byKey   table[*traceRecord]
	byTrace sync.Map // *core.Trace -> *traceRecord
}

func addTraceRecord(c *C.struct_thost_trace, tr *core.Trace) {
	rec := &traceRecord{c: c, tr: tr}
	c.key = C.uint64_t(traceRecords.byKey.add(rec))
	c.id = C.uint64_t(tr.ID)
	c.parent_id = C.uint64_t(tr.ParentID)
	traceRecords.byTrace.Store(tr, rec)
}

func traceRecordOf(c *C.struct_thost_trace) (*traceRecord, bool) {
	return traceRecords.byKey.get(uint64(c.key))
}

// LiveTraces counts the traces callers own that are not deleted, in the
// whole process, for leak checks.
func LiveTraces() int { return traceRecords.byKey.len() }

// coreTrace returns the core.Trace behind a C trace: the traced request's
// for the trace of a request a backend serves, the record's otherwise.
func coreTrace(c *C.struct_thost_trace, fn string) (*core.Trace, *C.TRITONSERVER_Error) {
	if !c.standalone {
		st, cerr := requestOf(c.ctx, fn)
		if cerr != nil {
			return nil, cerr
		}
		if st.req.Trace() == nil {
			return nil, cErrorf(core.CodeNotFound, "%s: the request is not traced", fn)
		}
		return st.req.Trace(), nil
	}
	rec, ok := traceRecordOf(c)
	if !ok {
		return nil, cErrorf(core.CodeNotFound, "%s: the trace is gone", fn)
	}
	return rec.tr, nil
}

// activityCodes are the TRITONSERVER_InferenceTraceActivity values of the
// activities the server records.
var activityCodes = map[string]C.TRITONSERVER_InferenceTraceActivity{
	core.TraceRequestStart:       C.TRITONSERVER_TRACE_REQUEST_START,
	core.TraceQueueStart:         C.TRITONSERVER_TRACE_QUEUE_START,
	core.TraceComputeStart:       C.TRITONSERVER_TRACE_COMPUTE_START,
	core.TraceComputeInputEnd:    C.TRITONSERVER_TRACE_COMPUTE_INPUT_END,
	core.TraceComputeOutputStart: C.TRITONSERVER_TRACE_COMPUTE_OUTPUT_START,
	core.TraceComputeEnd:         C.TRITONSERVER_TRACE_COMPUTE_END,
	core.TraceRequestEnd:         C.TRITONSERVER_TRACE_REQUEST_END,
}

// endTrace hands a trace given to ServerInferAsync back, once its request
// has finished, on the call's goroutine: a caller's trace reports the
// request's input tensors and its timeline, then goes back through its
// release function; a child of a trace the server made (whose end the
// server's Tracer received) is freed. creq is the request, still in flight.
func endTrace(t *C.struct_thost_trace, creq *C.struct_thost_infer_request) {
	if t.release_fn != nil {
		if rec, ok := traceRecordOf(t); ok {
			C.thost_trace_inputs(t, creq)
			reportTimeline(rec)
		}
	}
	C.thost_trace_return(t)
}

// reportTimeline calls the activity function of a caller's trace for each
// activity its request recorded, in the order of their timestamps. A custom activity (one the server does
// not name) is reported as TRITONSERVER_TRACE_CUSTOM_ACTIVITY, its name
// entered in the trace's context, a JSON object, under its timestamp, as
// Triton does.
func reportTimeline(rec *traceRecord) {
	if rec.c.activity_fn == nil || rec.c.level&C.TRITONSERVER_TRACE_LEVEL_TIMESTAMPS == 0 {
		return
	}
	acts := rec.tr.Activities() // in the order reported: a backend's compute times come late
	sort.SliceStable(acts, func(i, j int) bool { return acts[i].Timestamp < acts[j].Timestamp })
	for _, a := range acts {
		code, named := activityCodes[a.Name]
		if !named {
			code = C.TRITONSERVER_TRACE_CUSTOM_ACTIVITY
			ctx := withActivityName(rec.tr.Context(), a.Timestamp, a.Name)
			rec.tr.SetContext(ctx)
			C.thost_trace_store_context(rec.c, cstr(ctx), C.size_t(len(ctx)))
		}
		C.thost_trace_activity(rec.c, code, C.uint64_t(a.Timestamp))
	}
}

// withActivityName adds "<timestamp>": "<name>" to a context holding a JSON
// object (a context that is not one is replaced).
func withActivityName(context string, timestamp uint64, name string) string {
	m := map[string]any{}
	if context != "" {
		if err := json.Unmarshal([]byte(context), &m); err != nil {
			m = map[string]any{}
		}
	}
	m[strconv.FormatUint(timestamp, 10)] = name
	b, err := json.Marshal(m)
	if err != nil {
		return context
	}
	return string(b)
}
