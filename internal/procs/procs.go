// Package procs gives the Go runtime more processors (Ps) than its default
// while more of the backends' own threads call into Go at once than it has
// processors.
//
// A thread that a backend started itself (a decoupled backend's response
// thread) takes a P each time it calls the server back, and keeps it when
// it returns to C: the runtime takes the P back only when its monitor next
// looks. With more such threads than Ps, the Ps spend their time held by
// threads working in C while the server's goroutines (the streams'
// senders, the connections' writers) wait for one, and the cores go idle.
// One P more than the default lets those goroutines run meanwhile; it is
// given only while the threads outnumber the Ps, as it costs a server
// whose backend threads do not (more context switches per response).
//
// Policy decides; Run drives a Policy from a sampler of the backend
// threads' counts, every Window.
package procs

import (
	"context"
	"runtime"
	"sync/atomic"
	"time"
)

// Defaults of Policy.
const (
	// Window is how often the counts are sampled: the threads that sent
	// within one window are the ones counted as calling in at once.
	Window = 10 * time.Millisecond
	// Hold is how long the extra processors stay after the last window in
	// which the threads outnumbered the default.
	Hold = time.Second
	// QuietAfter is how long no backend thread must have sent before Run
	// samples less often (Policy.Quiet).
	QuietAfter = 2 * time.Second
	// IdleWindow is the longest Run then sleeps between samples: an idle
	// server wakes twice a second for the policy, not a hundred times.
	// Threads that come after such a quiet spell are seen within
	// IdleWindow and Window.
	IdleWindow = 500 * time.Millisecond
)

// Sample is what a sampler reports for one window: Live is how many of the
// backends' own threads that have called the server are still running,
// Active how many of them called it within the window.
type Sample struct {
	Live, Active int64
}

// Policy adds Extra processors to the runtime's default while
// min(Live, Active) exceeds that default, and takes them away Hold after
// the last window where it did. Its zero value does nothing; NewPolicy
// makes one that changes the runtime's setting.
type Policy struct {
	// Extra is how many processors to add (0: none).
	Extra int
	// Hold is how long the extra processors stay once the threads no
	// longer outnumber the default.
	Hold time.Duration

	// Changed, if set, is told each change of the runtime's setting: the
	// processors it now has, and the sample that made the change.
	Changed func(procs int, s Sample)

	// The runtime's setting: get reads it, raise sets it, restore goes
	// back to the runtime's default (tests replace them).
	get     func() int
	raise   func(n int)
	restore func()

	base     int // the default, read when not raised
	raised   bool
	lastBusy time.Time
}

// NewPolicy returns a Policy that adds extra processors to the runtime's
// setting, which must be the runtime's default (GOMAXPROCS not set in the
// environment): the Policy goes back to the default rather than to a
// number.
func NewPolicy(extra int) *Policy {
	return &Policy{Extra: extra, Hold: Hold,
		get:     func() int { return runtime.GOMAXPROCS(0) },
		raise:   func(n int) { runtime.GOMAXPROCS(n) },
		restore: runtime.SetDefaultGOMAXPROCS}
}

// Raised reports whether the extra processors are given.
func (p *Policy) Raised() bool { return p.raised }

// Step applies the sample of the window that ended at now.
func (p *Policy) Step(now time.Time, s Sample) {
	if p.Extra <= 0 || p.get == nil {
		return
	}
	if !p.raised {
		p.base = p.get()
	}
	if min(s.Live, s.Active) > int64(p.base) {
		p.lastBusy = now
		if !p.raised {
			p.raise(p.base + p.Extra)
			p.raised = true
			p.changed(s)
		}
		return
	}
	if p.raised && now.Sub(p.lastBusy) >= p.Hold {
		p.lower(s)
	}
}

// Quiet reports whether none of the backends' threads sent within sample
// s's window and the policy gives nothing: nothing to watch until one
// sends again (threads that stay live without sending, a backend's idle
// pool, count as quiet).
func (p *Policy) Quiet(s Sample) bool {
	return !p.raised && s.Active == 0
}

// lower gives back the extra processors, for sample s.
func (p *Policy) lower(s Sample) {
	p.restore()
	p.raised = false
	p.changed(s)
}

func (p *Policy) changed(s Sample) {
	if p.Changed != nil {
		p.Changed(p.get(), s)
	}
}

// Timing is how often Run samples.
type Timing struct {
	// Window is the time between samples while there is anything to
	// watch.
	Window time.Duration
	// QuietAfter is how long the samples must have been quiet
	// (Policy.Quiet) before Run waits longer between them, doubling the
	// wait up to IdleWindow.
	QuietAfter, IdleWindow time.Duration
}

// DefaultTiming is the server's: Window, QuietAfter and IdleWindow.
var DefaultTiming = Timing{Window: Window, QuietAfter: QuietAfter, IdleWindow: IdleWindow}

// Wake lets the server's response path end a Run's longer wait between
// samples: the first response from a backend after a quiet spell brings
// the window back at once. Poke costs one atomic load while Run samples
// every window, so it sits on every response.
type Wake struct {
	sleeping atomic.Bool
	ch       chan struct{}
}

// NewWake returns a Wake for one Run.
func NewWake() *Wake { return &Wake{ch: make(chan struct{}, 1)} }

// Poke ends the wait of Run if it waits longer than a window.
func (w *Wake) Poke() {
	if w.sleeping.Load() {
		select {
		case w.ch <- struct{}{}:
		default:
		}
	}
}

// Run steps p with sample every window until ctx ends, then gives back
// what p added. Once the samples have been quiet for t.QuietAfter it
// samples less and less often, up to every t.IdleWindow, and goes back to
// every window at the first sample that is not quiet, or at once when
// wake (if not nil) is poked. A sample after a wait longer than a window
// only decides the next wait: its count of threads sending spans the
// whole wait, not one window.
//
// Sampling every window while backend threads come and go is not only
// for the policy: in alternating runs of the stream benchmarks, waiting
// up to 500 ms whenever the policy could not raise (rather than only
// after a quiet spell) cost one square stream 0.72-0.79 of the pushing
// server against 0.81-0.96, and 16 streams 0.74-0.77 against 0.82-0.90.
// Why was not traced; a thread woken for the timer also looks for
// goroutines to steal, among them one left runnable on a processor that a
// backend's thread holds in C, which otherwise waits for the runtime's
// monitor to take that processor back.
func Run(ctx context.Context, p *Policy, t Timing, sample func() Sample, wake *Wake) {
	wait := t.Window
	var quietSince time.Time // zero: the last sample was not quiet
	var poked <-chan struct{}
	if wake != nil {
		poked = wake.ch
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			if p.raised {
				p.lower(Sample{})
			}
			return
		case <-poked:
			if wait > t.Window {
				sample() // ends the long window: it spans the quiet spell
				wait, quietSince = t.Window, time.Time{}
				wake.sleeping.Store(false)
				timer.Reset(wait)
			}
		case now := <-timer.C:
			s := sample()
			if wait <= t.Window {
				p.Step(now, s)
			}
			switch {
			case !p.Quiet(s):
				quietSince = time.Time{}
			case quietSince.IsZero():
				quietSince = now
			}
			idle := !quietSince.IsZero() && now.Sub(quietSince) >= t.QuietAfter
			wait = nextWait(wait, t.Window, t.IdleWindow, idle)
			if wake != nil {
				wake.sleeping.Store(wait > t.Window)
			}
			timer.Reset(wait)
		}
	}
}

// nextWait is the wait before the next sample, after one that came after
// wait: window while the policy watches, doubling up to idleWindow while
// it is idle.
func nextWait(wait, window, idleWindow time.Duration, idle bool) time.Duration {
	if !idle {
		return window
	}
	return max(min(2*wait, idleWindow), window)
}
