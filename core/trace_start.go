package core

import (
	"slices"
	"sync"
)

// TraceLevel is what a trace records, as TRITONSERVER_InferenceTraceLevel
// numbers it (a bit set).
type TraceLevel uint32

// Trace levels.
const (
	TraceLevelDisabled   TraceLevel = 0
	TraceLevelTimestamps TraceLevel = 0x4
	TraceLevelTensors    TraceLevel = 0x8
)

// Tensor activities of a trace at the TENSORS level, as
// TRITONSERVER_InferenceTraceActivity names them.
const (
	TraceTensorQueueInput    = "TENSOR_QUEUE_INPUT"
	TraceTensorBackendOutput = "TENSOR_BACKEND_OUTPUT"
)

// TraceContext is the W3C trace context a client sent with a request (the
// traceparent and tracestate headers, or gRPC metadata of those names), so
// that a tracer can continue the client's trace. The zero value is none.
type TraceContext struct {
	Parent string // traceparent
	State  string // tracestate
}

// TraceStart describes a request the server is about to trace or not.
type TraceStart struct {
	Model     string
	Version   int64
	RequestID string
	// Parent is the trace of the request this one is part of (an
	// ensemble's step, a backend's request to another model,
	// Submission.ParentTrace); nil for a client's request.
	Parent *Trace
	// Context is the client's trace context (Submission.TraceContext).
	Context TraceContext
	// Trace, when not nil, is the trace the submitter brought for the
	// request (the child a backend spawned from the trace of the request
	// it serves): NewTrace records into it rather than making another.
	Trace *Trace
}

// TraceStarter is a Tracer that decides how each request is traced: when
// the server's Tracer implements it, StartTrace is called in place of
// Sample, for every request, steps included. It returns the request's
// trace (made with NewTrace), or nil to leave the request untraced. It is
// called on the goroutine that submits the request and must not block.
// The trace is handed to Finish like any other.
type TraceStarter interface {
	Tracer
	StartTrace(s TraceStart) *Trace
}

// NewTrace returns a new trace of the request s describes, at level, with
// a fresh id and, when s has a parent trace, that trace's id as ParentID;
// or, when s brings a trace, that trace at level.
func NewTrace(s TraceStart, level TraceLevel) *Trace {
	t := s.Trace
	if t == nil {
		t = &Trace{ID: traceIDs.Add(1), Model: s.Model, Version: s.Version, RequestID: s.RequestID}
		if s.Parent != nil {
			t.ParentID = s.Parent.ID
		}
	}
	t.ext = &traceExt{level: level}
	return t
}

// traceExt is what a trace carries beyond its identity and activities.
// A trace made by the server for a Tracer that only samples records
// timestamps (ext nil).
type traceExt struct {
	level TraceLevel
	data  any // the tracer's (SetData)

	mu      sync.Mutex
	tensors []TraceTensor
}

// TraceTensor is one tensor a trace at the TENSORS level recorded: an
// input as the request entered its queue, or an output as a response
// carried it. Data is a copy, in the tensor's layout (BYTES elements
// length-prefixed).
type TraceTensor struct {
	Activity string
	Name     string
	DataType DataType
	Shape    []int64
	Data     []byte
}

// Level returns what the trace records: TIMESTAMPS, TENSORS or both.
func (t *Trace) Level() TraceLevel {
	if t.ext == nil {
		return TraceLevelTimestamps
	}
	return t.ext.level
}

// Data returns what the tracer attached with SetData (nil when nothing).
func (t *Trace) Data() any {
	if t.ext == nil {
		return nil
	}
	return t.ext.data
}

// SetData attaches data of the tracer to a trace made with NewTrace (its
// span, its settings); the server never looks at it. It must be called
// before the trace is returned from StartTrace.
func (t *Trace) SetData(v any) {
	if t.ext != nil {
		t.ext.data = v
	}
}

// ReportTensor records a copy of a tensor when the trace's level includes
// TENSORS, and nothing otherwise.
func (t *Trace) ReportTensor(activity, name string, dt DataType, shape []int64, data [][]byte) {
	if t.Level()&TraceLevelTensors == 0 {
		return
	}
	tt := TraceTensor{Activity: activity, Name: name, DataType: dt, Shape: slices.Clone(shape), Data: slices.Concat(data...)}
	t.ext.mu.Lock()
	t.ext.tensors = append(t.ext.tensors, tt)
	t.ext.mu.Unlock()
}

// Tensors returns the tensors recorded so far, in the order reported.
func (t *Trace) Tensors() []TraceTensor {
	if t.ext == nil {
		return nil
	}
	t.ext.mu.Lock()
	defer t.ext.mu.Unlock()
	return slices.Clone(t.ext.tensors)
}

// startTrace returns the trace of a request of m that req describes, from
// tracer: the TraceStarter's choice, or, for a Tracer that only samples, a
// child of the request's parent trace (a step of a traced request is
// traced) or a trace when Sample says so. nil: not traced.
func startTrace(tracer Tracer, m *Model, req *Submission) *Trace {
	s := TraceStart{Model: m.name, Version: m.version, RequestID: req.ID, Parent: req.ParentTrace, Context: req.TraceContext}
	if ts, ok := tracer.(TraceStarter); ok {
		return ts.StartTrace(s)
	}
	if req.ParentTrace != nil || tracer.Sample(m.name, m.version) {
		t := newTrace(m, req.ID, tracer.Finish)
		if req.ParentTrace != nil {
			t.ParentID = req.ParentTrace.ID
		}
		return t
	}
	return nil
}

// traceInputs records the request's inputs as it enters its queue, when
// its trace records tensors.
func (r *Request) traceInputs() {
	if r.trace.Level()&TraceLevelTensors == 0 {
		return
	}
	for i := range r.inputs {
		in := &r.inputs[i]
		r.trace.ReportTensor(TraceTensorQueueInput, in.Name, in.DataType, in.Shape, in.Buffers)
	}
}

// traceOutputs records a response's outputs, when the request's trace
// records tensors.
func (p *Responder) traceOutputs(resp *Response) {
	t := p.trace
	if t == nil || resp == nil || t.Level()&TraceLevelTensors == 0 {
		return
	}
	for _, o := range resp.Outputs {
		t.ReportTensor(TraceTensorBackendOutput, o.Name, o.DataType, o.Shape, [][]byte{o.Data})
	}
}
