package ensemble_test

import (
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/coretest"
)

// TestEnsemblePassesTensorsWithoutCopies: the client's buffer is the first
// step's input, the first step's output buffer is the second step's input,
// and the second step's output is the ensemble's, each the same memory.
func TestEnsemblePassesTensorsWithoutCopies(t *testing.T) {
	t.Parallel()
	var preIn, preOut, postIn atomic.Pointer[byte]
	p := coretest.NewProvider()
	p.Set("pre", coretest.Answering(coretest.Reply(func(r *core.Request) *core.Response {
		in := r.Inputs()[0]
		preIn.Store(&in.Buffers[0][0])
		vals := coretest.Int32s(in.Buffers[0])
		for i := range vals {
			vals[i]++
		}
		out := coretest.Int32Input("OUTPUT0", in.Shape, vals...)
		preOut.Store(&out.Buffers[0][0])
		return &core.Response{Outputs: []core.Output{{Name: "OUTPUT0", DataType: core.TypeInt32, Shape: in.Shape, Data: out.Buffers[0]}}}
	})))
	p.Set("post", coretest.Answering(coretest.Reply(func(r *core.Request) *core.Response {
		in := r.Inputs()[0]
		postIn.Store(&in.Buffers[0][0]) // answered with the input buffer itself: an identity that copies nothing
		return &core.Response{Outputs: []core.Output{{Name: "OUTPUT0", DataType: in.DataType, Shape: in.Shape, Data: in.Buffers[0]}}}
	})))
	srv := coretest.Start(t, p, append(vectorModels("pre", "post"), pipeline())...)
	in := input("IN", 1, 2, 3)
	resp := coretest.Infer(t, srv, coretest.Request("pipe", "r1", in)).Single(t)
	if got := ints(t, resp, "OUT"); !slices.Equal(got, []int32{2, 3, 4}) {
		t.Errorf("OUT = %v, want [2 3 4]", got)
	}
	out, _ := coretest.OutputOf(resp, "OUT")
	for _, c := range []struct {
		what      string
		got, want *byte
	}{
		{"the first step's input is the client's buffer", preIn.Load(), &in.Buffers[0][0]},
		{"the second step's input is the first step's output", postIn.Load(), preOut.Load()},
		{"the ensemble's output is the second step's output", &out.Data[0], preOut.Load()},
	} {
		if c.got != c.want {
			t.Errorf("%s: the buffers differ (a copy was made)", c.what)
		}
	}
	if got := p.Batches("post"); len(got) != 1 || got[0][0] != "r1" {
		t.Errorf("post ran %v, want once for request r1 (a step's request carries the ensemble request's id)", got)
	}
}

// sumModel is model "sum": OUTPUT0 = INPUT0 + INPUT1.
func sumModel(p *coretest.Provider) coretest.ModelDir {
	p.Set("sum", coretest.Answering(coretest.Reply(func(r *core.Request) *core.Response {
		var a, b []int32
		for _, in := range r.Inputs() {
			if in.Name == "INPUT0" {
				a = coretest.Int32s(in.Buffers[0])
			} else {
				b = coretest.Int32s(in.Buffers[0])
			}
		}
		for i := range a {
			a[i] += b[i]
		}
		return &core.Response{Outputs: []core.Output{coretestOutput("OUTPUT0", a)}}
	})))
	return coretest.ModelDir{Name: "sum", Config: `backend: "go"
max_batch_size: 0
input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ -1 ] }, { name: "INPUT1" data_type: TYPE_INT32 dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ -1 ] } ]`}
}

func coretestOutput(name string, vals []int32) core.Output {
	in := coretest.Int32Input(name, []int64{int64(len(vals))}, vals...)
	return core.Output{Name: name, DataType: core.TypeInt32, Shape: in.Shape, Data: in.Buffers[0]}
}

// TestEnsembleJoinsBranchesAndPrunesUnrequestedSteps: a step runs once
// every tensor it reads exists (sum waits for both branches, the slower
// one included), and a request that asks for one output runs only the
// steps that output needs.
func TestEnsembleJoinsBranchesAndPrunesUnrequestedSteps(t *testing.T) {
	t.Parallel()
	p := coretest.NewProvider().Set("b", coretest.Delayed(20*time.Millisecond, coretest.Echo()))
	models := append(vectorModels("a", "b", "side"), sumModel(p), coretest.ModelDir{Name: "diamond", Config: ensembleConfig(
		[]string{"IN"}, []string{"OUT", "SIDE"}, []string{
			step("sum", "INPUT0:x, INPUT1:y", "OUTPUT0:OUT"),
			step("a", "INPUT0:IN", "OUTPUT0:x"),
			step("b", "INPUT0:IN", "OUTPUT0:y"),
			step("side", "INPUT0:IN", "OUTPUT0:SIDE"),
		})})
	srv := coretest.Start(t, p, models...)

	resp := coretest.Infer(t, srv, coretest.Request("diamond", "both", input("IN", 1, 2))).Single(t)
	if got := ints(t, resp, "OUT"); !slices.Equal(got, []int32{2, 4}) {
		t.Errorf("OUT = %v, want [2 4]", got)
	}
	if got := ints(t, resp, "SIDE"); !slices.Equal(got, []int32{1, 2}) {
		t.Errorf("SIDE = %v, want [1 2]", got)
	}
	if n := len(p.Executions("sum")); n != 1 {
		t.Errorf("sum ran %d times, want once", n)
	}

	req := coretest.Request("diamond", "side only", input("IN", 5))
	req.Outputs = []string{"SIDE"}
	resp = coretest.Infer(t, srv, req).Single(t)
	if got := ints(t, resp, "SIDE"); !slices.Equal(got, []int32{5}) || len(resp.Outputs) != 1 {
		t.Errorf("outputs %+v, want SIDE = [5] alone", resp.Outputs)
	}
	for _, m := range []string{"a", "b", "sum"} {
		if p.Executed("side only") && slices.ContainsFunc(p.Executions(m), func(e coretest.Execution) bool { return slices.Contains(e.IDs, "side only") }) {
			t.Errorf("step %q ran for a request that does not need it", m)
		}
	}
}

// TestEnsembleStepErrorsEndTheRequest: a step's error response, or its
// model refusing the request the ensemble built (the callee's own
// validation), ends the ensemble's request with that error after "in
// ensemble '<name>', ", and no later step runs.
func TestEnsembleStepErrorsEndTheRequest(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		pre      coretest.Behaviour
		postDims string
		code     core.Code
		want     string
	}{
		{"error response", coretest.Answering(coretest.FailWith(core.Errorf(core.CodeInternal, "boom"))), "-1",
			core.CodeInternal, "in ensemble 'pipe', boom"},
		{"execute fails", coretest.Fail(errors.New("device lost")), "-1",
			core.CodeUnknown, "in ensemble 'pipe', device lost"},
		{"the next model refuses the tensor", coretest.Echo(), "2",
			core.CodeInvalidArg, "in ensemble 'pipe', [request id: r] unexpected shape for input 'INPUT0' for model 'post'. Expected [2], got [3]. "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := coretest.NewProvider().Set("pre", tc.pre)
			post := coretest.ModelDir{Name: "post", Config: `backend: "go"
max_batch_size: 0
input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ ` + tc.postDims + ` ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ -1 ] } ]`}
			srv := coretest.Start(t, p, coretest.ModelDir{Name: "pre", Config: vectorConfig()}, post, pipeline())
			err := coretest.Infer(t, srv, coretest.Request("pipe", "r", input("IN", 1, 2, 3))).Err(t)
			if err == nil || err.Error() != tc.want || core.CodeOf(err) != tc.code {
				t.Errorf("error %v (code %v), want %q (code %v)", err, core.CodeOf(err), tc.want, tc.code)
			}
			if n := len(p.Executions("post")); n != 0 {
				t.Errorf("post ran %d times after pre failed", n)
			}
			if st := coretest.Statistics(t, srv, "pipe"); st.Inference.Fail.Count != 1 || st.Inference.Success.Count != 0 {
				t.Errorf("ensemble statistics: %d failures, %d successes; want 1, 0", st.Inference.Fail.Count, st.Inference.Success.Count)
			}
		})
	}
}
