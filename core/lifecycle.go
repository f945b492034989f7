package core

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

// DefaultBackendCallTimeout is Options.BackendCallTimeout when it is left
// 0: ten minutes, enough for a backend that loads a large model from disk
// or compiles it, short enough that a hung one is noticed the same day.
const DefaultBackendCallTimeout = 10 * time.Minute

// lifecycle runs the steps that load or unload one model version (the calls
// into its backend among them) on a goroutine of its own, so that whoever
// waits for them can stop waiting. A call into a backend cannot be
// interrupted (a C backend may be stuck in a system call, or in a loop):
// the waiter gives up on it instead (wait), when one call runs longer than
// Options.BackendCallTimeout or when the waiter's context ends, and the
// steps go on without it. A load that was given up on no longer makes the
// version ready: as each late call returns, what it created is finalized
// (see Model.loadSteps). An unload that was given up on carries on in its
// order (executions, then instances, then the model) as its calls return.
//
// Until its steps have finished, a lifecycle is listed in its server's set,
// from which Stop reports what it could not finish.
type lifecycle struct {
	m  *Model
	op string // "load" or "unload"

	mu        sync.Mutex
	calls     []*backendCall // running now, oldest first
	awaiting  func() string  // what the steps wait for besides calls (nil: nothing)
	changed   chan struct{}  // closed and replaced when calls or awaiting change
	committed bool           // a load made the version ready: it can no longer be given up
	abandoned bool           // the waiter gave up
	err       error          // the steps' result, set before done is closed
	done      chan struct{}
}

// backendCall is one call into a backend, running.
type backendCall struct {
	what  string // "LoadModel", `NewInstance of instance "m_0"`, ...
	start time.Time
}

// errGivenUp ends the steps of a load that was given up on, once they have
// undone what they created; nobody reads it but the log.
var errGivenUp = errors.New("the server gave up waiting for this load")

// givenUpError is the error of a waiter that gave up on a lifecycle.
type givenUpError struct{ err error }

func (e *givenUpError) Error() string { return e.err.Error() }
func (e *givenUpError) Unwrap() error { return e.err }

// startLifecycle starts steps on a goroutine of their own; first, if not
// nil, says what they wait for until their first call or await.
func (m *Model) startLifecycle(op string, steps func(lc *lifecycle) error, first func() string) *lifecycle {
	lc := &lifecycle{m: m, op: op, awaiting: first, changed: make(chan struct{}), done: make(chan struct{})}
	m.lifecycles.add(lc)
	go func() {
		err := steps(lc)
		m.lifecycles.remove(lc)
		lc.mu.Lock()
		lc.err = err
		close(lc.done)
		lc.mu.Unlock()
	}()
	return lc
}

func (lc *lifecycle) touchLocked() {
	close(lc.changed)
	lc.changed = make(chan struct{})
}

// call runs f, the call into the backend that what describes, as one of the
// lifecycle's calls: wait gives up when it runs too long. A call that
// returns after that is logged.
func (lc *lifecycle) call(what string, f func() error) error {
	c := &backendCall{what: what, start: time.Now()}
	lc.mu.Lock()
	lc.calls = append(lc.calls, c)
	lc.touchLocked()
	lc.mu.Unlock()
	defer func() {
		lc.mu.Lock()
		lc.calls = slices.DeleteFunc(lc.calls, func(x *backendCall) bool { return x == c })
		lc.touchLocked()
		late := lc.abandoned
		lc.mu.Unlock()
		if late {
			lc.m.log.Warnf("%s: %s returned after %v, after the server had given up waiting for the %s", lc.m.ident(), what, time.Since(c.start).Round(time.Millisecond), lc.op)
		}
	}()
	return f()
}

// await runs f, which waits for something other than a backend call (the
// executions to end, say), which describe says.
func (lc *lifecycle) await(describe func() string, f func()) {
	lc.mu.Lock()
	lc.awaiting = describe
	lc.touchLocked()
	lc.mu.Unlock()
	defer func() {
		lc.mu.Lock()
		lc.awaiting = nil
		lc.touchLocked()
		lc.mu.Unlock()
	}()
	f()
}

// givenUp reports whether the waiter gave up.
func (lc *lifecycle) givenUp() bool {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	return lc.abandoned
}

// commit runs f (which makes a loaded version ready, and calls no backend)
// unless the waiter gave up; afterwards the waiter can no longer give up.
func (lc *lifecycle) commit(f func()) bool {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	if lc.abandoned {
		return false
	}
	f()
	lc.committed = true
	return true
}

// wait returns the steps' result, or gives up, with an error saying on
// what, when a backend call has run for timeout or when ctx ends first.
func (lc *lifecycle) wait(ctx context.Context, timeout time.Duration) error {
	for {
		stuck, cause := lc.next(ctx, timeout)
		if stuck == nil && cause == nil {
			select {
			case <-lc.done:
				return lc.err
			default:
				continue
			}
		}
		if err := lc.giveUp(stuck, timeout, cause); err != nil {
			return err
		}
		<-lc.done // finished or committed meanwhile: the result is at hand
		return lc.err
	}
}

// settle waits, without giving anything up, until the steps have finished;
// false when a backend call has run for timeout or ctx ended first.
func (lc *lifecycle) settle(ctx context.Context, timeout time.Duration) bool {
	for {
		if stuck, cause := lc.next(ctx, timeout); stuck != nil || cause != nil {
			return false
		}
		select {
		case <-lc.done:
			return true
		default:
		}
	}
}

// next blocks until the steps change or finish (both results nil), until
// the oldest running backend call has run for timeout (stuck), or until ctx
// ends (cause).
func (lc *lifecycle) next(ctx context.Context, timeout time.Duration) (stuck *backendCall, cause error) {
	lc.mu.Lock()
	changed := lc.changed
	var oldest *backendCall
	if len(lc.calls) > 0 {
		oldest = lc.calls[0]
	}
	lc.mu.Unlock()
	var expired <-chan time.Time
	if oldest != nil {
		timer := time.NewTimer(time.Until(oldest.start.Add(timeout)))
		defer timer.Stop()
		expired = timer.C
	}
	select {
	case <-lc.done:
	case <-changed:
	case <-expired:
		return oldest, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return nil, nil
}

// giveUp marks the lifecycle abandoned and returns why, logged; nil when it
// can no longer be given up (its steps finished or committed).
func (lc *lifecycle) giveUp(stuck *backendCall, timeout time.Duration, cause error) error {
	lc.mu.Lock()
	select {
	case <-lc.done:
		lc.mu.Unlock()
		return nil
	default:
	}
	if lc.committed {
		lc.mu.Unlock()
		return nil
	}
	lc.abandoned = true
	state := lc.describeLocked(time.Now())
	lc.mu.Unlock()
	m := lc.m
	then := "the unload goes on in the background, in its order"
	if lc.op == "load" {
		then = "the version failed to load, and what the backend created is finalized once its calls return"
	}
	if stuck != nil {
		err := Errorf(CodeUnavailable, "%s: %s did not return within %v (%s); a call into a backend cannot be interrupted, so it is left running: %s",
			m.ident(), stuck.what, timeout, m.callTimeoutSetting, then)
		m.log.Errorf("%v", err)
		return &givenUpError{err}
	}
	err := Errorf(CodeUnavailable, "%s: gave up on the %s (%w) while %s; %s", m.ident(), lc.op, cause, state, then)
	m.log.Warnf("%v", err)
	return &givenUpError{err}
}

// describeLocked says what the steps are waiting for.
func (lc *lifecycle) describeLocked(now time.Time) string {
	var parts []string
	for _, c := range lc.calls {
		parts = append(parts, fmt.Sprintf("%s had been running for %v", c.what, now.Sub(c.start).Round(time.Millisecond)))
	}
	if lc.awaiting != nil {
		parts = append(parts, lc.awaiting())
	}
	if len(parts) == 0 {
		return "between two steps"
	}
	return strings.Join(parts, ", and ")
}

// report says which load or unload has not finished, and on what it waits.
func (lc *lifecycle) report() string {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	return fmt.Sprintf("%s: %s not finished: %s", lc.m.ident(), lc.op, lc.describeLocked(time.Now()))
}

// lifecycleSet is the lifecycles of a server whose steps have not finished.
type lifecycleSet struct {
	mu  sync.Mutex
	all map[*lifecycle]struct{}
}

func (s *lifecycleSet) add(lc *lifecycle) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.all == nil {
		s.all = map[*lifecycle]struct{}{}
	}
	s.all[lc] = struct{}{}
}

func (s *lifecycleSet) remove(lc *lifecycle) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.all, lc)
}

func (s *lifecycleSet) list() []*lifecycle {
	s.mu.Lock()
	defer s.mu.Unlock()
	list := make([]*lifecycle, 0, len(s.all))
	for lc := range s.all {
		list = append(list, lc)
	}
	return list
}

// settle waits until the lifecycles in the set have finished, each as
// lifecycle.settle does; Stop gives the steps that go on in the background
// (those of loads and unloads it or another waiter gave up on) the same
// bound as the calls it makes itself.
func (s *lifecycleSet) settle(ctx context.Context, timeout time.Duration) {
	for _, lc := range s.list() {
		if !lc.settle(ctx, timeout) {
			return
		}
	}
}

// reports returns what each unfinished lifecycle waits for, sorted.
func (s *lifecycleSet) reports() []string {
	list := s.list()
	out := make([]string, len(list))
	for i, lc := range list {
		out[i] = lc.report()
	}
	slices.Sort(out)
	return out
}
