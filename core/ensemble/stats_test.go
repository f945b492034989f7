package ensemble_test

import (
	"errors"
	"testing"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/coretest"
)

// TestEnsembleStatistics: each step's request counts in its model's
// statistics; the ensemble counts its requests, one execution of their
// batch size each, and as compute times the sums of its steps' (Reporting
// reports 10, 20 and 30 ns for each request), as Triton does.
func TestEnsembleStatistics(t *testing.T) {
	t.Parallel()
	p := coretest.NewProvider().
		Set("pre", coretest.Reporting(true, coretest.Echo())).
		Set("post", coretest.Reporting(true, coretest.Echo()))
	srv := coretest.Start(t, p, append(vectorModels("pre", "post"), pipeline())...)
	const n = 3
	for range n {
		coretest.Infer(t, srv, coretest.Request("pipe", "r", input("IN", 1))).Single(t)
	}
	for _, m := range []string{"pre", "post"} {
		st := coretest.Statistics(t, srv, m)
		if st.Inference.Success.Count != n || st.InferenceCount != n || st.Inference.ComputeInfer.Ns != n*20 {
			t.Errorf("%s: %d successes, %d inferences, %d ns compute infer; want %d, %d, %d",
				m, st.Inference.Success.Count, st.InferenceCount, st.Inference.ComputeInfer.Ns, n, n, n*20)
		}
	}
	st := coretest.Statistics(t, srv, "pipe")
	want := core.InferStatistics{
		Success: core.Duration{Count: n, Ns: st.Inference.Success.Ns}, Queue: core.Duration{Count: n, Ns: st.Inference.Queue.Ns},
		ComputeInput: core.Duration{Count: n, Ns: n * 2 * 10}, ComputeInfer: core.Duration{Count: n, Ns: n * 2 * 20},
		ComputeOutput: core.Duration{Count: n, Ns: n * 2 * 30},
	}
	if st.Inference != want {
		t.Errorf("ensemble inference statistics\n got %+v\nwant %+v", st.Inference, want)
	}
	if st.InferenceCount != n || st.ExecutionCount != n || st.LastInference == 0 {
		t.Errorf("ensemble: %d inferences, %d executions, last %d; want %d, %d, set", st.InferenceCount, st.ExecutionCount, st.LastInference, n, n)
	}
	wantBatch := core.BatchStatistics{BatchSize: 1, ComputeInput: want.ComputeInput, ComputeInfer: want.ComputeInfer, ComputeOutput: want.ComputeOutput}
	if len(st.Batches) != 1 || st.Batches[0] != wantBatch {
		t.Errorf("ensemble batch statistics %+v, want [%+v]", st.Batches, wantBatch)
	}
	if st.Inference.Success.Ns == 0 {
		t.Errorf("the ensemble's requests took no time")
	}
}

// TestEnsembleCountersForMetrics: an ensemble's requests leave its
// pending count once their steps start, and count as successes; a step's
// failure counts as the ensemble's failure.
func TestEnsembleCountersForMetrics(t *testing.T) {
	t.Parallel()
	fail := false
	post := func(x *coretest.Exec) error {
		if fail {
			return coretest.Fail(errors.New("post broke"))(x)
		}
		return coretest.Echo()(x)
	}
	p := coretest.NewProvider().Set("pre", coretest.Echo()).Set("post", post)
	srv := coretest.Start(t, p, append(vectorModels("pre", "post"), pipeline())...)
	for range 3 {
		coretest.Infer(t, srv, coretest.Request("pipe", "r", input("IN", 1))).Single(t)
	}
	fail = true
	coretest.Infer(t, srv, coretest.Request("pipe", "f", input("IN", 1))).Wait(t)
	m, err := srv.Model("pipe", 0)
	if err != nil {
		t.Fatal(err)
	}
	if c := m.Counters(); c.Pending != 0 || c.Success.Count != 3 || c.Fail.Count != 1 || c.Failures[core.FailureOther] != 1 {
		t.Errorf("ensemble counters: pending %d, %d successes, %d failures %v; want 0, 3, one OTHER", c.Pending, c.Success.Count, c.Fail.Count, c.Failures)
	}
}
