package procs

import (
	"context"
	"slices"
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
		Run(ctx, p, time.Millisecond, func() Sample {
			select {
			case samples <- struct{}{}:
			default:
			}
			return Sample{16, 16}
		})
	}()
	<-samples
	<-samples // the first sample's step has run
	cancel()
	<-done
	if f.n != 2 || p.Raised() {
		t.Fatalf("after Run ended: %d processors, raised %v; want the default 2", f.n, p.Raised())
	}
}
