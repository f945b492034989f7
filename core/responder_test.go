package core_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/coretest"
	"github.com/tritonhost/tritonhost/core/serverlog"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// TestResponderEnforcesTheTransactionPolicy checks what the client gets
// and what each backend call returns when a backend answers a request in
// each way Triton's decoupled rules speak of.
func TestResponderEnforcesTheTransactionPolicy(t *testing.T) {
	bogus := coretest.Reply(func(*core.Request) *core.Response {
		return &core.Response{Outputs: []core.Output{{Name: "BOGUS", DataType: core.TypeInt32, Shape: []int64{1}, Data: make([]byte, 4)}}}
	})
	tests := []struct {
		name      string
		decoupled bool
		backend   coretest.Behaviour
		indices   []int64   // IndexParam of each response the client gets (-1: none)
		flagsOnly bool      // the final call carries no response
		errCode   core.Code // the last response's error, when errText is set
		errText   []string
		calls     []string // what each backend call returned
	}{
		{name: "a non-decoupled model answers once", backend: coretest.Echo(),
			indices: []int64{-1}, calls: []string{"Send(final) ok", "Release ok"}},
		{name: "a non-decoupled model's first response is delivered, a second dropped",
			backend: coretest.Answering(coretest.Times(2)), indices: []int64{0},
			calls: []string{"Send ok", "Send(final) ok", "Release ok"}},
		{name: "a decoupled model's responses arrive in order, then a flags-only final", decoupled: true,
			backend: coretest.Answering(coretest.Stream(4)), indices: []int64{0, 1, 2, 3}, flagsOnly: true,
			calls: []string{"Send ok", "Send ok", "Send ok", "Send ok", "SendFinal ok", "Release ok"}},
		{name: "a decoupled model may end on its last response", decoupled: true,
			backend: coretest.Answering(coretest.Times(3)), indices: []int64{0, 1, 2},
			calls: []string{"Send ok", "Send ok", "Send(final) ok", "Release ok"}},
		{name: "a decoupled model may send no response at all", decoupled: true,
			backend: coretest.Answering(coretest.SendFinal()), indices: []int64{}, flagsOnly: true,
			calls: []string{"SendFinal ok", "Release ok"}},
		{name: "a decoupled model answers from its own goroutine after releasing", decoupled: true,
			backend: coretest.Async(coretest.Stream(2)), indices: []int64{0, 1}, flagsOnly: true,
			calls: []string{"Hold ok", "Release ok", "Send ok", "Send ok", "SendFinal ok", "Drop ok"}},
		{name: "a send after the final reaches nobody: non-decoupled",
			backend: coretest.Answering(coretest.Then(coretest.Once(), coretest.Once(), coretest.SendFinal())), indices: []int64{-1},
			calls: []string{"Send(final) ok", "Send(final) Not found", "SendFinal Not found", "Release ok"}},
		{name: "a send after the final reaches nobody: decoupled", decoupled: true,
			backend: coretest.Answering(coretest.Then(coretest.SendFinal(), coretest.Send(false), coretest.SendFinal())), indices: []int64{}, flagsOnly: true,
			calls: []string{"SendFinal ok", "Send Not found", "SendFinal Not found", "Release ok"}},
		{name: "SendFinal on a non-decoupled model delivers the held response",
			backend: coretest.Answering(coretest.Then(coretest.Send(false), coretest.SendFinal())), indices: []int64{-1},
			calls: []string{"Send ok", "SendFinal ok", "Release ok"}},
		{name: "SendFinal without a response on a non-decoupled model is an error",
			backend: coretest.Answering(coretest.SendFinal()), indices: []int64{-1},
			errCode: core.CodeInternal, errText: []string{`model "m"`, `request "r"`, "without sending a response"},
			calls: []string{"SendFinal ok", "Release ok"}},
		{name: "an output the configuration does not declare is an error",
			backend: coretest.Answering(bogus), indices: []int64{-1},
			errCode: core.CodeInvalidArg, errText: []string{`model "m"`, `"BOGUS"`, "does not declare"},
			calls: []string{"Send(final) Invalid argument", "Release ok"}},
		{name: "released without a final and nothing held: the request fails", decoupled: true,
			backend: coretest.Answering(coretest.Silence()), indices: []int64{-1},
			errCode: core.CodeInternal, errText: []string{`model "m"`, `request "r"`, "without sending a final response"},
			calls: []string{"Release ok"}},
		{name: "held, released, then dropped without a final: the request fails", decoupled: true,
			backend: coretest.Async(coretest.Send(false)), indices: []int64{-1, -1},
			errCode: core.CodeInternal, errText: []string{`model "m"`, `request "r"`, "without sending a final response"},
			calls: []string{"Hold ok", "Release ok", "Send ok", "Drop ok"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var extra []string
			if tc.decoupled {
				extra = append(extra, decoupled)
			}
			srv, p := serveModel(t, vectorConfig(extra...), tc.backend)
			got := coretest.Infer(t, srv, vector("r", 1, 2, 3)).Wait(t)
			op := lastOp(tc.calls)
			p.WaitCalls(t, "r", op, countOp(tc.calls, op)) // the backend may go on after the final
			if !slices.Equal(indices(got.Responses), tc.indices) || got.FlagsOnlyFinal != tc.flagsOnly {
				t.Errorf("client got responses %v (flags-only final %v), want %v (%v)", indices(got.Responses), got.FlagsOnlyFinal, tc.indices, tc.flagsOnly)
			}
			if calls := callLog(p.Calls("r")); !slices.Equal(calls, tc.calls) {
				t.Errorf("backend calls returned %q, want %q", calls, tc.calls)
			}
			checkLast(t, got, tc.errCode, tc.errText)
		})
	}
}

// lastOp is the op of the last "Op code" line.
func lastOp(calls []string) string { return strings.Fields(calls[len(calls)-1])[0] }

// countOp counts the "Op code" lines of op.
func countOp(calls []string, op string) int {
	n := 0
	for _, c := range calls {
		if strings.Fields(c)[0] == op {
			n++
		}
	}
	return n
}

// checkLast checks the client's last response: the error it should carry
// (when errText is set), or its echo of INPUT0 = [1 2 3].
func checkLast(t *testing.T, got coretest.Result, code core.Code, errText []string) {
	t.Helper()
	if len(got.Responses) == 0 {
		return
	}
	last := got.Responses[len(got.Responses)-1]
	if len(errText) > 0 {
		coretest.WantError(t, "last response", last.Err, code, errText...)
		return
	}
	if last.Err != nil {
		t.Fatalf("last response: %v", last.Err)
	}
	out, ok := coretest.OutputOf(last, "OUTPUT0")
	if !ok || !slices.Equal(coretest.Int32s(out.Data), []int32{1, 2, 3}) {
		t.Errorf("last response %+v, want OUTPUT0 = [1 2 3]", last)
	}
}

// TestHeldRequestIsNotFailedUntilItsLastHoldIsDropped: a backend that
// released a request but still holds it may answer later; only when the
// hold is dropped without a final does the request fail.
func TestHeldRequestIsNotFailedUntilItsLastHoldIsDropped(t *testing.T) {
	t.Parallel()
	p := coretest.NewProvider()
	srv := coretest.Start(t, p, coretest.ModelDir{Name: "m", Config: vectorConfig(decoupled)})
	gate := coretest.NewGate(t)
	p.Set("m", coretest.Async(coretest.After(gate, coretest.Silence())))
	reply := coretest.Infer(t, srv, vector("r", 1))
	p.WaitCalls(t, "r", "Release", 1)
	if reply.Finished() {
		t.Fatalf("a held request was completed on release: %+v", reply.Snapshot())
	}
	if n := srv.LiveRequests(); n != 1 {
		t.Errorf("LiveRequests = %d while the backend holds the request, want 1", n)
	}
	gate.Open()
	coretest.WantError(t, "after the drop", reply.Err(t), core.CodeInternal, "dropped every response factory")
}

// TestResponderShapesOutputs: outputs the client did not request are
// dropped, and outputs with a reshape get their configured shape back, as
// inputs with one reach the backend reshaped.
func TestResponderShapesOutputs(t *testing.T) {
	twoOutputs := `backend: "go"
input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ 2 ] }, { name: "INPUT1" data_type: TYPE_INT32 dims: [ 2 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ 2 ] }, { name: "OUTPUT1" data_type: TYPE_INT32 dims: [ 2 ] } ]`
	reshaped := func(maxBatch int, dims, to string) string {
		return fmt.Sprintf(`backend: "go"
max_batch_size: %d
input [ { name: "INPUT0" data_type: TYPE_INT32 dims: %s reshape: { shape: %s } } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: %s reshape: { shape: %s } } ]`, maxBatch, dims, to, dims, to)
	}
	in := coretest.Int32Input
	tests := []struct {
		name      string
		config    string
		inputs    []core.Input
		requested []string
		backend   []string // input shapes the backend sees, "NAME[dims]"
		want      []string // output shapes the client gets
	}{
		{"every output when the client names none", twoOutputs, []core.Input{in("INPUT0", []int64{2}), in("INPUT1", []int64{2})}, nil,
			[]string{"INPUT0[2]", "INPUT1[2]"}, []string{"OUTPUT0[2]", "OUTPUT1[2]"}},
		{"outputs the client did not request are dropped", twoOutputs, []core.Input{in("INPUT0", []int64{2}), in("INPUT1", []int64{2})}, []string{"OUTPUT1"},
			[]string{"INPUT0[2]", "INPUT1[2]"}, []string{"OUTPUT1[2]"}},
		{"reshape without batching", reshaped(0, "[ 4 ]", "[ 2, 2 ]"), []core.Input{in("INPUT0", []int64{4})}, nil,
			[]string{"INPUT0[2 2]"}, []string{"OUTPUT0[4]"}},
		{"reshape keeps the batch dimension", reshaped(2, "[ 4 ]", "[ 2, 2 ]"), []core.Input{in("INPUT0", []int64{2, 4})}, nil,
			[]string{"INPUT0[2 2 2]"}, []string{"OUTPUT0[2 4]"}},
		{"reshape carries variable dimensions over", reshaped(0, "[ -1, 4 ]", "[ -1, 2, 2 ]"), []core.Input{in("INPUT0", []int64{3, 4})}, nil,
			[]string{"INPUT0[3 2 2]"}, []string{"OUTPUT0[3 4]"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var seen []string
			var requested map[string]bool
			srv, _ := serveModel(t, tc.config, coretest.Inspect(func(r *core.Request) {
				requested = map[string]bool{"OUTPUT0": r.Responder().Requested("OUTPUT0"), "OUTPUT1": r.Responder().Requested("OUTPUT1")}
				for _, in := range r.Inputs() {
					seen = append(seen, fmt.Sprintf("%s%v", in.Name, in.Shape))
				}
			}, coretest.Echo()))
			req := coretest.Request("m", "r", tc.inputs...)
			req.Outputs = tc.requested
			resp := coretest.Infer(t, srv, req).Single(t)
			if resp.Err != nil {
				t.Fatal(resp.Err)
			}
			slices.Sort(seen)
			if !slices.Equal(seen, tc.backend) {
				t.Errorf("backend saw inputs %v, want %v", seen, tc.backend)
			}
			if got := shapes(resp); !slices.Equal(got, tc.want) {
				t.Errorf("client got outputs %v, want %v", got, tc.want)
			}
			for name, asked := range requested {
				if want := tc.requested == nil || slices.Contains(tc.requested, name); asked != want {
					t.Errorf("Responder.Requested(%q) = %v, want %v", name, asked, want)
				}
			}
		})
	}
}

// TestExecuteErrorFailsEveryUnreleasedRequestOnce: when Execute returns an
// error, every request of the batch the backend had not released gets that
// error as its only final response; one it answered and released keeps its
// answer.
func TestExecuteErrorFailsEveryUnreleasedRequestOnce(t *testing.T) {
	t.Parallel()
	p := coretest.NewProvider()
	srv := coretest.Start(t, p, coretest.ModelDir{Name: "m", Config: batchingConfig + "dynamic_batching { }"})
	gate := coretest.NewGate(t)
	broken := core.Errorf(core.CodeUnavailable, "the device fell over")
	p.Set("m", coretest.Gated(gate, func(x *coretest.Exec) error {
		if x.Batch[0].ID() == "busy" {
			return coretest.Echo()(x)
		}
		first := x.Batch[0] // answered and released before the failure
		_ = x.Send(first, coretest.EchoResponse(first), true)
		_ = x.Release(first, core.ReleaseAll)
		return broken
	}, "busy"))
	busy := coretest.Infer(t, srv, rows("busy", 4))
	p.Reached(t, "busy")
	var queued []*coretest.Collector
	for i := range 3 {
		queued = append(queued, coretest.Infer(t, srv, rows(fmt.Sprintf("q%d", i), 1)))
	}
	gate.Open()
	coretest.Succeeded(t, busy, queued[0])
	for i, c := range queued[1:] {
		if err := c.Err(t); err != broken {
			t.Errorf("q%d: %v, want the error Execute returned", i+1, err)
		}
	}
	if got := fmt.Sprint(p.Batches("m")); got != "[[busy] [q0 q1 q2]]" {
		t.Fatalf("batches %s, want the three queued requests in one batch", got)
	}
	st := coretest.Statistics(t, srv, "m")
	if st.Inference.Fail.Count != 2 {
		t.Errorf("%d failures recorded, want 2", st.Inference.Fail.Count)
	}
}

// TestNonDecoupledModelDeliversItsFirstResponseAndDropsTheRest: a model
// that is not decoupled but streams (Triton's repeat backend without
// model_transaction_policy) has its first response delivered, final, as
// Triton's gRPC state-cleanup test expects; the others are dropped,
// counted, and logged once for the request at verbose level 1.
func TestNonDecoupledModelDeliversItsFirstResponseAndDropsTheRest(t *testing.T) {
	t.Parallel()
	logs := &testenv.LogBuffer{}
	logger := serverlog.New(logs)
	logger.SetVerbose(1)
	p := coretest.NewProvider().Set("m", coretest.Async(coretest.Stream(4)))
	srv := coretest.Serve(t, core.Options{Backends: p, Logger: logger}, coretest.ModelDir{Name: "m", Config: vectorConfig()})
	for _, id := range []string{"r1", "r2"} {
		got := coretest.Infer(t, srv, vector(id, 1, 2, 3)).Wait(t)
		if !slices.Equal(indices(got.Responses), []int64{0}) || got.FlagsOnlyFinal {
			t.Errorf("%s: client got responses %v (flags-only final %v), want the first alone, final", id, indices(got.Responses), got.FlagsOnlyFinal)
		}
		checkLast(t, got, 0, nil)
		p.WaitCalls(t, id, "Drop", 1)
		if calls := callLog(p.Calls(id)); !slices.Equal(calls, []string{"Hold ok", "Release ok", "Send ok", "Send ok", "Send ok", "Send ok", "SendFinal ok", "Drop ok"}) {
			t.Errorf("%s: backend calls returned %q; every send should succeed", id, calls)
		}
		line := fmt.Sprintf("[request id: %s] model 'm' is not decoupled but sent 4 responses; the first was delivered and the other 3 dropped", id)
		if n := logs.Count(line); n != 1 {
			t.Errorf("the log has %d lines %q, want 1:\n%s", n, line, logs)
		}
	}
	m, err := srv.Model("m", 0)
	if err != nil {
		t.Fatal(err)
	}
	if n := m.DroppedResponses(); n != 6 {
		t.Errorf("DroppedResponses() = %d, want 6", n)
	}
}

// TestRequestedOutputsOfALongList: a request that names more outputs than
// the responder looks through one by one (it keeps them as a set then)
// still has exactly those outputs requested, and gets exactly those back.
func TestRequestedOutputsOfALongList(t *testing.T) {
	var outputs []string
	for i := range 12 {
		outputs = append(outputs, fmt.Sprintf(`{ name: "OUTPUT%d" data_type: TYPE_INT32 dims: [ 2 ] }`, i))
	}
	config := `backend: "go"
max_batch_size: 0
input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ 2 ] } ]
output [ ` + strings.Join(outputs, ", ") + ` ]`
	for _, n := range []int{1, 8, 9, 11} {
		t.Run(fmt.Sprint(n, " named"), func(t *testing.T) {
			var names []string
			for i := range n {
				names = append(names, fmt.Sprintf("OUTPUT%d", 11-i))
			}
			got := map[string]bool{}
			srv, _ := serveModel(t, config, coretest.Inspect(func(r *core.Request) {
				for i := range 12 {
					name := fmt.Sprintf("OUTPUT%d", i)
					got[name] = r.Responder().Requested(name)
				}
			}, coretest.Echo()))
			req := coretest.Request("m", "r", coretest.Int32Input("INPUT0", []int64{2}))
			req.Outputs = names
			if resp := coretest.Infer(t, srv, req).Single(t); resp.Err != nil {
				t.Fatal(resp.Err)
			}
			for name, asked := range got {
				if want := slices.Contains(names, name); asked != want {
					t.Errorf("Responder.Requested(%q) = %v, want %v", name, asked, want)
				}
			}
			if len(got) != 12 {
				t.Errorf("the backend asked about %d outputs, want 12", len(got))
			}
		})
	}
}
