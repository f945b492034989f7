package core_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/coretest"
)

// TestStatisticsAddUpWhatBackendsReport: request and batch statistics are
// the sums of what the backend reported, per batch size.
func TestStatisticsAddUpWhatBackendsReport(t *testing.T) {
	t.Parallel()
	p := coretest.NewProvider().Set("m", coretest.Reporting(true, coretest.Echo()))
	srv := coretest.Start(t, p, coretest.ModelDir{Name: "m", Config: batchingConfig}, coretest.ModelDir{Name: "idle", Config: vectorConfig()})
	before := uint64(time.Now().UnixMilli())
	coretest.Succeeded(t, coretest.Infer(t, srv, rows("a", 1)), coretest.Infer(t, srv, rows("b", 2)), coretest.Infer(t, srv, rows("c", 4)), coretest.Infer(t, srv, rows("d", 4)))
	after := uint64(time.Now().UnixMilli())
	time.Sleep(20 * time.Millisecond) // the last inference stays when it was
	st := coretest.Statistics(t, srv, "m")
	inf := st.Inference
	// Wall-clock milliseconds, made of a monotonic reading: within a
	// millisecond of the requests' span either way.
	if st.InferenceCount != 11 || st.ExecutionCount != 4 || st.LastInference+1 < before || st.LastInference > after+1 {
		t.Errorf("inference count %d, execution count %d, last inference %d; want 11, 4, within [%d, %d]", st.InferenceCount, st.ExecutionCount, st.LastInference, before, after)
	}
	if idle := coretest.Statistics(t, srv, "idle"); idle.LastInference != 0 {
		t.Errorf("a model that never executed: last inference %d, want 0", idle.LastInference)
	}
	for name, got := range map[string]core.Duration{"compute input": inf.ComputeInput, "compute infer": inf.ComputeInfer, "compute output": inf.ComputeOutput} {
		want := map[string]uint64{"compute input": 4 * 10, "compute infer": 4 * 20, "compute output": 4 * 30}[name]
		if got.Count != 4 || got.Ns != want {
			t.Errorf("%s %+v, want 4 in %d ns", name, got, want)
		}
	}
	if inf.Success.Count != 4 || inf.Success.Ns < 4*60 || inf.Queue.Count != 4 || inf.Fail.Count != 0 {
		t.Errorf("success %+v (want 4, at least 240 ns), queue %+v (want 4), fail %+v (want 0)", inf.Success, inf.Queue, inf.Fail)
	}
	want := []core.BatchStatistics{
		{BatchSize: 1, ComputeInput: core.Duration{Count: 1, Ns: 100}, ComputeInfer: core.Duration{Count: 1, Ns: 200}, ComputeOutput: core.Duration{Count: 1, Ns: 300}},
		{BatchSize: 2, ComputeInput: core.Duration{Count: 1, Ns: 100}, ComputeInfer: core.Duration{Count: 1, Ns: 200}, ComputeOutput: core.Duration{Count: 1, Ns: 300}},
		{BatchSize: 4, ComputeInput: core.Duration{Count: 2, Ns: 200}, ComputeInfer: core.Duration{Count: 2, Ns: 400}, ComputeOutput: core.Duration{Count: 2, Ns: 600}},
	}
	if len(st.Batches) != len(want) {
		t.Fatalf("batch statistics %+v, want %+v", st.Batches, want)
	}
	for i := range want {
		if st.Batches[i] != want[i] {
			t.Errorf("batch statistics %+v, want %+v", st.Batches[i], want[i])
		}
	}

	all, err := srv.Statistics("", 0)
	if err != nil || len(all) != 2 || all[0].Name != "idle" || all[1].Name != "m" || all[0].ExecutionCount != 0 {
		t.Errorf("Statistics of every model: %+v, %v; want idle (untouched) then m", all, err)
	}
	for _, q := range []struct {
		name    string
		version int64
	}{{"nope", 0}, {"m", 2}} {
		if _, err := srv.Statistics(q.name, q.version); core.CodeOf(err) != core.CodeNotFound {
			t.Errorf("Statistics(%q, %d): %v, want NOT_FOUND", q.name, q.version, err)
		}
	}
}

// TestStatisticsCountFailures: a request fails in the statistics when the
// backend reports it failed, when Execute returns an error, or when it is
// cancelled in the queue, and never counts as a success or an inference.
func TestStatisticsCountFailures(t *testing.T) {
	for _, tc := range []struct {
		name    string
		backend coretest.Behaviour
		cancel  bool // cancel the request while it waits behind a busy instance
	}{
		{"the backend reports a failure", coretest.Reporting(false, coretest.Echo()), false},
		{"Execute returns an error", coretest.Fail(errors.New("no")), false},
		{"cancelled in the queue", coretest.Echo(), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv, p, gate := coretest.StartGated(t, "m", batchingConfig)
			p.Set("m", coretest.Gated(gate, func(x *coretest.Exec) error {
				if x.Batch[0].ID() == "busy" {
					return coretest.Echo()(x)
				}
				return tc.backend(x)
			}, "busy"))
			busy := coretest.Infer(t, srv, rows("busy", 4))
			p.Reached(t, "busy")
			ctx, cancel := context.WithCancel(context.Background())
			reply := coretest.InferCtx(t, ctx, srv, rows("r", 2))
			if tc.cancel {
				coretest.Settle(t, cancel)
			}
			gate.Open()
			coretest.Succeeded(t, busy)
			reply.Wait(t)
			cancel()
			st := coretest.Statistics(t, srv, "m")
			if inf := st.Inference; inf.Fail.Count != 1 || inf.Success.Count != 0 || st.InferenceCount != 0 {
				t.Errorf("fail %+v, success %+v, inferences %d; want 1 failure only", inf.Fail, inf.Success, st.InferenceCount)
			}
		})
	}
}

// TestDecoupledResponseStatistics: each response a decoupled backend
// reports counts under its index, as a success (with compute infer and
// output), a failure, an empty response (no compute output start) or a
// cancellation.
func TestDecoupledResponseStatistics(t *testing.T) {
	t.Parallel()
	answer := func(x *coretest.Exec, r *core.Request) {
		report := func(computeOutput, end uint64, outcome core.ResponseOutcome) {
			start := core.Nanotime()
			if computeOutput > 0 {
				computeOutput += start
			}
			x.Instance.ReportResponseStatistics(r.Responder(), start, computeOutput, start+end, outcome)
		}
		for range 2 {
			_ = x.Send(r, coretest.EchoResponse(r), false)
			report(5, 15, core.ResponseSucceeded)
		}
		_ = x.Send(r, &core.Response{Err: core.Errorf(core.CodeInternal, "one went wrong")}, false)
		report(4, 24, core.ResponseFailed)
		report(0, 7, core.ResponseSucceeded) // an iteration with nothing to send
		report(0, 9, core.ResponseCancelled)
		_ = x.SendFinal(r)
	}
	srv, _ := serveModel(t, vectorConfig(decoupled), coretest.Async(answer))
	for _, id := range []string{"a", "b"} {
		if got := coretest.Infer(t, srv, vector(id, 1)).Wait(t); len(got.Responses) != 3 || !got.FlagsOnlyFinal {
			t.Fatalf("request %s: %d responses (flags-only final %v), want 3 and a flags-only final", id, len(got.Responses), got.FlagsOnlyFinal)
		}
	}
	two := func(ns uint64) core.Duration { return core.Duration{Count: 2, Ns: 2 * ns} }
	ok := core.ResponseStatistics{ComputeInfer: two(5), ComputeOutput: two(10), Success: two(15)}
	want := map[string]core.ResponseStatistics{
		"0": ok, "1": ok,
		"2": {ComputeInfer: two(4), ComputeOutput: two(20), Fail: two(24)},
		"3": {EmptyResponse: two(7)},
		"4": {Cancel: two(9)},
	}
	got := coretest.Statistics(t, srv, "m").Responses
	if len(got) != len(want) {
		t.Errorf("response statistics for %d indices, want %d: %+v", len(got), len(want), got)
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("response %s: %+v, want %+v", k, got[k], w)
		}
	}
}

// TestResponseStatisticsStayBounded: requests with many more responses
// than ResponseStatsCap leave one key per index below the cap and one key,
// the cap's, for every later response; the counts and durations still add
// up to every response reported.
func TestResponseStatisticsStayBounded(t *testing.T) {
	t.Parallel()
	for _, n := range []int{core.ResponseStatsCap - 1, core.ResponseStatsCap, 3*core.ResponseStatsCap + 7} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			t.Parallel()
			srv, _ := serveModel(t, vectorConfig(decoupled), coretest.Async(coretest.ReportedStream(n)))
			const requests = 2
			for i := range requests {
				if got := coretest.Infer(t, srv, vector(fmt.Sprint("r", i), 1)).Wait(t); len(got.Responses) != n || !got.FlagsOnlyFinal {
					t.Fatalf("request %d: %d responses (flags-only final %v), want %d and a flags-only final", i, len(got.Responses), got.FlagsOnlyFinal, n)
				}
			}
			got := coretest.Statistics(t, srv, "m").Responses
			if want := min(n, core.ResponseStatsCap+1); len(got) != want {
				t.Errorf("%d keys, want %d", len(got), want)
			}
			var total uint64
			for k, r := range got {
				i, err := strconv.Atoi(k)
				if err != nil || i < 0 || i > core.ResponseStatsCap {
					t.Errorf("key %q is not a decimal index from 0 to %d", k, core.ResponseStatsCap)
					continue
				}
				want := uint64(requests)
				if i == core.ResponseStatsCap {
					want = uint64(requests * (n - core.ResponseStatsCap))
				}
				c := r.Success.Count
				if c != want || r.Success.Ns != c*coretest.StreamTotalNs || r.ComputeInfer != (core.Duration{Count: c, Ns: c * coretest.StreamInferNs}) ||
					r.ComputeOutput != (core.Duration{Count: c, Ns: c * coretest.StreamOutputNs}) || r.Fail.Count+r.EmptyResponse.Count+r.Cancel.Count != 0 {
					t.Errorf("key %s: %+v, want %d successes of %d ns each (%d infer, %d output)", k, r, want, coretest.StreamTotalNs, coretest.StreamInferNs, coretest.StreamOutputNs)
				}
				total += c
			}
			if total != uint64(requests*n) {
				t.Errorf("%d responses counted, want %d", total, requests*n)
			}
		})
	}
}

// TestResponseStatisticsOfConcurrentStreamsAddUp: the response statistics
// of many requests streamed at once, more than the shards they are kept
// in, add up per index to every response each request reported.
func TestResponseStatisticsOfConcurrentStreamsAddUp(t *testing.T) {
	t.Parallel()
	const requests, n = 20, 50
	srv, _ := serveModel(t, vectorConfig(decoupled), coretest.Async(coretest.ReportedStream(n)))
	var calls []*coretest.Collector
	for i := range requests {
		calls = append(calls, coretest.Infer(t, srv, vector(fmt.Sprint("r", i), 1)))
	}
	for i, c := range calls {
		if got := c.Wait(t); len(got.Responses) != n {
			t.Fatalf("request %d: %d responses, want %d", i, len(got.Responses), n)
		}
	}
	got := coretest.Statistics(t, srv, "m").Responses
	if len(got) != n {
		t.Errorf("%d keys, want %d", len(got), n)
	}
	for i := range n {
		r := got[strconv.Itoa(i)]
		if r.Success.Count != requests || r.Success.Ns != requests*coretest.StreamTotalNs ||
			r.ComputeInfer != (core.Duration{Count: requests, Ns: requests * coretest.StreamInferNs}) {
			t.Errorf("index %d: %+v, want %d successes of %d ns each", i, r, requests, coretest.StreamTotalNs)
		}
	}
}
