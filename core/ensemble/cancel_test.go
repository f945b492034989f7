package ensemble_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/coretest"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// TestCancellingAnEnsembleReachesEveryStepInFlight: the client cancels an
// ensemble request whose three steps are in flight, two running in their
// backends and one queued behind another request: both running ones see
// the cancellation, the queued one never runs, and the request ends
// CANCELLED once all three have finished.
func TestCancellingAnEnsembleReachesEveryStepInFlight(t *testing.T) {
	t.Parallel()
	gate := coretest.NewGate(t)
	p := coretest.NewProvider().
		Set("a", coretest.Async(coretest.AwaitCancel())).
		Set("b", coretest.Async(coretest.AwaitCancel())).
		Set("c", coretest.Gated(gate, coretest.Echo(), "busy"))
	srv := coretest.Start(t, p, append(vectorModels("a", "b", "c"), coretest.ModelDir{Name: "par", Config: ensembleConfig(
		[]string{"IN"}, []string{"A", "B", "C"}, []string{
			step("a", "INPUT0:IN", "OUTPUT0:A"), step("b", "INPUT0:IN", "OUTPUT0:B"), step("c", "INPUT0:IN", "OUTPUT0:C")})})...)
	busy := coretest.Infer(t, srv, coretest.Request("c", "busy", input("INPUT0", 1)))
	p.Reached(t, "busy")

	ctx, cancel := context.WithCancel(context.Background())
	reply := coretest.InferCtx(t, ctx, srv, coretest.Request("par", "r", input("IN", 1)))
	testenv.WaitUntil(t, "a and b to run", func() bool {
		return len(p.Executions("a")) == 1 && len(p.Executions("b")) == 1
	})
	coretest.Settle(t, cancel)
	p.WaitCalls(t, "r", "Cancelled", 2)
	if reply.Finished() {
		t.Errorf("the ensemble answered before its queued step finished")
	}
	gate.Open()
	busy.Single(t)
	err := reply.Err(t)
	coretest.WantError(t, "cancelled ensemble", err, core.CodeCancelled)
	if !strings.HasPrefix(err.Error(), "in ensemble 'par', ") {
		t.Errorf("error %q does not name the ensemble as Triton does", err)
	}
	if slices.ContainsFunc(p.Executions("c"), func(e coretest.Execution) bool { return slices.Contains(e.IDs, "r") }) {
		t.Errorf("the queued step ran after its ensemble request was cancelled")
	}
	if st := coretest.Statistics(t, srv, "c"); st.Inference.Fail.Count != 1 {
		t.Errorf("model c recorded %d failures, want the cancelled step's", st.Inference.Fail.Count)
	}
}
