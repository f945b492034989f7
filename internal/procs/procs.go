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
	// IdleWindow is the longest Run sleeps between samples while the
	// threads cannot outnumber the processors (Policy.Waiting): an idle
	// server wakes twice a second for the policy, not a hundred times. A
	// load of many backend threads is seen within IdleWindow and Window.
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

// Waiting reports whether, after sample s, no window can raise the
// processors until more of the backends' threads run: the policy is off,
// or has given nothing and no more threads are live than the runtime's
// processors (a sample counts at most its live threads as sending at
// once).
func (p *Policy) Waiting(s Sample) bool {
	if p.Extra <= 0 || p.get == nil {
		return true
	}
	return !p.raised && s.Live <= int64(p.get())
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

// Run steps p with sample every window until ctx ends, then gives back
// what p added. While p is Waiting it samples less and less often, up to
// every idleWindow; a sample after such a longer wait only brings the
// window back (its count of threads sending spans the whole wait, not one
// window), and the next decides.
func Run(ctx context.Context, p *Policy, window, idleWindow time.Duration, sample func() Sample) {
	wait := window
	t := time.NewTimer(wait)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			if p.raised {
				p.lower(Sample{})
			}
			return
		case now := <-t.C:
			s := sample()
			if wait <= window {
				p.Step(now, s)
			}
			wait = nextWait(wait, window, idleWindow, p.Waiting(s))
			t.Reset(wait)
		}
	}
}

// nextWait is the wait before the next sample, after one that came after
// wait: window while the policy watches, doubling up to idleWindow while
// it is waiting.
func nextWait(wait, window, idleWindow time.Duration, waiting bool) time.Duration {
	if !waiting {
		return window
	}
	return max(min(2*wait, idleWindow), window)
}
