package core

import "time"

// CorrelationID identifies the sequence a request belongs to; Triton allows
// an unsigned integer or a string. The zero value means "none".
type CorrelationID struct {
	Uint     uint64
	String   string
	IsString bool
}

// Request flags, as TRITONSERVER_RequestFlag.
const (
	RequestFlagSequenceStart uint32 = 1
	RequestFlagSequenceEnd   uint32 = 2
)

// Submission is what a client submits to Server.Infer (or Server.Submit):
// the model, the inputs and the options of one inference, as Triton's
// TRITONSERVER_InferenceRequest carries them. Once validated and accepted it
// becomes a Request, which is what schedulers and backends see.
type Submission struct {
	Model         string
	Version       int64 // 0 (or negative) selects the newest ready version
	ID            string
	CorrelationID CorrelationID
	Flags         uint32
	Priority      uint64
	Timeout       time.Duration // 0: no timeout
	Inputs        []Input
	// Outputs names the outputs the client wants; empty means all of them.
	Outputs    []string
	Parameters []Parameter
	// Origin is the submitter's, opaque to the server; the backend layer
	// that runs the request finds it with Request.Origin (abi keeps there
	// the response allocator of a backend that submitted the request, so
	// the serving backend writes outputs where the submitter asked).
	Origin any
	// Finished, if set, is called once when the request is finished: its
	// final response was delivered and the backend released it for good.
	// From then on the server holds no reference to the inputs' buffers, so
	// memory lent to the request (a shared-memory region, a calling
	// backend's input buffers) may be taken back. It runs on the goroutine
	// or backend thread that finished the request, possibly while the
	// request's Responder is locked: it must return at once and not call
	// back into the request. It is not called when Infer or Submit returns
	// an error: the request was never accepted.
	Finished func()
	// ParentTrace, when set, is the trace of the request this one is part
	// of (an ensemble's step, a backend's request to another model): the
	// request is traced as its child (see TraceStarter).
	ParentTrace *Trace
	// TraceContext is the W3C trace context the client sent, for a tracer
	// that continues the client's trace (zero: none).
	TraceContext TraceContext
	// FreesResponses says that the ResponseFunc frees every response it
	// is handed (Response.Free) once it no longer reads the outputs. A
	// backend layer may then lend the buffers the backend wrote its outputs
	// to, rather than copy them into Go memory; the lent memory stays
	// valid until Free. Without it, responses hold Go memory only.
	FreesResponses bool
	// SchedulerKey is the submitter's, for the scheduler of the model
	// (Request.SchedulerKey), opaque to the server: the worker of an
	// isolated backend marks the batch each request belongs to.
	SchedulerKey any
	// TensorLimit, when its Bytes is set, bounds this request's inputs and
	// outputs in place of the server's Options.MaxTensorBytes: the bound
	// of the in-process API, whose requests a frontend's message limit
	// does not concern.
	TensorLimit TensorLimit
	// Inline lets the scheduler run the request on the submitting
	// goroutine, inside Submit, when one of the version's instances is idle
	// and nothing is queued ahead of it: the request then skips two
	// hand-offs between goroutines (to the instance's and back). Submit
	// returns once the backend's Execute has. Schedulers that cannot keep
	// their rules so (a dynamic batcher that waits to fill a batch, the
	// sequence batcher) queue the request as usual. Set it only on a
	// goroutine that holds no lock and may wait as long as an execution
	// takes, and that need not answer anything else meanwhile: not a
	// backend thread or a response function, nor a frontend's request
	// handler that must answer its client when the server gives up its
	// requests (an Execute that does not return keeps the submitter).
	Inline bool
	// InputBuffer, when set, is the buffer (from the model's
	// Model.InputBuffer) the request was received into, which its inputs'
	// data may lie in: a backend layer whose memory it is may pass on
	// those that do where they lie (it checks each). The submitter keeps
	// it and releases it, after Finished (or when Submit or Infer returned
	// an error).
	InputBuffer InputBuffer
	// Trace, if set, traces the request, whatever the server's Tracer
	// samples: the server gives it the request's model, version and id,
	// and records the request's activities in it. A trace is for one
	// request at a time. Its end goes where the trace says (see
	// Trace.SpawnChild); a trace from NewTrace goes nowhere, and its
	// creator reads it once Finished is called.
	Trace *Trace
}

// ParameterType is the type of a Parameter's value, numbered as
// TRITONSERVER_ParameterType.
type ParameterType int

// Parameter value types.
const (
	ParamString ParameterType = 0
	ParamInt    ParameterType = 1
	ParamBool   ParameterType = 2
	ParamDouble ParameterType = 3
	ParamBytes  ParameterType = 4
)

// Parameter is a named request or response parameter. Only the field matching
// Type is meaningful.
type Parameter struct {
	Name   string
	Type   ParameterType
	String string
	Int    int64
	Bool   bool
	Double float64
	Bytes  []byte
}

// StringParam, IntParam, BoolParam and DoubleParam build parameters.
func StringParam(name, v string) Parameter {
	return Parameter{Name: name, Type: ParamString, String: v}
}

// IntParam builds an integer parameter.
func IntParam(name string, v int64) Parameter { return Parameter{Name: name, Type: ParamInt, Int: v} }

// BoolParam builds a boolean parameter.
func BoolParam(name string, v bool) Parameter { return Parameter{Name: name, Type: ParamBool, Bool: v} }

// DoubleParam builds a floating-point parameter.
func DoubleParam(name string, v float64) Parameter {
	return Parameter{Name: name, Type: ParamDouble, Double: v}
}

// TensorLimit is a bound on the size of a request's tensors, in bytes, and
// the setting an operator changes it with, which errors name.
type TensorLimit struct {
	Bytes   int64
	Setting string
}
