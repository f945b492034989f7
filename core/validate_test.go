package core_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/coretest"
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
// an unknown model) and exactly Triton's message ("{id}" stands for the
// request's id), and neither the backend nor the response function ever
// sees them. Well-formed requests around the edges of the rules go through.
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
	v := func(inputs ...core.Input) *core.Submission { return coretest.Request("v", "", inputs...) }
	withOutputs := func(req *core.Submission, outputs ...string) *core.Submission {
		req.Outputs = outputs
		return req
	}
	straddling := core.EncodeBytes([]byte("ab"), []byte("cde"))
	const note = " NOTE: Setting a non-zero max_batch_size in the model config requires a batch dimension to be prepended to each input shape. If you want to specify the full shape including the batch dim in your input dims config, try setting max_batch_size to zero. See the model configuration docs for more info on max_batch_size."
	tests := []struct {
		name string
		req  *core.Submission
		code core.Code // 0 (CodeUnknown): the request is valid
		want string    // the whole message; "{id}" is the request's id
	}{
		{"required inputs only", v(ints("IN", 1, 2), text([]int64{1, 2}, "a", "b")), 0, ""},
		{"with the optional input", v(ints("IN", 1, 2), text([]int64{1, 1}, "a"), raw("OPT", core.TypeFP32, []int64{1, 1}, make([]byte, 4))), 0, ""},
		{"a batch of max_batch_size", v(ints("IN", 4, 2), text([]int64{4, 0})), 0, ""},
		{"BYTES elements may straddle buffers", v(ints("IN", 1, 2), raw("TEXT", core.TypeBytes, []int64{1, 2}, straddling[:2], straddling[2:7], straddling[7:])), 0, ""},
		{"contents split over buffers", v(raw("IN", core.TypeInt32, []int64{1, 2}, make([]byte, 3), make([]byte, 5)), text([]int64{1, 0})), 0, ""},
		{"a requested output", withOutputs(v(ints("IN", 1, 2), text([]int64{1, 0})), "OUT2"), 0, ""},

		{"an unknown input", v(ints("IN", 1, 2), text([]int64{1, 0}), ints("NOPE", 1, 1)), core.CodeInvalidArg,
			"unexpected inference input 'NOPE' for model 'v'"},
		{"an input given twice", v(ints("IN", 1, 2), text([]int64{1, 0}), ints("IN", 1, 2)), core.CodeInvalidArg,
			"[request id: {id}] input 'IN' already exists in request"},
		{"the wrong data type", v(raw("IN", core.TypeFP32, []int64{1, 2}, make([]byte, 8)), text([]int64{1, 0})), core.CodeInvalidArg,
			"[request id: {id}] inference input 'IN' data-type is 'FP32', but model 'v' expects 'INT32'"},
		{"a dimension too many", v(ints("IN", 1, 2, 1), text([]int64{1, 0})), core.CodeInvalidArg,
			"[request id: {id}] unexpected shape for input 'IN' for model 'v'. Expected [-1,2], got [1,2,1]." + note},
		{"a wrong dimension", v(ints("IN", 1, 3), text([]int64{1, 0})), core.CodeInvalidArg,
			"[request id: {id}] unexpected shape for input 'IN' for model 'v'. Expected [-1,2], got [1,3]." + note},
		{"a dimension left unspecified", v(ints("IN", 1, 2), text([]int64{1, -1})), core.CodeInvalidArg,
			"[request id: {id}] All input dimensions should be specified for input 'TEXT' for model 'v', got [1,-1]"},
		{"a negative dimension", v(ints("IN", 1, 2), text([]int64{1, -2})), core.CodeInvalidArg,
			"[request id: {id}] unexpected shape for input 'TEXT' for model 'v'. Expected [-1,-1], got [1,-2]." + note},
		{"no batch dimension", v(ints("IN"), text([]int64{1, 0})), core.CodeInvalidArg,
			"[request id: {id}] input 'IN' has no shape but model requires batch dimension for 'v'"},
		{"a batch of zero", v(ints("IN", 0, 2), text([]int64{0, 0})), core.CodeInvalidArg,
			"[request id: {id}] inference request batch-size must be >= 1 for 'v' (the first dimension of every input is the batch size)"},
		{"a batch above max_batch_size", v(ints("IN", 5, 2), text([]int64{5, 0})), core.CodeInvalidArg,
			"[request id: {id}] inference request batch-size must be <= 4 for 'v'"},
		{"a negative batch", v(ints("IN", -1, 2), text([]int64{-1, 0})), core.CodeInvalidArg,
			"[request id: {id}] inference request batch-size must be <= 4 for 'v'"},
		{"inputs of different batch sizes", v(ints("IN", 2, 2), text([]int64{1, 0})), core.CodeInvalidArg,
			"[request id: {id}] input 'TEXT' batch size does not match other inputs for 'v'"},
		{"too few bytes", v(raw("IN", core.TypeInt32, []int64{1, 2}, make([]byte, 4)), text([]int64{1, 0})), core.CodeInvalidArg,
			"[request id: {id}] input byte size mismatch for input 'IN' for model 'v'. Expected 8, got 4"},
		{"too many bytes", v(raw("IN", core.TypeInt32, []int64{1, 2}, make([]byte, 12)), text([]int64{1, 0})), core.CodeInvalidArg,
			"[request id: {id}] input byte size mismatch for input 'IN' for model 'v'. Expected 8, got 12"},
		{"BYTES cut inside an element", v(ints("IN", 1, 2), raw("TEXT", core.TypeBytes, []int64{1, 1}, []byte{5, 0, 0, 0, 'a'})), core.CodeInvalidArg,
			"[request id: {id}] the last string element of inference input 'TEXT' for model 'v' runs past the end of its contents"},
		{"BYTES cut inside a length", v(ints("IN", 1, 2), raw("TEXT", core.TypeBytes, []int64{1, 1}, []byte{1, 0})), core.CodeInvalidArg,
			"[request id: {id}] incomplete string length indicator for inference input 'TEXT' for model 'v', expecting 4 bytes but only 2 bytes available. Please make sure the string length indicator is in one buffer."},
		{"fewer BYTES elements than the shape", v(ints("IN", 1, 2), text([]int64{1, 3}, "a", "b")), core.CodeInvalidArg,
			"[request id: {id}] expected 3 string elements for inference input 'TEXT' for model 'v', got 2"},
		{"more BYTES elements than the shape", v(ints("IN", 1, 2), text([]int64{1, 1}, "a", "b", "c")), core.CodeInvalidArg,
			"[request id: {id}] unexpected number of string elements 2 for inference input 'TEXT' for model 'v', expecting 1"},
		{"a missing input", v(ints("IN", 1, 2)), core.CodeInvalidArg,
			"[request id: {id}] expected number of inputs between 2 and 3 but got 1 inputs for model 'v'. Got input(s) ['IN'], but missing required input(s) ['TEXT']. Please provide all required input(s)."},
		{"an optional input in place of a required one", v(ints("IN", 1, 2), raw("OPT", core.TypeFP32, []int64{1, 1}, make([]byte, 4))), core.CodeInvalidArg,
			"[request id: {id}] expected number of inputs between 2 and 3 but got 2 inputs for model 'v'. Got input(s) ['IN','OPT'], but missing required input(s) ['TEXT']. Please provide all required input(s)."},
		{"no input at all", v(), core.CodeInvalidArg,
			"[request id: {id}] expected number of inputs between 2 and 3 but got 0 inputs for model 'v'. Got input(s) [], but missing required input(s) ['IN','TEXT']. Please provide all required input(s)."},
		{"a missing input, no optional one", coretest.Request("s", ""), core.CodeInvalidArg,
			"[request id: {id}] expected 1 inputs but got 0 inputs for model 's'. Got input(s) [], but missing required input(s) ['IN']. Please provide all required input(s)."},
		{"an unknown input in place of a required one", coretest.Request("s", "", ints("X", 1)), core.CodeInvalidArg,
			"unexpected inference input 'X' for model 's'"},
		{"an input too many", coretest.Request("s", "", ints("IN", 1), ints("X", 1)), core.CodeInvalidArg,
			"[request id: {id}] expected 1 inputs but got 2 inputs for model 's'. Got input(s) ['IN','X'], but missing required input(s) ]. Please provide all required input(s)."},
		{"an unknown requested output", withOutputs(v(ints("IN", 1, 2), text([]int64{1, 0})), "NOPE"), core.CodeInvalidArg,
			"unexpected inference output 'NOPE' for model 'v'"},
		{"an output requested twice", withOutputs(v(ints("IN", 1, 2), text([]int64{1, 0})), "OUT", "OUT"), core.CodeInvalidArg,
			`model "v": output "OUT" is requested more than once`},
		{"an empty tensor of a huge shape", coretest.Request("w", "", raw("IN", core.TypeInt64, []int64{1 << 62, 0})), 0, ""},
		{"more elements than 64 bits count", coretest.Request("w", "", raw("IN", core.TypeInt64, []int64{1 << 62, 4})), core.CodeInvalidArg,
			`model "w": input "IN": shape [4611686018427387904,4] has more elements than an int64 counts`},
		{"more bytes than 64 bits count", coretest.Request("w", "", raw("IN", core.TypeInt64, []int64{1 << 61, 1})), core.CodeInvalidArg,
			`model "w": input "IN": shape [2305843009213693952,1] of INT64 is more bytes than an int64 counts, and the largest tensor the server holds is 268435456 bytes (MaxTensorBytes)`},
		{"a sequence control input from the client", coretest.Request("s", "", ints("IN", 1), ints("START", 1)), core.CodeInvalidArg,
			`model "s": input "START" is provided by the sequence batcher (sequence_batching control_input or state); do not send it`},
		{"an unknown model", coretest.Request("nope", "", ints("IN", 1, 2)), core.CodeNotFound,
			"Request for unknown model: 'nope' is not found"},
		{"an unknown version", &core.Submission{Model: "v", Version: 7, Inputs: []core.Input{ints("IN", 1, 2), text([]int64{1, 0})}}, core.CodeNotFound,
			"Request for unknown model: 'v' version 7 is not found"},
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
			wantExactError(t, "Infer", err, tc.code, strings.ReplaceAll(tc.want, "{id}", tc.name))
			if reply.Finished() || len(reply.Snapshot().Responses) > 0 || p.Executed(tc.name) {
				t.Error("a refused request reached the response function or the backend")
			}
		})
	}
}

// TestValidationNamesARequestWithoutIDAsTritonDoes: Triton writes
// "<id_unknown>" where a request has no id.
func TestValidationNamesARequestWithoutIDAsTritonDoes(t *testing.T) {
	t.Parallel()
	srv := coretest.Start(t, coretest.NewProvider(), validationModels...)
	err := srv.Infer(t.Context(), coretest.Request("s", "", coretest.Int32Input("IN", []int64{2})), coretest.NewCollector().Receive)
	wantExactError(t, "Infer", err, core.CodeInvalidArg,
		"[request id: <id_unknown>] unexpected shape for input 'IN' for model 's'. Expected [1], got [2]. ")
}

// TestInferNeedsAResponseFunction: without one Infer refuses at once.
func TestInferNeedsAResponseFunction(t *testing.T) {
	t.Parallel()
	srv, _ := serveModel(t, vectorConfig(), coretest.Echo())
	coretest.WantError(t, "Infer without a function", srv.Infer(t.Context(), vector("r", 1), nil), core.CodeInvalidArg, "response function")
	if n := srv.LiveRequests(); n != 0 {
		t.Errorf("LiveRequests = %d after a refused request", n)
	}
}

// TestConfigLookupFindsEveryTensor looks up each input and each output of
// models with few of them (searched in order) and many (hashed), and names
// that are none of them, through InputConfig and InputDataType, and
// OutputConfig.
func TestConfigLookupFindsEveryTensor(t *testing.T) {
	t.Parallel()
	type found struct {
		name string
		dims []int64
		ok   bool
	}
	kinds := []struct {
		kind, prefix, other string
		config              func(tensors string) string
		lookup              func(t *testing.T, m *core.Model, name string) found
	}{
		{"inputs", "IN", "OUT", func(tensors string) string {
			return `backend: "go"
input [ ` + tensors + ` ]
output [ { name: "OUT" data_type: TYPE_INT32 dims: [ 1 ] } ]`
		}, func(t *testing.T, m *core.Model, name string) found {
			cfg := m.InputConfig(name)
			dt, ok := m.InputDataType(name)
			if ok != (cfg != nil) || ok && dt != core.TypeInt32 {
				t.Errorf("InputDataType(%q) = %v, %v; InputConfig gives %v", name, dt, ok, cfg)
			}
			return found{cfg.GetName(), cfg.GetDims(), cfg != nil}
		}},
		{"outputs", "OUT", "IN", func(tensors string) string {
			return `backend: "go"
input [ { name: "IN" data_type: TYPE_INT32 dims: [ 1 ] } ]
output [ ` + tensors + ` ]`
		}, func(_ *testing.T, m *core.Model, name string) found {
			cfg := m.OutputConfig(name)
			return found{cfg.GetName(), cfg.GetDims(), cfg != nil}
		}},
	}
	counts := []int{1, 3, 8, 9, 20}
	var dirs []coretest.ModelDir
	for _, k := range kinds {
		for _, n := range counts {
			var tensors []string
			for i := range n {
				tensors = append(tensors, fmt.Sprintf(`{ name: "%s%d" data_type: TYPE_INT32 dims: [ %d ] }`, k.prefix, i, i+1))
			}
			dirs = append(dirs, coretest.ModelDir{Name: fmt.Sprintf("%s%d", k.kind, n), Config: k.config(strings.Join(tensors, ", "))})
		}
	}
	srv := coretest.Start(t, coretest.NewProvider(), dirs...)
	for _, k := range kinds {
		for _, n := range counts {
			t.Run(fmt.Sprintf("%s%d", k.kind, n), func(t *testing.T) {
				m, err := srv.Model(fmt.Sprintf("%s%d", k.kind, n), -1)
				if err != nil {
					t.Fatal(err)
				}
				for i := range n {
					name := fmt.Sprintf("%s%d", k.prefix, i)
					if f := k.lookup(t, m, name); f.name != name || len(f.dims) != 1 || f.dims[0] != int64(i+1) {
						t.Errorf("%s: %q found as %+v", k.kind, name, f)
					}
				}
				for _, name := range []string{"", k.prefix, fmt.Sprintf("%s%d", k.prefix, n), k.other, strings.ToLower(k.prefix) + "0"} {
					if f := k.lookup(t, m, name); f.ok {
						t.Errorf("%s: %q found as %+v, want none", k.kind, name, f)
					}
				}
			})
		}
	}
}
