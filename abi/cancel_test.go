package abi_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

func TestCancelReachesTheBackend(t *testing.T) {
	t.Parallel()
	cfg := testenv.ExampleConfig(t, "square_int32") + `
parameters [{ key: "CUSTOM_INFER_DELAY_NS" value: { string_value: "10000000" } }]
`
	srv := startServer(t, testenv.Repository(t, testenv.Model{Name: "square_int32", Config: cfg}))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var responses atomic.Int32
	c := newCollector()
	err := srv.Infer(ctx, &core.Submission{Model: "square_int32", ID: "long",
		Inputs: []core.Input{core.NewInput("IN", core.TypeInt32, []int64{1}, int32s(200))}},
		func(resp *core.Response, final bool) {
			if resp != nil && responses.Add(1) == 2 {
				cancel()
			}
			c.fn(resp, final)
		})
	if err != nil {
		t.Fatal(err)
	}
	events := c.wait(t)
	if n := responses.Load(); n < 2 || n > 10 {
		t.Errorf("got %d responses; the backend should have stopped soon after the second", n)
	}
	if last := events[len(events)-1]; !last.final {
		t.Fatalf("last event is not final: %+v", last)
	}
	stats, err := srv.Statistics("square_int32", 1)
	if err != nil {
		t.Fatal(err)
	}
	var cancelled uint64
	for _, r := range stats[0].Responses {
		cancelled += r.Cancel.Count
	}
	if cancelled != 1 {
		t.Errorf("response statistics record %d cancelled responses, want 1: %+v", cancelled, stats[0].Responses)
	}
}

func TestQueuedRequestIsCancelledBeforeExecution(t *testing.T) {
	t.Parallel()
	srv := startServer(t, exampleRepo(t, "repeat_int32"))
	// The first request holds the only instance for 300 ms (WAIT).
	busy := newCollector()
	wait := []core.Input{
		core.NewInput("IN", core.TypeInt32, []int64{1}, int32s(1)),
		core.NewInput("DELAY", core.TypeUint32, []int64{1}, uint32s(0)),
		core.NewInput("WAIT", core.TypeUint32, []int64{1}, uint32s(300)),
	}
	if err := srv.Infer(context.Background(), &core.Submission{Model: "repeat_int32", Inputs: wait}, busy.fn); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	queued := newCollector()
	if err := srv.Infer(ctx, &core.Submission{Model: "repeat_int32", ID: "queued", Inputs: wait}, queued.fn); err != nil {
		t.Fatal(err)
	}
	m, err := srv.Model("repeat_int32", 0)
	if err != nil {
		t.Fatal(err)
	}
	// The first request runs and the second waits in the queue.
	if !testenv.Eventually(func() bool { return m.Counters().Pending == 1 }) {
		t.Errorf("gave up waiting for the first request executing and the second queued: %+v", m.Counters())
	}
	cancel()
	events := queued.wait(t)
	if len(events) != 1 || events[0].resp == nil || core.CodeOf(events[0].resp.Err) != core.CodeCancelled {
		t.Fatalf("cancelled queued request: got %+v, want one CANCELLED final", events)
	}
	busy.wait(t)
}

func TestBackendStatisticsReachTheServer(t *testing.T) {
	t.Parallel()
	srv := startServer(t, exampleRepo(t, "repeat_int32", "square_int32"))
	for range 2 {
		infer(t, srv, &core.Submission{Model: "repeat_int32", Inputs: []core.Input{
			core.NewInput("IN", core.TypeInt32, []int64{2}, int32s(1, 2)),
			core.NewInput("DELAY", core.TypeUint32, []int64{2}, uint32s(0, 0)),
			core.NewInput("WAIT", core.TypeUint32, []int64{1}, uint32s(2)),
		}})
	}
	infer(t, srv, &core.Submission{Model: "square_int32",
		Inputs: []core.Input{core.NewInput("IN", core.TypeInt32, []int64{1}, int32s(3))}})

	// repeat and square report a request where its work ends, which may
	// come after its final response (repeat's Execute holds it for WAIT),
	// so the counts may lag the responses.
	var stats []core.ModelStatistics
	if !testenv.Eventually(func() bool {
		var err error
		stats, err = srv.Statistics("", 0)
		return err == nil && len(stats) == 2 && stats[0].ExecutionCount == 2 && stats[1].ExecutionCount == 1
	}) {
		t.Errorf("gave up waiting for two repeat executions and one square execution in the statistics: %+v", stats)
	}
	if len(stats) != 2 {
		t.FailNow()
	}
	repeat, square := stats[0], stats[1]
	if repeat.Inference.Success.Count != 2 || repeat.InferenceCount != 2 || repeat.ExecutionCount != 2 {
		t.Errorf("repeat: success=%d inferences=%d executions=%d, want 2/2/2",
			repeat.Inference.Success.Count, repeat.InferenceCount, repeat.ExecutionCount)
	}
	if repeat.Inference.ComputeInfer.Ns < 2*uint64(time.Millisecond) {
		t.Errorf("repeat compute time %dns is shorter than its WAIT of 2ms per request", repeat.Inference.ComputeInfer.Ns)
	}
	if len(repeat.Batches) != 1 || repeat.Batches[0].BatchSize != 1 || repeat.Batches[0].ComputeInfer.Count != 2 {
		t.Errorf("repeat batch statistics = %+v", repeat.Batches)
	}
	// square reports per-response statistics (3 responses, indices 0..2)
	// and the request, whose compute time spans its responses.
	if len(square.Responses) != 3 || square.Responses["2"].Success.Count != 1 {
		t.Errorf("square response statistics = %+v", square.Responses)
	}
	if square.Inference.Success.Count != 1 || square.InferenceCount != 1 || square.Inference.ComputeInfer.Ns == 0 ||
		len(square.Batches) != 1 || square.Batches[0].BatchSize != 1 {
		t.Errorf("square: success=%d inferences=%d compute=%dns batches=%+v, want 1/1/non-zero/one of size 1",
			square.Inference.Success.Count, square.InferenceCount, square.Inference.ComputeInfer.Ns, square.Batches)
	}
}
