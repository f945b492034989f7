package ensemble

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/tritonhost/tritonhost/core"
)

// Scheduler is the core.Scheduler of an ensemble version. It has no
// instances and no queue: each request is a requestRun, which sends the
// steps' requests to their models through the server's own request path
// (core.Server.SubmitStep), so each model's scheduling, validation and
// statistics apply to them. It starts no goroutine: a run moves on in the
// callbacks of its steps' responses, on the threads that deliver them.
type Scheduler struct {
	model    *core.Model
	srv      *core.Server
	plan     *runPlan
	limiters []*stepLimiter // one per step; nil without max_inflight_requests
	wait     time.Duration  // core.Options.EnsembleStepWait
	setting  string         // the name of the setting that sets wait

	mu     sync.Mutex
	closed bool
	runs   map[*requestRun]struct{} // requests in flight
	idle   chan struct{}            // closed when the last run ends after Stop
}

var _ core.Scheduler = (*Scheduler)(nil)

// New returns the scheduler of m, an ensemble version that srv loads: its
// configuration has passed core's checks against the models its steps
// run (and says whether the ensemble is decoupled).
func New(srv *core.Server, m *core.Model) *Scheduler {
	p := newRunPlan(m.Config())
	s := &Scheduler{model: m, srv: srv, plan: p, runs: map[*requestRun]struct{}{}}
	s.wait, s.setting = srv.EnsembleStepWait()
	if p.maxInflight > 0 {
		for range p.steps {
			s.limiters = append(s.limiters, newStepLimiter(p.maxInflight))
		}
	}
	m.Logger().Infof("ensemble %q version %d runs steps %s%s", m.Name(), m.Version(), describeSteps(p), s.note())
	return s
}

// note says what the log line of a loaded ensemble adds to its steps.
func (s *Scheduler) note() string {
	var parts []string
	if s.plan.decoupled {
		parts = append(parts, "decoupled")
	}
	if s.plan.maxInflight > 0 {
		parts = append(parts, fmt.Sprintf("max_inflight_requests %d, waiting at most %v for a slot", s.plan.maxInflight, s.wait))
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, "; ") + ")"
}

// Enqueue starts the request's run; it refuses (CodeUnavailable) only once
// the scheduler stops. What fails from then on (a step model gone, a
// step's error) reaches the request as its error response.
func (s *Scheduler) Enqueue(r *core.Request) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return core.UnloadingError(s.model)
	}
	run := newRequestRun(s, r)
	s.runs[run] = struct{}{}
	s.mu.Unlock()
	r.MarkQueued()
	run.start()
	return nil
}

// Requeue refuses (CodeUnsupported): no backend holds an ensemble's
// request.
func (s *Scheduler) Requeue(r *core.Request) error {
	return core.Errorf(core.CodeUnsupported, "ensemble %q: request %q cannot be rescheduled", s.model.Name(), r.ID())
}

// Start does nothing: a run moves on in its steps' callbacks.
func (s *Scheduler) Start() {}

// Stop refuses new requests and waits for the runs in flight to end.
// When ctx ends first, it cancels them (which reaches every step in
// flight) and returns; they end as their steps do.
func (s *Scheduler) Stop(ctx context.Context) {
	s.mu.Lock()
	s.closed = true
	if len(s.runs) == 0 {
		s.mu.Unlock()
		return
	}
	idle := make(chan struct{})
	s.idle = idle
	s.mu.Unlock()
	select {
	case <-idle:
	case <-ctx.Done():
		s.mu.Lock()
		runs := make([]*requestRun, 0, len(s.runs))
		for run := range s.runs {
			runs = append(runs, run)
		}
		s.mu.Unlock()
		for _, run := range runs {
			run.cancel()
		}
	}
}

// ended forgets a run that has ended.
func (s *Scheduler) ended(run *requestRun) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.runs, run)
	if len(s.runs) == 0 && s.idle != nil {
		close(s.idle)
		s.idle = nil
	}
}

// stepLimiter is Triton's StepInflightRequestLimiter: it bounds how many
// requests of one step are in flight (sent, final response not yet back)
// across every request of the ensemble, so that a step that produces fast
// (a decoupled one, say) waits for the slower steps after it instead of
// piling tensors up in memory.
type stepLimiter struct {
	max int

	mu    sync.Mutex
	n     int
	freed chan struct{} // closed and replaced at each release
}

func newStepLimiter(max int) *stepLimiter {
	return &stepLimiter{max: max, freed: make(chan struct{})}
}

// acquire takes a slot, waiting while all are taken: at most wait, and no
// longer than ctx (the request's cancellation). Past either it takes one
// anyway, as Triton does (a request cancelled goes on to fail; a wait that
// long would rather be a deadlock of steps waiting on each other), and
// reports false after a wait that ran out.
func (l *stepLimiter) acquire(ctx context.Context, wait time.Duration) bool {
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		l.mu.Lock()
		if l.n < l.max {
			l.n++
			l.mu.Unlock()
			return true
		}
		freed := l.freed
		l.mu.Unlock()
		if timer == nil {
			timer = time.NewTimer(wait)
		}
		select {
		case <-freed:
			continue
		case <-ctx.Done():
		case <-timer.C:
		}
		l.mu.Lock()
		l.n++
		l.mu.Unlock()
		return ctx.Err() != nil
	}
}

// release gives a slot back.
func (l *stepLimiter) release() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.n > 0 {
		l.n--
	}
	close(l.freed)
	l.freed = make(chan struct{})
}
