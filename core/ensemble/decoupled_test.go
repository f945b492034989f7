package ensemble_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/coretest"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// generate answers a request of a vector model with one response per
// element of INPUT0, OUTPUT0 = [element], then a flags-only final.
func generate(x *coretest.Exec, r *core.Request) {
	for _, v := range coretest.Int32s(r.Inputs()[0].Buffers[0]) {
		_ = x.Send(r, &core.Response{Outputs: []core.Output{coretestOutput("OUTPUT0", []int32{v})}}, false)
	}
	_ = x.SendFinal(r)
}

// genModel is the decoupled vector model "gen", answering with generate
// from a goroutine of its own.
func genModel(p *coretest.Provider) coretest.ModelDir {
	p.Set("gen", coretest.Async(generate))
	return coretest.ModelDir{Name: "gen", Config: vectorConfig(decoupled)}
}

// streamed waits for the final response of c and returns the responses,
// failing unless the final came flags-only after them and none is an
// error.
func streamed(t *testing.T, c *coretest.Collector) []*core.Response {
	t.Helper()
	res := c.Wait(t)
	if !res.FlagsOnlyFinal {
		t.Fatalf("the final response carried data; a decoupled ensemble ends with a flags-only final")
	}
	for _, r := range res.Responses {
		if r.Err != nil {
			t.Fatalf("error response: %v", r.Err)
		}
	}
	return res.Responses
}

// TestDecoupledStepStreamsThroughTheStepsAfterIt: each response of the
// decoupled step runs the two steps after it once, and the ensemble, itself
// decoupled, answers once per response, then sends a flags-only final.
func TestDecoupledStepStreamsThroughTheStepsAfterIt(t *testing.T) {
	t.Parallel()
	p := coretest.NewProvider()
	srv := coretest.Start(t, p, append(vectorModels("a", "b"), genModel(p), coretest.ModelDir{Name: "stream",
		Config: ensembleConfig([]string{"IN"}, []string{"OUT"}, []string{
			step("gen", "INPUT0:IN", "OUTPUT0:g"), step("a", "INPUT0:g", "OUTPUT0:x"), step("b", "INPUT0:x", "OUTPUT0:OUT")})})...)
	resps := streamed(t, coretest.Infer(t, srv, coretest.Request("stream", "r", input("IN", 7, 8, 9))))
	var got []int32
	for _, r := range resps {
		got = append(got, ints(t, r, "OUT")...)
	}
	slices.Sort(got)
	if !slices.Equal(got, []int32{7, 8, 9}) {
		t.Errorf("responses carry %v, want each of 7, 8, 9 exactly once", got)
	}
	for _, m := range []string{"a", "b"} {
		if n := len(p.Executions(m)); n != 3 {
			t.Errorf("step %q ran %d times, want once per response of gen (3)", m, n)
		}
	}
	m, err := srv.Model("stream", 0)
	if err != nil {
		t.Fatal(err)
	}
	if !m.Decoupled() || !m.Config().GetModelTransactionPolicy().GetDecoupled() {
		t.Errorf("the ensemble is not decoupled, though a decoupled step feeds its output")
	}
}

// TestDecoupledResponsesMeetTheirOwnSiblings: the outputs of two steps
// fed by one response of a decoupled step reach the ensemble's response
// together, however the two steps interleave.
func TestDecoupledResponsesMeetTheirOwnSiblings(t *testing.T) {
	t.Parallel()
	p := coretest.NewProvider().Set("slow", coretest.Delayed(5*time.Millisecond, coretest.Echo()))
	srv := coretest.Start(t, p, append(vectorModels("slow", "fast"), genModel(p), coretest.ModelDir{Name: "fork",
		Config: ensembleConfig([]string{"IN"}, []string{"OUT1", "OUT2"}, []string{
			step("gen", "INPUT0:IN", "OUTPUT0:g"), step("slow", "INPUT0:g", "OUTPUT0:OUT1"), step("fast", "INPUT0:g", "OUTPUT0:OUT2")})})...)
	in := []int32{1, 2, 3, 4, 5, 6}
	resps := streamed(t, coretest.Infer(t, srv, coretest.Request("fork", "r", input("IN", in...))))
	var got []int32
	for _, r := range resps {
		a, b := ints(t, r, "OUT1"), ints(t, r, "OUT2")
		if !slices.Equal(a, b) {
			t.Errorf("a response pairs OUT1 %v with OUT2 %v: outputs of different responses of gen", a, b)
		}
		got = append(got, a...)
	}
	slices.Sort(got)
	if !slices.Equal(got, in) {
		t.Errorf("responses carry %v, want each of %v exactly once", got, in)
	}
}

// TestDecoupledEnsembleEdges: a decoupled step that sends nothing gives a
// flags-only final alone; one that fails after two responses gives them,
// then its error; an ensemble that declares itself decoupled without a
// decoupled step is not (Triton sets the policy from the steps).
func TestDecoupledEnsembleEdges(t *testing.T) {
	t.Parallel()
	p := coretest.NewProvider()
	srv := coretest.Start(t, p, append(vectorModels("post"), genModel(p),
		coretest.ModelDir{Name: "stream", Config: ensembleConfig([]string{"IN"}, []string{"OUT"}, []string{
			step("gen", "INPUT0:IN", "OUTPUT0:g"), step("post", "INPUT0:g", "OUTPUT0:OUT")})},
		coretest.ModelDir{Name: "plain", Config: ensembleConfig([]string{"IN"}, []string{"OUT"}, []string{
			step("post", "INPUT0:IN", "OUTPUT0:OUT")}) + decoupled})...)

	if got := streamed(t, coretest.Infer(t, srv, coretest.Request("stream", "none", input("IN")))); len(got) != 0 {
		t.Errorf("got %d responses for an empty stream, want none", len(got))
	}

	// After a step's error no response is sent (as in Triton): gen fails
	// once the ensemble has answered its first two.
	answered := coretest.NewGate(t)
	p.Set("gen", coretest.Async(func(x *coretest.Exec, r *core.Request) {
		for i := range 2 {
			_ = x.Send(r, &core.Response{Outputs: []core.Output{coretestOutput("OUTPUT0", []int32{int32(i)})}}, false)
		}
		answered.Wait()
		_ = x.Send(r, &core.Response{Err: core.Errorf(core.CodeInternal, "ran dry")}, true)
	}))
	c := coretest.Infer(t, srv, coretest.Request("stream", "broken", input("IN", 1)))
	testenv.WaitUntil(t, "two responses", func() bool { return len(c.Snapshot().Responses) == 2 })
	answered.Open()
	res := c.Wait(t)
	var errs []string
	for _, r := range res.Responses {
		if r.Err != nil {
			errs = append(errs, r.Err.Error())
		}
	}
	if len(res.Responses) != 3 || fmt.Sprint(errs) != "[in ensemble 'stream', ran dry]" || res.Responses[2].Err == nil {
		t.Errorf("got %d responses with errors %q, want two then \"in ensemble 'stream', ran dry\"", len(res.Responses), errs)
	}

	m, err := srv.Model("plain", 0)
	if err != nil {
		t.Fatal(err)
	}
	if m.Decoupled() {
		t.Errorf("ensemble %q is decoupled, though none of its steps is", "plain")
	}
	if got := ints(t, coretest.Infer(t, srv, coretest.Request("plain", "p", input("IN", 4))).Single(t), "OUT"); !slices.Equal(got, []int32{4}) {
		t.Errorf("OUT = %v, want [4]", got)
	}
}
