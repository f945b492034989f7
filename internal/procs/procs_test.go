package procs

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"time"
)

// fakeRuntime stands for the runtime's processor setting.
type fakeRuntime struct {
	def, n int
	sets   int
}

func (f *fakeRuntime) policy(extra int, hold time.Duration) *Policy {
	f.n = f.def
	return &Policy{Extra: extra, Hold: hold,
		get:     func() int { return f.n },
		raise:   func(n int) { f.n = n; f.sets++ },
		restore: func() { f.n = f.def; f.sets++ }}
}

func TestPolicyAddsProcessorsWhileBackendThreadsOutnumberThem(t *testing.T) {
	type step struct {
		at     time.Duration
		s      Sample
		procs  int // the setting after the step
		raised bool
	}
	for _, tc := range []struct {
		name  string
		extra int
		steps []step
	}{
		{"one thread never", 1, []step{
			{0, Sample{1, 1}, 2, false},
			{10 * time.Millisecond, Sample{2, 2}, 2, false},
		}},
		{"more live threads than Ps, most idle", 1, []step{
			{0, Sample{8, 1}, 2, false},
		}},
		{"many threads sending one after another (a thread per short request)", 1, []step{
			{0, Sample{1, 30}, 2, false},
		}},
		{"more threads sending at once than Ps", 1, []step{
			{0, Sample{16, 16}, 3, true},
			{10 * time.Millisecond, Sample{16, 16}, 3, true},
			{500 * time.Millisecond, Sample{0, 0}, 3, true},   // held
			{1010 * time.Millisecond, Sample{0, 0}, 2, false}, // a second after the last busy window
			{1020 * time.Millisecond, Sample{3, 3}, 3, true},
		}},
		{"two extra", 2, []step{
			{0, Sample{4, 3}, 4, true},
		}},
		{"off", 0, []step{
			{0, Sample{16, 16}, 2, false},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeRuntime{def: 2}
			p := f.policy(tc.extra, time.Second)
			start := time.Now()
			for i, s := range tc.steps {
				p.Step(start.Add(s.at), s.s)
				if f.n != s.procs || p.Raised() != s.raised {
					t.Fatalf("step %d (%+v at %v): %d processors, raised %v; want %d, %v", i, s.s, s.at, f.n, p.Raised(), s.procs, s.raised)
				}
			}
		})
	}
}

func TestPolicySetsTheRuntimeOnlyWhenItChanges(t *testing.T) {
	f := &fakeRuntime{def: 2}
	p := f.policy(1, time.Second)
	var told []int
	p.Changed = func(n int, _ Sample) { told = append(told, n) }
	now := time.Now()
	for i := range 100 {
		p.Step(now.Add(time.Duration(i)*Window), Sample{16, 16})
	}
	p.Step(now.Add(100*Window+time.Second), Sample{})
	if f.sets != 2 || !slices.Equal(told, []int{3, 2}) {
		t.Fatalf("100 busy windows, then a second of none: set the runtime %d times, told %v; want twice, [3 2]", f.sets, told)
	}
}

func TestRunGivesBackWhatItAddedWhenItEnds(t *testing.T) {
	f := &fakeRuntime{def: 2}
	p := f.policy(1, time.Hour)
	ctx, cancel := context.WithCancel(context.Background())
	samples := make(chan struct{}, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		Run(ctx, p, Timing{Window: time.Millisecond, QuietAfter: time.Hour, IdleWindow: time.Millisecond}, func() Sample {
			select {
			case samples <- struct{}{}:
			default:
			}
			return Sample{16, 16}
		}, nil)
	}()
	<-samples
	<-samples // the first sample's step has run
	cancel()
	<-done
	if f.n != 2 || p.Raised() {
		t.Fatalf("after Run ended: %d processors, raised %v; want the default 2", f.n, p.Raised())
	}
}

func TestNextWaitBacksOffWhileIdle(t *testing.T) {
	const window, idle = 10 * time.Millisecond, 500 * time.Millisecond
	for _, tc := range []struct {
		wait   time.Duration
		isIdle bool
		want   time.Duration
	}{
		{window, false, window},
		{idle, false, window}, // threads again: back to the window at once
		{window, true, 2 * window},
		{160 * time.Millisecond, true, 320 * time.Millisecond},
		{320 * time.Millisecond, true, idle},
		{idle, true, idle},
		{0, true, window},
	} {
		if got := nextWait(tc.wait, window, idle, tc.isIdle); got != tc.want {
			t.Errorf("after a wait of %v, idle %v: next wait %v, want %v", tc.wait, tc.isIdle, got, tc.want)
		}
	}
}

// TestRunSamplesSeldomOnceQuietAndRaisesOnceThreadsCome runs the policy
// on a sampler that sees a backend thread send now and then, then threads
// live that do not send, then more threads sending than processors: with a thread now and then it samples
// every window; quiet for longer than QuietAfter, far less often; and
// when the threads come, the sample after the long wait only brings the
// window back (its threads counted over the whole wait), and the next one
// raises.
func TestRunSamplesSeldomOnceQuietAndRaisesOnceThreadsCome(t *testing.T) {
	timing := Timing{Window: time.Millisecond, QuietAfter: 50 * time.Millisecond, IdleWindow: 20 * time.Millisecond}
	f := &fakeRuntime{def: 2}
	p := f.policy(1, time.Hour)
	ctx, cancel := context.WithCancel(context.Background())
	type call struct {
		raised bool // before this sample's step
		busy   bool // what this sample reported
	}
	const (
		someThread = iota // one thread sends in every tenth sample
		quiet
		busy
	)
	var phase atomic.Int32
	var n int
	calls := make(chan call, 100000)
	done := make(chan struct{})
	go func() {
		defer close(done)
		Run(ctx, p, timing, func() Sample {
			ph := phase.Load()
			calls <- call{p.Raised(), ph == busy} // on Run's goroutine: no race with Step
			n++
			switch {
			case ph == busy:
				return Sample{16, 16}
			case ph == someThread && n%10 == 0:
				return Sample{1, 1}
			case ph == someThread:
				return Sample{1, 0}
			}
			return Sample{4, 0} // live, none sending: quiet
		}, nil)
	}()
	// A thread now and then: every window, as before the quiet spell.
	time.Sleep(200 * time.Millisecond)
	if got := len(calls); got < 50 {
		t.Errorf("%d samples in 200 ms with a thread sending now and then, a %v window: it backed off", got, timing.Window)
	}
	for len(calls) > 0 {
		<-calls
	}
	phase.Store(quiet)
	time.Sleep(300 * time.Millisecond)
	// Every window for 50 ms, then 2, 4, 8, 16 ms, then every 20 ms: about
	// 75 samples in 300 ms, where sampling every window would take 300.
	if got := len(calls); got > 150 {
		t.Errorf("%d samples in 300 ms, quiet after %v, with a %v window and a %v idle window", got, timing.QuietAfter, timing.Window, timing.IdleWindow)
	}
	phase.Store(busy)
	var after []call // from the first busy sample
	timeout := time.After(10 * time.Second)
	for len(after) < 3 {
		select {
		case c := <-calls:
			if c.busy {
				after = append(after, c)
			}
		case <-timeout:
			t.Fatalf("samples since the threads came: %+v", after)
		}
	}
	cancel()
	<-done
	if after[1].raised || !after[2].raised {
		t.Errorf("raised before each of the first three busy samples: %v, %v, %v; want false, false, true",
			after[0].raised, after[1].raised, after[2].raised)
	}
	if f.n != 2 || p.Raised() {
		t.Errorf("after Run ended: %d processors, raised %v; want the default 2", f.n, p.Raised())
	}
}

// TestWakeEndsALongWait pokes a Run that waits between samples for much
// longer than the test lasts: the poke brings the window back at once,
// and a poke while it samples every window does nothing.
func TestWakeEndsALongWait(t *testing.T) {
	timing := Timing{Window: time.Millisecond, QuietAfter: 10 * time.Millisecond, IdleWindow: time.Hour}
	f := &fakeRuntime{def: 2}
	p := f.policy(1, time.Hour)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	wake := NewWake()
	wake.Poke() // not sleeping: nothing
	var active atomic.Bool
	samples := make(chan struct{}, 100000)
	done := make(chan struct{})
	go func() {
		defer close(done)
		Run(ctx, p, timing, func() Sample {
			samples <- struct{}{}
			if active.Load() {
				return Sample{0, 1}
			}
			return Sample{}
		}, wake)
	}()
	// Quiet for 10 ms, then waits of 2, 4, 8 ... ms: asleep for good well
	// within the test's timeout.
	deadline := time.Now().Add(10 * time.Second)
	for !wake.sleeping.Load() || len(samples) > 0 {
		if time.Now().After(deadline) {
			t.Fatal("Run never waited longer than a window while quiet")
		}
		select {
		case <-samples:
		case <-time.After(time.Second):
		}
	}
	time.Sleep(300 * time.Millisecond) // within a wait that doubles each time
	for len(samples) > 0 {
		<-samples
	}
	active.Store(true)
	wake.Poke()
	timeout := time.After(10 * time.Second)
	for range 20 {
		select {
		case <-samples:
		case <-timeout:
			t.Fatal("poked: the samples did not come back")
		}
	}
	if wake.sleeping.Load() {
		t.Error("sampling every window again, but the Wake says Run sleeps")
	}
	cancel()
	<-done
}
