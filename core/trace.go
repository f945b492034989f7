package core

import (
	"sync"
	"sync/atomic"
)

// Tracer decides which requests are traced and receives their traces. Its
// methods may be called from any goroutine.
type Tracer interface {
	// Sample reports whether a request to the model should be traced.
	Sample(model string, version int64) bool
	// Finish receives a trace once its request has finished (final
	// response delivered and released by the backend).
	Finish(t *Trace)
}

// Trace activity names the server records, as TRITONSERVER_InferenceTraceActivity
// names them. Backends add their own names (custom activities).
const (
	TraceRequestStart       = "REQUEST_START"
	TraceQueueStart         = "QUEUE_START"
	TraceComputeStart       = "COMPUTE_START"
	TraceComputeInputEnd    = "COMPUTE_INPUT_END"
	TraceComputeOutputStart = "COMPUTE_OUTPUT_START"
	TraceComputeEnd         = "COMPUTE_END"
	TraceRequestEnd         = "REQUEST_END"
)

// TraceActivity is one timestamped event of a trace; Timestamp is Nanotime.
type TraceActivity struct {
	Name      string
	Timestamp uint64
}

// Trace records the life of one request. Safe for concurrent use. Model,
// Version and RequestID are set when the trace's request is submitted, and
// read-only from then on.
type Trace struct {
	ID        uint64
	ParentID  uint64 // 0: none
	Model     string
	Version   int64
	RequestID string

	// finish receives the trace once its request has finished (nil:
	// nothing does): the Tracer's Finish for a trace the Tracer sampled,
	// inherited by the traces spawned from it.
	finish func(*Trace)

	mu         sync.Mutex
	activities []TraceActivity
	context    string
	spawnedOf  *Trace    // the trace SpawnChild made it from (nil: none)
	ext        *traceExt // level, tracer data and tensors (trace_start.go); nil: timestamps only
}

// traceIDs numbers traces from 1, unique in the process: 0 means "no
// parent", as in Triton.
var traceIDs atomic.Uint64

func newTrace(m *Model, requestID string, finish func(*Trace)) *Trace {
	return &Trace{ID: traceIDs.Add(1), Model: m.name, Version: m.version, RequestID: requestID, finish: finish}
}

// Report records an activity.
func (t *Trace) Report(name string, timestamp uint64) {
	t.mu.Lock()
	t.activities = append(t.activities, TraceActivity{Name: name, Timestamp: timestamp})
	t.mu.Unlock()
}

// Activities returns the activities recorded so far, in the order reported.
func (t *Trace) Activities() []TraceActivity {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]TraceActivity(nil), t.activities...)
}

// bind gives a trace its request, when the request is submitted with it.
func (t *Trace) bind(m *Model, requestID string) {
	t.Model, t.Version, t.RequestID = m.name, m.version, requestID
}

// end hands the trace of a finished request to whoever receives it.
func (t *Trace) end() {
	if t.finish != nil {
		t.finish(t)
	}
}

// Trace returns the request's trace, or nil when it is not traced.
func (r *Request) Trace() *Trace { return r.trace }

// traceEvent records a server activity when the request is traced.
func (r *Request) traceEvent(name string) {
	if r.trace != nil {
		r.trace.Report(name, Nanotime())
	}
}
