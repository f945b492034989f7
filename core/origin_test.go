package core_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/coretest"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// TestFinishedWaitsForTheFinalResponseAfterRelease: a backend that releases
// its request before answering (decoupled) does not finish it; Finished runs
// once the final response was delivered too; the backend sees the
// submitter's Origin on the request.
func TestFinishedWaitsForTheFinalResponseAfterRelease(t *testing.T) {
	t.Parallel()
	p := coretest.NewProvider()
	srv := coretest.Start(t, p, coretest.ModelDir{Name: "m", Config: vectorConfig(decoupled)})
	gate := coretest.NewGate(t)
	var seen atomic.Value
	answer := coretest.After(gate, coretest.Once())
	// Released at once, answered once the gate opens.
	p.Set("m", coretest.Async(func(x *coretest.Exec, r *core.Request) {
		seen.Store(r.Origin())
		answer(x, r)
	}))
	var finished atomic.Int32
	var finalSeen atomic.Bool
	req := vector("r", 1, 2)
	req.Origin = "the submitter's"
	req.Finished = func() {
		if !finalSeen.Load() {
			t.Errorf("Finished ran before the final response was delivered")
		}
		finished.Add(1)
	}
	done := make(chan struct{})
	err := srv.Infer(context.Background(), req, func(resp *core.Response, final bool) {
		if final {
			finalSeen.Store(true)
			close(done)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	p.WaitCalls(t, "r", "Release", 1)
	if n := finished.Load(); n != 0 {
		t.Fatalf("Finished ran %d times while the final response was still to come", n)
	}
	gate.Open()
	<-done
	testenv.Eventually(func() bool { return finished.Load() != 0 })
	if n := finished.Load(); n != 1 {
		t.Errorf("Finished ran %d times, want once", n)
	}
	if got := seen.Load(); got != "the submitter's" {
		t.Errorf("the backend saw Origin %v, want the submitter's", got)
	}
}
