package core_test

import (
	"context"
	"errors"
	"testing"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/coretest"
	"github.com/tritonhost/tritonhost/core/metrics"
)

func loaded(t *testing.T, srv *core.Server) *core.Model {
	t.Helper()
	ms := srv.LoadedModels()
	if len(ms) != 1 {
		t.Fatalf("LoadedModels: %d models, want 1", len(ms))
	}
	return ms[0]
}

func TestCountersCountSuccessesAndFailuresByReason(t *testing.T) {
	t.Parallel()
	fail := false
	b := func(x *coretest.Exec) error {
		if fail {
			return coretest.Fail(errors.New("backend broke"))(x)
		}
		return coretest.Reporting(true, coretest.Echo())(x)
	}
	srv, _ := serveModel(t, vectorConfig(), b)
	m := loaded(t, srv)
	for i := range 3 {
		coretest.Infer(t, srv, vector(string(rune('a'+i)), 1, 2)).Wait(t)
	}
	fail = true
	coretest.Infer(t, srv, vector("f", 1)).Wait(t)
	c := m.Counters()
	if c.Success.Count != 3 || c.InferenceCount != 3 || c.ExecutionCount != 3 || c.ComputeInfer.Ns != 3*20 {
		t.Errorf("counters %+v, want 3 successes, inferences and executions, 60 ns of compute", c)
	}
	if c.Fail.Count != 1 || c.Failures[core.FailureBackend] != 1 {
		t.Errorf("failures %v (fail %v), want one BACKEND", c.Failures, c.Fail)
	}
	if c.Pending != 0 {
		t.Errorf("pending = %d after every request finished", c.Pending)
	}
}

func TestPendingCountsQueuedRequestsAndCancellationsAreCanceled(t *testing.T) {
	t.Parallel()
	g := coretest.NewGate(t)
	srv, p := serveModel(t, vectorConfig(), coretest.Gated(g, coretest.Echo()))
	m := loaded(t, srv)
	first := coretest.Infer(t, srv, vector("running", 1))
	p.Reached(t, "running")
	ctx, cancel := context.WithCancel(context.Background())
	queued := []*coretest.Collector{
		coretest.InferCtx(t, ctx, srv, vector("q1", 1)),
		coretest.Infer(t, srv, vector("q2", 1)),
	}
	if got := m.Counters().Pending; got != 2 {
		t.Errorf("pending = %d with one request executing and two queued, want 2", got)
	}
	// The context's cancellation reaches the request from a goroutine of
	// its own (context.AfterFunc); the scheduler sees it when it next takes
	// a request off the queue. Settle waits for that goroutine to end, so
	// the request is cancelled before the gate opens.
	coretest.Settle(t, cancel)
	g.Open()
	if err := queued[0].Err(t); core.CodeOf(err) != core.CodeCancelled {
		t.Fatalf("cancelled queued request: %v", err)
	}
	first.Wait(t)
	queued[1].Wait(t)
	c := m.Counters()
	if c.Pending != 0 || c.Failures[core.FailureCanceled] != 1 {
		t.Errorf("pending %d, failures %v; want 0 and one CANCELED", c.Pending, c.Failures)
	}
}

func TestFirstResponseHistogramOnlyForDecoupledModels(t *testing.T) {
	t.Parallel()
	srv, _ := serveModel(t, vectorConfig(decoupled), coretest.Answering(coretest.Stream(3)))
	m := loaded(t, srv)
	for _, id := range []string{"a", "b"} {
		coretest.Infer(t, srv, vector(id, 1)).Wait(t)
	}
	var s metrics.Sample
	m.FirstResponseHistogram().Collect(&s)
	var n uint64
	for _, c := range s.Counts {
		n += c
	}
	if n != 2 || len(s.Bounds) != len(core.FirstResponseBucketsMs) {
		t.Errorf("histogram %+v: %d observations, want one per request (2)", s, n)
	}
	plain, _ := serveModel(t, vectorConfig(), coretest.Echo())
	if h := loaded(t, plain).FirstResponseHistogram(); h != nil {
		t.Error("a model that is not decoupled has a first-response histogram")
	}
}

func TestFailureReasonNames(t *testing.T) {
	var got []string
	for _, r := range core.FailureReasons() {
		got = append(got, r.String())
	}
	if want := []string{"REJECTED", "CANCELED", "BACKEND", "OTHER"}; len(got) != 4 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] || got[3] != want[3] {
		t.Errorf("reasons %v, want %v", got, want)
	}
}
