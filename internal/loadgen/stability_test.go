package loadgen

import (
	"context"
	"errors"
	"testing"
	"time"

	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
)

// window is a fake measurement: n requests in one second, each taking
// latency, but for 15% of them 1.5 times that when tail is set (the mean
// 7.5% more, the p90 50% more).
func window(n int, latency time.Duration, tail bool) Result {
	w := Result{Window: time.Second, Requests: int64(n), Responses: int64(n), latency: new(Histogram), first: new(Histogram)}
	for i := range n {
		d := latency
		if tail && i%20 < 3 {
			d = latency * 3 / 2
		}
		w.latency.Record(d)
	}
	w.Latency = w.latency.Summary()
	return w
}

func TestStabilityComparesTheLastWindowsThroughputAndLatency(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		name    string
		rule    Stability
		windows []Result
		stable  bool
	}{
		{"three equal windows", DefaultStability,
			[]Result{window(100, ms, false), window(100, ms, false), window(100, ms, false)}, true},
		{"too few windows", DefaultStability,
			[]Result{window(100, ms, false), window(100, ms, false)}, false},
		{"throughput 10% apart is within", DefaultStability,
			[]Result{window(100, ms, false), window(110, ms, false), window(105, ms, false)}, true},
		{"throughput 11% apart is not", DefaultStability,
			[]Result{window(100, ms, false), window(111, ms, false), window(105, ms, false)}, false},
		{"latency 20% apart is not", DefaultStability,
			[]Result{window(100, ms, false), window(100, 1200*time.Microsecond, false), window(100, ms, false)}, false},
		{"only the last three count", DefaultStability,
			[]Result{window(10, 9*ms, false), window(100, ms, false), window(100, ms, false), window(100, ms, false)}, true},
		{"a window without requests is never stable", DefaultStability,
			[]Result{window(0, ms, false), window(0, ms, false), window(0, ms, false)}, false},
		{"a wider percentage accepts more", Stability{Windows: 3, Percentage: 50, MaxTrials: 10},
			[]Result{window(100, ms, false), window(140, ms, false), window(100, 1400*time.Microsecond, false)}, true},
		{"two windows may be enough", Stability{Windows: 2, Percentage: 10, MaxTrials: 10},
			[]Result{window(50, ms, false), window(100, ms, false), window(100, ms, false)}, true},
		// The means differ by 7.5%, the p90s by 50%: the percentile
		// decides.
		{"by mean latency", DefaultStability,
			[]Result{window(100, ms, true), window(100, ms, false), window(100, ms, false)}, true},
		{"by p90 latency", Stability{Windows: 3, Percentage: 10, MaxTrials: 10, Percentile: 90},
			[]Result{window(100, ms, true), window(100, ms, false), window(100, ms, false)}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.rule.Stable(tc.windows); got != tc.stable {
				t.Errorf("Stable = %v, want %v", got, tc.stable)
			}
		})
	}
}

func TestSettleMeasuresUntilStableOrMaxTrials(t *testing.T) {
	ms := time.Millisecond
	// fake returns the windows of seq one by one.
	fake := func(seq ...Result) func() (Result, error) {
		return func() (Result, error) {
			if len(seq) == 0 {
				return Result{}, errors.New("asked for one window too many")
			}
			w := seq[0]
			seq = seq[1:]
			return w, nil
		}
	}
	warm, steady := window(40, 5*ms, false), window(100, ms, false)

	got, err := DefaultStability.Settle(fake(warm, warm, steady, steady, steady))
	if err != nil || len(got) != 5 {
		t.Errorf("settling after two warm-up windows: %d windows, %v; want 5 and stable", len(got), err)
	}

	rule := Stability{Windows: 3, Percentage: 10, MaxTrials: 4}
	got, err = rule.Settle(fake(warm, steady, warm, steady))
	if !errors.Is(err, ErrUnstable) || len(got) != 4 {
		t.Errorf("never settling: %d windows, %v; want MaxTrials=4 and ErrUnstable", len(got), err)
	}

	boom := errors.New("stream broken")
	calls := 0
	got, err = DefaultStability.Settle(func() (Result, error) {
		if calls++; calls == 2 {
			return Result{}, boom
		}
		return steady, nil
	})
	if !errors.Is(err, boom) || len(got) != 1 {
		t.Errorf("a failing window: %d windows, %v; want 1 and its error", len(got), err)
	}

	for _, bad := range []Stability{{Windows: 0, MaxTrials: 3}, {Windows: 3, MaxTrials: 2},
		{Windows: 3, MaxTrials: 3, Percentage: -1}, {Windows: 3, MaxTrials: 3, Percentile: 100}} {
		if _, err := bad.Settle(fake()); err == nil {
			t.Errorf("%+v was accepted", bad)
		}
	}
}

func TestMergeAddsWindowsUp(t *testing.T) {
	a, b := window(100, time.Millisecond, false), window(300, 3*time.Millisecond, false)
	a.Errors, b.FirstError = 2, "refused"
	m := Merge([]Result{a, b})
	if m.Requests != 400 || m.Window != 2*time.Second || m.Errors != 2 || m.FirstError != "refused" || m.Throughput() != 200 {
		t.Errorf("merged %+v", m)
	}
	// 100 at 1 ms and 300 at 3 ms: mean 2.5 ms, median 3 ms.
	if m.Latency.Mean != 2500*time.Microsecond || m.Latency.Min != time.Millisecond || m.LatencyAt(0.5) < 2900*time.Microsecond {
		t.Errorf("merged latency %+v", m.Latency)
	}
	if (Merge(nil) != Result{}) {
		t.Error("merging no windows gave something")
	}
}

// TestWindowsOfALoadFollowOneAnother: Measure cuts a running load into
// windows with no gap between them: together they count every request the
// server answered while they ran, and they last as long as asked, within
// the time measured.
func TestWindowsOfALoadFollowOneAnother(t *testing.T) {
	const concurrency = 2
	f := &fakeServer{delay: time.Millisecond, perRequest: 1}
	l, err := Start(context.Background(), Config{Client: dialFake(t, f), Request: &pb.ModelInferRequest{ModelName: "m"},
		Mode: Unary, Concurrency: concurrency})
	if err != nil {
		t.Fatal(err)
	}
	begin := time.Now()
	if _, err := l.Measure(100 * time.Millisecond); err != nil { // a warm-up, as perf has
		t.Fatal(err)
	}
	answered := f.answered.Load()
	var windows []Result
	for range 3 {
		w, err := l.Measure(150 * time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		windows = append(windows, w)
	}
	elapsed, answered := time.Since(begin), f.answered.Load()-answered
	if err := l.Stop(); err != nil {
		t.Fatal(err)
	}
	var sum time.Duration
	var requests int64
	for i, w := range windows {
		if w.Errors != 0 || w.Window < 150*time.Millisecond || w.Concurrency != concurrency {
			t.Errorf("window %d: %+v", i, w)
		}
		sum += w.Window
		requests += w.Requests
	}
	// Up to one request per worker may be answered on either side of the
	// first and the last cut.
	if requests == 0 || requests < answered-2*concurrency || requests > answered+2*concurrency {
		t.Errorf("the windows counted %d requests; the server answered %d while they ran", requests, answered)
	}
	if sum > elapsed || sum < 450*time.Millisecond {
		t.Errorf("the windows add up to %v, in %v from the warm-up's start", sum, elapsed)
	}
	if m := Merge(windows); m.Requests != requests {
		t.Errorf("merged %d requests of %d", m.Requests, requests)
	}
	if _, err := l.Measure(time.Millisecond); err == nil {
		t.Error("a stopped load measured a window")
	}
	if err := l.Stop(); err != nil {
		t.Errorf("a second Stop: %v", err)
	}
}

// TestMeasureEndsWithTheContext: a window cut short by the load's context
// ends at once with the context's error, not at the window's end.
func TestMeasureEndsWithTheContext(t *testing.T) {
	f := &fakeServer{delay: time.Millisecond, perRequest: 1}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	begin := time.Now()
	_, err := Run(ctx, Config{Client: dialFake(t, f), Request: &pb.ModelInferRequest{ModelName: "m"},
		Mode: Unary, Concurrency: 2, Window: time.Minute})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Run past its context: %v, want the context's error", err)
	}
	if d := time.Since(begin); d > 30*time.Second {
		t.Errorf("Run took %v after its context ended", d)
	}
}
