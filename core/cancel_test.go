package core_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/coretest"
)

// TestCancelledQueuedRequestNeverReachesTheBackend: a request cancelled
// while it waits in the queue completes with CANCELLED when the scheduler
// comes to it, alone or in the middle of a batch, and never runs.
func TestCancelledQueuedRequestNeverReachesTheBackend(t *testing.T) {
	for _, tc := range []struct {
		name    string
		batcher string
		want    string // the batches after "busy"
	}{
		{"one request per execution", "", "[[q0] [q1]]"},
		{"dynamic batching", "dynamic_batching { }", "[[q0 q1]]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv, p, gate := coretest.StartGated(t, "m", batchingConfig+tc.batcher)
			busy := coretest.Infer(t, srv, rows("busy", 4))
			p.Reached(t, "busy")
			ctx, cancel := context.WithCancel(context.Background())
			q0 := coretest.Infer(t, srv, rows("q0", 1))
			victim := coretest.InferCtx(t, ctx, srv, rows("victim", 1))
			q1 := coretest.Infer(t, srv, rows("q1", 1))
			coretest.Settle(t, cancel) // the request is marked cancelled before the scheduler reaches it
			gate.Open()
			coretest.Succeeded(t, busy, q0, q1)
			coretest.WantError(t, "cancelled request", victim.Err(t), core.CodeCancelled, `request "victim"`, `model "m"`, "cancelled")
			if p.Executed("victim") {
				t.Error("the cancelled request reached the backend")
			}
			if got := fmt.Sprint(p.Batches("m")[1:]); got != tc.want {
				t.Errorf("batches %s, want %s", got, tc.want)
			}
			if st := coretest.Statistics(t, srv, "m"); st.Inference.Fail.Count != 1 {
				t.Errorf("%d failures recorded, want the cancelled request's", st.Inference.Fail.Count)
			}
		})
	}
}

// TestRunningRequestSeesCancellation: once the client cancels, a backend
// holding the request sees Request.Cancelled, each of its cancel hooks runs
// exactly once, a removed hook never runs and one registered afterwards
// runs at once, whether the backend answers inline, from its own goroutine
// before releasing, or after releasing.
func TestRunningRequestSeesCancellation(t *testing.T) {
	answer := func(x *coretest.Exec, r *core.Request) {
		hit := make(chan struct{})
		x.OnCancel(r, func() { close(hit) }) // closing twice would panic
		x.OnCancel(r, func() {})
		hook := x.OnCancel(r, func() { x.Note(r, "removed hook ran", nil) })
		hook.Remove()
		hook.Remove() // twice does nothing
		x.Note(r, "Ready", nil)
		<-hit
		if r.Cancelled() {
			x.Note(r, "Cancelled", nil)
		}
		r.Responder().OnCancel(func() { x.Note(r, "late hook ran", nil) })
		_ = x.Send(r, &core.Response{Err: core.Errorf(core.CodeCancelled, "stopped early")}, true)
	}
	for _, tc := range []struct {
		name    string
		backend coretest.Behaviour
	}{
		{"inline", coretest.Answering(answer)},
		{"unreleased, on a backend goroutine", coretest.Detached(answer)},
		{"released and held", coretest.Async(answer)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv, p := serveModel(t, vectorConfig(decoupled), tc.backend)
			ctx, cancel := context.WithCancel(context.Background())
			reply := coretest.InferCtx(t, ctx, srv, vector("r", 1))
			p.WaitCalls(t, "r", "Ready", 1)
			coretest.Settle(t, func() { // every hook has run when the cancellation settles
				cancel()
				cancel()
			})
			coretest.WantError(t, "cancelled request", reply.Err(t), core.CodeCancelled, "stopped early")
			p.WaitCalls(t, "r", "Release", 1)
			for op, want := range map[string]int{"OnCancel": 2, "Cancelled": 1, "late hook ran": 1, "removed hook ran": 0} {
				if n := p.Count("r", op); n != want {
					t.Errorf("%q happened %d time(s), want %d; calls %v", op, n, want, callLog(p.Calls("r")))
				}
			}
		})
	}
}

// TestSubmitRefusesAContextAlreadyCancelled: nothing is queued, nothing
// answered, nothing left live.
func TestSubmitRefusesAContextAlreadyCancelled(t *testing.T) {
	t.Parallel()
	srv, p := serveModel(t, vectorConfig(), coretest.Echo())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	reply := coretest.NewCollector()
	coretest.WantError(t, "Infer", srv.Infer(ctx, vector("r", 1), reply.Receive), core.CodeCancelled, `request "r"`, `model "m"`)
	if reply.Finished() || p.Executed("r") || srv.LiveRequests() != 0 {
		t.Errorf("a refused request was answered (%v), executed (%v) or left live (%d)", reply.Finished(), p.Executed("r"), srv.LiveRequests())
	}
}
