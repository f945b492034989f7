package core_test

import (
	"testing"

	"tritonhost/core"
	"tritonhost/core/coretest"
)

// The models of the validation tests: "v" batches and has a BYTES input
// and an optional one; "w" takes any 2-D INT64 tensor; "s" is a sequence
// model whose START input the sequence batcher provides.
var validationModels = []coretest.ModelDir{
	{Name: "v", Config: `backend: "go"
max_batch_size: 4
input [ { name: "IN" data_type: TYPE_INT32 dims: [ 2 ] },
        { name: "TEXT" data_type: TYPE_STRING dims: [ -1 ] },
        { name: "OPT" data_type: TYPE_FP32 dims: [ 1 ] optional: true } ]
output [ { name: "OUT" data_type: TYPE_INT32 dims: [ 2 ] }, { name: "OUT2" data_type: TYPE_INT32 dims: [ 2 ] } ]`},
	{Name: "w", Config: `backend: "go"
input [ { name: "IN" data_type: TYPE_INT64 dims: [ -1, -1 ] } ]
output [ { name: "OUT" data_type: TYPE_INT64 dims: [ -1, -1 ] } ]`},
	{Name: "s", Config: `backend: "go"
input [ { name: "IN" data_type: TYPE_INT32 dims: [ 1 ] } ]
output [ { name: "OUT" data_type: TYPE_INT32 dims: [ 1 ] } ]
sequence_batching { control_input [ { name: "START" control [ { kind: CONTROL_SEQUENCE_START int32_false_true: [ 0, 1 ] } ] } ] }`},
}

// TestValidationRefusesMalformedRequests submits requests with one thing
// wrong each: Infer refuses them at once with INVALID_ARG (or NOT_FOUND for
// an unknown model), naming the model and the input or output, and neither
// the backend nor the response function ever sees them. Well-formed
// requests around the edges of the rules go through.
func TestValidationRefusesMalformedRequests(t *testing.T) {
	t.Parallel()
	p := coretest.NewProvider()
	srv := coretest.Start(t, p, validationModels...)
	ints := func(name string, shape ...int64) core.Input { return coretest.Int32Input(name, shape) }
	text := func(shape []int64, elems ...string) core.Input {
		var bs [][]byte
		for _, e := range elems {
			bs = append(bs, []byte(e))
		}
		return core.NewInput("TEXT", core.TypeBytes, shape, core.EncodeBytes(bs...))
	}
	raw := func(name string, dt core.DataType, shape []int64, buffers ...[]byte) core.Input {
		return core.Input{Name: name, DataType: dt, Shape: shape, Buffers: buffers}
	}
	v := func(inputs ...core.Input) *core.InferenceRequest { return coretest.Request("v", "", inputs...) }
	withOutputs := func(req *core.InferenceRequest, outputs ...string) *core.InferenceRequest {
		req.Outputs = outputs
		return req
	}
	straddling := core.EncodeBytes([]byte("ab"), []byte("cde"))
	tests := []struct {
		name  string
		req   *core.InferenceRequest
		code  core.Code // 0 (CodeUnknown): the request is valid
		parts []string  // what the error names besides the model
	}{
		{"required inputs only", v(ints("IN", 1, 2), text([]int64{1, 2}, "a", "b")), 0, nil},
		{"with the optional input", v(ints("IN", 1, 2), text([]int64{1, 1}, "a"), raw("OPT", core.TypeFP32, []int64{1, 1}, make([]byte, 4))), 0, nil},
		{"a batch of max_batch_size", v(ints("IN", 4, 2), text([]int64{4, 0})), 0, nil},
		{"BYTES elements may straddle buffers", v(ints("IN", 1, 2), raw("TEXT", core.TypeBytes, []int64{1, 2}, straddling[:2], straddling[2:7], straddling[7:])), 0, nil},
		{"contents split over buffers", v(raw("IN", core.TypeInt32, []int64{1, 2}, make([]byte, 3), make([]byte, 5)), text([]int64{1, 0})), 0, nil},
		{"a requested output", withOutputs(v(ints("IN", 1, 2), text([]int64{1, 0})), "OUT2"), 0, nil},

		{"an unknown input", v(ints("IN", 1, 2), text([]int64{1, 0}), ints("NOPE", 1, 1)), core.CodeInvalidArg, []string{`unexpected input "NOPE"`, `"IN", "OPT", "TEXT"`}},
		{"an input given twice", v(ints("IN", 1, 2), text([]int64{1, 0}), ints("IN", 1, 2)), core.CodeInvalidArg, []string{`input "IN" is given more than once`}},
		{"the wrong data type", v(raw("IN", core.TypeFP32, []int64{1, 2}, make([]byte, 8)), text([]int64{1, 0})), core.CodeInvalidArg, []string{`input "IN"`, "FP32", "INT32"}},
		{"a dimension too many", v(ints("IN", 1, 2, 1), text([]int64{1, 0})), core.CodeInvalidArg, []string{`input "IN"`, "[1,2,1]", "dims [2] after the batch dimension"}},
		{"a wrong dimension", v(ints("IN", 1, 3), text([]int64{1, 0})), core.CodeInvalidArg, []string{`input "IN"`, "[1,3]"}},
		{"a negative dimension", v(ints("IN", 1, 2), text([]int64{1, -1})), core.CodeInvalidArg, []string{`input "TEXT"`, "[1,-1]"}},
		{"no batch dimension", v(ints("IN"), text([]int64{1, 0})), core.CodeInvalidArg, []string{`input "IN"`, "no batch dimension"}},
		{"a batch of zero", v(ints("IN", 0, 2), text([]int64{0, 0})), core.CodeInvalidArg, []string{`input "IN"`, "batch size 0"}},
		{"a batch above max_batch_size", v(ints("IN", 5, 2), text([]int64{5, 0})), core.CodeInvalidArg, []string{`input "IN"`, "batch size 5", "1..4"}},
		{"inputs of different batch sizes", v(ints("IN", 2, 2), text([]int64{1, 0})), core.CodeInvalidArg, []string{`input "TEXT"`, "batch size 1 differs", "2"}},
		{"too few bytes", v(raw("IN", core.TypeInt32, []int64{1, 2}, make([]byte, 4)), text([]int64{1, 0})), core.CodeInvalidArg, []string{`input "IN"`, "got 4 bytes", "needs 8"}},
		{"too many bytes", v(raw("IN", core.TypeInt32, []int64{1, 2}, make([]byte, 12)), text([]int64{1, 0})), core.CodeInvalidArg, []string{`input "IN"`, "got 12 bytes"}},
		{"BYTES cut inside an element", v(ints("IN", 1, 2), raw("TEXT", core.TypeBytes, []int64{1, 1}, []byte{5, 0, 0, 0, 'a'})), core.CodeInvalidArg, []string{`input "TEXT"`, "length-prefixed"}},
		{"BYTES cut inside a length", v(ints("IN", 1, 2), raw("TEXT", core.TypeBytes, []int64{1, 1}, []byte{1, 0})), core.CodeInvalidArg, []string{`input "TEXT"`, "length-prefixed"}},
		{"fewer BYTES elements than the shape", v(ints("IN", 1, 2), text([]int64{1, 3}, "a", "b")), core.CodeInvalidArg, []string{`input "TEXT"`, "2 element(s)", "needs 3"}},
		{"a missing input", v(ints("IN", 1, 2)), core.CodeInvalidArg, []string{`missing required input(s) "TEXT"`}},
		{"an unknown requested output", withOutputs(v(ints("IN", 1, 2), text([]int64{1, 0})), "NOPE"), core.CodeInvalidArg, []string{`requested output "NOPE"`, `"OUT", "OUT2"`}},
		{"an output requested twice", withOutputs(v(ints("IN", 1, 2), text([]int64{1, 0})), "OUT", "OUT"), core.CodeInvalidArg, []string{`output "OUT" is requested more than once`}},
		{"an empty tensor of a huge shape", coretest.Request("w", "", raw("IN", core.TypeInt64, []int64{1 << 62, 0})), 0, nil},
		{"more elements than 64 bits count", coretest.Request("w", "", raw("IN", core.TypeInt64, []int64{1 << 62, 4})), core.CodeInvalidArg, []string{`input "IN"`, "[4611686018427387904,4]"}},
		{"more bytes than 64 bits count", coretest.Request("w", "", raw("IN", core.TypeInt64, []int64{1 << 61, 1})), core.CodeInvalidArg, []string{`input "IN"`, "[2305843009213693952,1]"}},
		{"a sequence control input from the client", coretest.Request("s", "", ints("IN", 1), ints("START", 1)), core.CodeInvalidArg, []string{`model "s"`, `input "START"`, "sequence batcher"}},
		{"an unknown model", coretest.Request("nope", "", ints("IN", 1, 2)), core.CodeNotFound, []string{`model "nope"`}},
		{"an unknown version", &core.InferenceRequest{Model: "v", Version: 7, Inputs: []core.Input{ints("IN", 1, 2), text([]int64{1, 0})}}, core.CodeNotFound, []string{"version 7"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.req.ID = tc.name
			reply := coretest.NewCollector()
			err := srv.Infer(t.Context(), tc.req, reply.Receive)
			if tc.code == core.CodeUnknown {
				if err != nil {
					t.Fatalf("Infer: %v", err)
				}
				if err := reply.Err(t); err != nil {
					t.Errorf("response: %v", err)
				}
				return
			}
			wantError(t, "Infer", err, tc.code, append(tc.parts, `model "`+tc.req.Model+`"`)...)
			if reply.Finished() || len(reply.Snapshot().Responses) > 0 || p.Executed(tc.name) {
				t.Error("a refused request reached the response function or the backend")
			}
		})
	}
}

// TestInferNeedsAResponseFunction: without one Infer refuses at once.
func TestInferNeedsAResponseFunction(t *testing.T) {
	t.Parallel()
	srv, _ := serveModel(t, vectorConfig(), coretest.Echo())
	wantError(t, "Infer without a function", srv.Infer(t.Context(), vector("r", 1), nil), core.CodeInvalidArg, "response function")
	if n := srv.LiveRequests(); n != 0 {
		t.Errorf("LiveRequests = %d after a refused request", n)
	}
}
