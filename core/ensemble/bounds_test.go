package ensemble_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/coretest"
	"github.com/tritonhost/tritonhost/core/serverlog"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// boundedStream serves ensemble "stream": gen (decoupled, one response per
// element) then "down", which holds every request until gate opens, with
// max_inflight_requests 2.
func boundedStream(t *testing.T, wait time.Duration, log *testenv.LogBuffer) (*core.Server, *coretest.Provider, *coretest.Gate) {
	t.Helper()
	gate := coretest.NewGate(t)
	p := coretest.NewProvider().Set("down", coretest.Detached(coretest.After(gate, coretest.Once())))
	stream := coretest.ModelDir{Name: "stream", Config: ensembleConfig([]string{"IN"}, []string{"OUT"}, []string{
		step("gen", "INPUT0:IN", "OUTPUT0:g"), step("down", "INPUT0:g", "OUTPUT0:OUT")}, "max_inflight_requests: 2")}
	srv := coretest.Serve(t, core.Options{Backends: p, EnsembleStepWait: wait, Logger: serverlog.New(log)},
		genModel(p), coretest.ModelDir{Name: "down", Config: vectorConfig()}, stream)
	if !srv.Ready() {
		t.Fatalf("a model did not load: %+v", srv.RepositoryIndex())
	}
	return srv, p, gate
}

// checkStream checks that the six elements each came back once.
func checkStream(t *testing.T, c *coretest.Collector) {
	t.Helper()
	var got []int32
	for _, r := range streamed(t, c) {
		got = append(got, ints(t, r, "OUT")...)
	}
	slices.Sort(got)
	if !slices.Equal(got, []int32{1, 2, 3, 4, 5, 6}) {
		t.Errorf("responses carry %v, want 1..6 once each", got)
	}
}

// TestMaxInflightRequestsHoldsTheProducerBack: with two requests of the
// step after it in flight, the decoupled step's third response waits in
// its Send; once those finish, the rest flow, each exactly once.
func TestMaxInflightRequestsHoldsTheProducerBack(t *testing.T) {
	t.Parallel()
	srv, p, gate := boundedStream(t, time.Minute, &testenv.LogBuffer{})
	reply := coretest.Infer(t, srv, coretest.Request("stream", "r", input("IN", 1, 2, 3, 4, 5, 6)))
	testenv.WaitUntil(t, "two requests of down", func() bool { return len(p.Executions("down")) >= 2 })
	p.WaitCalls(t, "r", "Send", 2)
	// gen's third response waits in its Send for a slot of down; nothing
	// signals that, but its goroutine shows it.
	testenv.WaitUntil(t, "gen's third response waiting for a slot of down", func() bool { return running("(*stepLimiter).acquire") })
	if n, sent := len(p.Executions("down")), p.Count("r", "Send"); n != 2 || sent != 2 {
		t.Errorf("with max_inflight_requests 2: down runs %d requests and gen sent %d responses, want 2 and 2", n, sent)
	}
	gate.Open()
	checkStream(t, reply)
	if n := len(p.Executions("down")); n != 6 {
		t.Errorf("down ran %d times, want 6", n)
	}
}

// TestMaxInflightRequestsGivesWayAfterTheWait: past EnsembleStepWait a
// step goes ahead beyond the bound (Triton's way out of steps waiting on
// each other), with an error logged; every response still comes once.
func TestMaxInflightRequestsGivesWayAfterTheWait(t *testing.T) {
	t.Parallel()
	log := &testenv.LogBuffer{}
	srv, p, gate := boundedStream(t, 20*time.Millisecond, log)
	reply := coretest.Infer(t, srv, coretest.Request("stream", "r", input("IN", 1, 2, 3, 4, 5, 6)))
	testenv.WaitUntil(t, "all six requests of down, past the bound", func() bool { return len(p.Executions("down")) == 6 })
	const want = `ensemble "stream": step 1 (model "down") had no free slot for 20ms (max_inflight_requests 2, EnsembleStepWait); request "r" goes on past the bound`
	if got := strings.Count(log.String(), want); got != 4 {
		t.Errorf("the log holds %d times %q, want 4 (responses 3 to 6):\n%s", got, want, log.String())
	}
	gate.Open()
	checkStream(t, reply)
}
