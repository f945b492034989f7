package core

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"
)

// DefaultEnsembleStepWait is Options.EnsembleStepWait when it is left 0:
// Triton's bound (kMutexTimeoutSeconds) on the wait for a step slot.
const DefaultEnsembleStepWait = 300 * time.Second

// ensembleScheduler is the requestScheduler of an ensemble version. It has
// no instances and no queue: each request is an ensembleRun, which sends
// the steps' requests to their models through the server's own request
// path (Server.submit), so each model's scheduling, validation and
// statistics apply to them. It starts no goroutine: a run moves on in the
// callbacks of its steps' responses, on the threads that deliver them.
type ensembleScheduler struct {
	model    *Model
	srv      *Server
	plan     *ensemblePlan
	limiters []*stepLimiter // one per step; nil without max_inflight_requests
	wait     time.Duration  // Options.EnsembleStepWait

	mu     sync.Mutex
	closed bool
	runs   map[*ensembleRun]struct{} // requests in flight
	idle   chan struct{}             // closed when the last run ends after stop
}

var _ Scheduler = (*ensembleScheduler)(nil)

func newEnsembleScheduler(m *Model, srv *Server, plan *ensemblePlan) *ensembleScheduler {
	s := &ensembleScheduler{model: m, srv: srv, plan: plan, wait: srv.opts.EnsembleStepWait, runs: map[*ensembleRun]struct{}{}}
	if plan.maxInflight > 0 {
		for range plan.steps {
			s.limiters = append(s.limiters, newStepLimiter(plan.maxInflight))
		}
	}
	srv.log.Infof("ensemble %q version %d runs steps %s%s", m.name, m.version, describeSteps(plan), s.note())
	return s
}

// note says what the log line of a loaded ensemble adds to its steps.
func (s *ensembleScheduler) note() string {
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

// enqueue starts the request's run. What fails from then on (a step model
// gone, a step's error) reaches the request as its error response.
func (s *ensembleScheduler) Enqueue(r *Request) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return UnloadingError(s.model)
	}
	run := newEnsembleRun(s, r)
	s.runs[run] = struct{}{}
	s.mu.Unlock()
	r.queueStart = Nanotime()
	if r.trace != nil {
		r.trace.Report(TraceQueueStart, r.queueStart)
	}
	run.start()
	return nil
}

// requeue refuses: no backend holds an ensemble's request.
func (s *ensembleScheduler) Requeue(r *Request) error {
	return Errorf(CodeUnsupported, "ensemble %q: request %q cannot be rescheduled", s.model.name, r.ID())
}

func (s *ensembleScheduler) Start() {}

// stop refuses new requests and waits for the runs in flight to end.
// When ctx ends first, it cancels them (which reaches every step in
// flight) and returns; they end as their steps do.
func (s *ensembleScheduler) Stop(ctx context.Context) {
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
		runs := make([]*ensembleRun, 0, len(s.runs))
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
func (s *ensembleScheduler) ended(run *ensembleRun) {
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
