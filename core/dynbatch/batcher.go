package dynbatch

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/internal/testhooks"
)

// Batcher queues the requests of one model version and hands them to the
// version's instances. It runs one worker goroutine per active instance;
// one worker at a time (the one holding token) waits for and forms the
// next batch, as Triton's dynamic batcher does, then takes an idle
// instance and executes the batch on it. Without dynamic batching a batch
// is one request.
//
// An instance executes one batch at a time: whoever executes on it (a
// worker, or a submitter running its request inline) has taken it from
// idle and gives it back after Execute returns. A request submitted with
// Submission.Inline runs on its submitter's goroutine when it would
// otherwise start at once: nothing is queued or being placed ahead of it,
// an instance is idle, and the batcher would not wait to fill a batch
// (no dynamic batching, or no max_queue_delay_microseconds).
type Batcher struct {
	model   *core.Model
	workers []*core.Instance

	mu      sync.Mutex
	queue   *priorityQueue
	closed  bool // no new requests
	drained bool // the workers have finished: nothing more runs
	// placing counts batches taken off the queue and not yet on an
	// instance; it rises under mu, so that an inline request, which looks
	// under mu, never overtakes one.
	placing atomic.Int32

	wake    chan struct{}       // capacity 1: a request arrived, the queue closed, or Stop gave up
	token   chan struct{}       // capacity 1: held by the worker forming a batch, where there are several
	idle    chan *core.Instance // the instances executing nothing (capacity: one per worker)
	aborted chan struct{}       // closed when Stop gives up waiting
	wg      sync.WaitGroup      // the workers and the inline executions

	// holdUntil: with Triton's test hook TRITONSERVER_DELAY_SCHEDULER
	// set, nothing runs until this many requests are queued (then it is
	// 0, for good). Guarded by mu.
	holdUntil int

	batching  bool
	maxBatch  uint64
	preferred []uint64
	delay     time.Duration
}

var _ core.Scheduler = (*Batcher)(nil)

// New returns the batcher of m, whose instances exist: one queue, and
// dynamic batching when the configuration has dynamic_batching and the
// model batches (max_batch_size > 0). It shares device locks among m's
// instances when the backend asks for them (Model.ShareDeviceLocks).
func New(m *core.Model) *Batcher {
	s := &Batcher{
		model:   m,
		wake:    make(chan struct{}, 1),
		token:   make(chan struct{}, 1),
		aborted: make(chan struct{}),
	}
	for _, inst := range m.Instances() {
		if !inst.Passive() {
			s.workers = append(s.workers, inst)
		}
	}
	s.idle = make(chan *core.Instance, len(s.workers))
	m.ShareDeviceLocks()
	db := m.Config().GetDynamicBatching()
	if db != nil && m.MaxBatchSize() > 0 {
		s.batching = true
		s.maxBatch = uint64(m.MaxBatchSize())
		for _, p := range db.GetPreferredBatchSize() {
			s.preferred = append(s.preferred, uint64(p))
		}
		s.delay = time.Duration(db.GetMaxQueueDelayMicroseconds()) * time.Microsecond
	}
	// Priority levels and queue policies come with dynamic_batching, as
	// in Triton, whether or not the model batches.
	s.queue = newPriorityQueue(db)
	if n := testhooks.Count(testhooks.DelayScheduler); n > 0 {
		s.holdUntil = n
		m.Logger().Verbosef(1, "model %q: the scheduler holds back until %d requests are queued (%s)", m.Name(), n, testhooks.DelayScheduler)
	}
	s.token <- struct{}{}
	return s
}

// Start launches one worker goroutine per active instance, and makes the
// instances idle.
func (s *Batcher) Start() {
	for _, inst := range s.workers {
		s.idle <- inst
	}
	for range s.workers {
		s.wg.Go(s.work)
	}
}

// work forms batches and executes each on an idle instance, until the
// batcher is closed and drained, or aborted.
func (s *Batcher) work() {
	for {
		batch := s.nextBatch()
		if batch == nil {
			return
		}
		// The wait ends with an execution: no instance is held for long
		// without one.
		inst, ok := receiveUnlessAborted(s.idle, s.aborted)
		if !ok {
			s.placing.Add(-1)
			s.failUnloaded(batch)
			return
		}
		s.placing.Add(-1)
		if batch = s.rejectLate(batch); len(batch) == 0 {
			s.idle <- inst
			continue
		}
		inst.Execute(batch)
		s.idle <- inst
	}
}

// receiveUnlessAborted receives from c, waiting until a value comes or
// aborted closes (false). What it waits for is most often there already:
// it tries c alone first, as one channel costs less than a select of two.
func receiveUnlessAborted[T any](c <-chan T, aborted <-chan struct{}) (T, bool) {
	select {
	case v := <-c:
		return v, true
	default:
	}
	select {
	case v := <-c:
		return v, true
	case <-aborted:
		var zero T
		return zero, false
	}
}

// rejectLate fails the requests of batch whose queue policy timed them out
// while the batch waited for an instance, and returns the others.
func (s *Batcher) rejectLate(batch []*core.Request) []*core.Request {
	if !s.queue.timed {
		return batch
	}
	now := core.Nanotime()
	kept := batch[:0]
	var late []*core.Request
	for _, r := range batch {
		if d := r.QueueDeadline(); d != 0 && now > d {
			late = append(late, r)
		} else {
			kept = append(kept, r)
		}
	}
	s.reject(late)
	return kept
}

// runInline executes r on inst, which the caller took from idle, on the
// calling goroutine.
func (s *Batcher) runInline(inst *core.Instance, r *core.Request) {
	defer s.wg.Done()
	batch := [1]*core.Request{r}
	inst.Execute(batch[:])
	s.idle <- inst
}

// startsAtOnce reports whether r, with nothing queued ahead of it, would
// go into a batch of its own without waiting: the batcher does not batch,
// or does not wait to fill a batch, or r alone fills one.
func (s *Batcher) startsAtOnce(r *core.Request) bool {
	if !s.batching || s.delay == 0 {
		return true
	}
	limit := s.maxBatch // as gatherLocked's before the delay expires
	if len(s.preferred) > 0 {
		limit = min(limit, slices.Max(s.preferred))
	}
	size := r.BatchSize()
	return size >= limit || s.preferredSize(size)
}

// Enqueue queues r, or refuses it (CodeUnavailable) once the batcher
// stops, when every instance is passive, or when the queue holds
// max_queue_size requests already. A request submitted inline that can
// start at once runs on the calling goroutine: Enqueue returns once its
// execution has.
func (s *Batcher) Enqueue(r *core.Request) error {
	m := s.model
	s.mu.Lock()
	switch {
	case s.closed:
		s.mu.Unlock()
		return core.UnloadingError(m)
	case len(s.workers) == 0:
		s.mu.Unlock()
		return core.NoInstanceError(m)
	}
	if full, _ := s.queue.full(r); full {
		s.mu.Unlock()
		return core.Errorf(core.CodeUnavailable, "%sExceeds maximum queue size", r.LogPrefix())
	}
	now := r.MarkQueued()
	if r.Inline() && s.holdUntil == 0 && s.queue.len() == 0 && s.placing.Load() == 0 && s.startsAtOnce(r) && !s.dead(r) {
		select {
		case inst := <-s.idle:
			s.wg.Add(1) // before closed is set (mu held): Stop waits for it
			s.mu.Unlock()
			s.runInline(inst, r)
			return nil
		default:
		}
	}
	s.queue.push(r, now)
	s.mu.Unlock()
	s.signal()
	return nil
}

// dead reports whether r is not to run: cancelled, or, without dynamic
// batching's queue policies, past its client's timeout.
func (s *Batcher) dead(r *core.Request) bool {
	return r.Cancelled() || (!s.batching && r.Expired())
}

// Requeue queues again a request its backend rescheduled, until the
// workers have finished.
func (s *Batcher) Requeue(r *core.Request) error {
	s.mu.Lock()
	if s.drained {
		s.mu.Unlock()
		return core.UnloadedBeforeRerunError(s.model, r)
	}
	r.MarkRequeued()
	s.queue.push(r, r.QueueStart())
	s.mu.Unlock()
	s.signal()
	return nil
}

func (s *Batcher) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// nextBatch waits for work and returns the next batch, or nil once the
// scheduler is closed and drained, or aborted. A batch it returns counts
// in placing until its worker has an instance for it.
//
// With dynamic batching, requests join the oldest one in queue order while
// they are compatible with it (see batchable) and fit in max_batch_size.
// Until the delay expires a batch grows to the largest preferred batch size
// at most (preferred sizes default to max_batch_size). If what is queued adds
// up to a preferred size, or fills that limit, it goes at once; otherwise the
// longest run that adds up to a preferred size goes at once; otherwise the
// batcher waits up to max_queue_delay_microseconds for more and then sends
// what it has, up to max_batch_size.
func (s *Batcher) nextBatch() []*core.Request {
	if len(s.workers) > 1 { // one worker forms its batches alone
		if _, ok := receiveUnlessAborted(s.token, s.aborted); !ok {
			return nil
		}
		defer func() { s.token <- struct{}{} }()
	}

	first := s.waitFirst()
	if first == nil {
		return nil
	}
	if !s.batching {
		return first.Batch()
	}
	deadline := time.Now().Add(s.delay)
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		flush := s.delay == 0 || !time.Now().Before(deadline)
		s.mu.Lock()
		flush = flush || s.closed
		rejected := s.expireLocked()
		batch, dead := s.gatherLocked(first, flush)
		s.mu.Unlock()
		s.reject(rejected)
		s.failDead(dead)
		if batch != nil {
			return batch
		}
		if timer == nil {
			timer = time.NewTimer(time.Until(deadline))
		} else {
			timer.Reset(time.Until(deadline))
		}
		select {
		case <-s.wake:
		case <-timer.C:
		case <-s.aborted:
			s.placing.Add(-1)
			s.failUnloaded([]*core.Request{first})
			return nil
		}
	}
}

// gatherLocked decides the batch that first heads, taking the requests it
// picks off the queue; it returns nil when the batcher should wait. Dead
// requests met on the way are removed and returned to be failed.
func (s *Batcher) gatherLocked(first *core.Request, flush bool) (batch, dead []*core.Request) {
	limit := s.maxBatch // until the delay expires, a batch grows no larger than the largest preferred size
	if !flush && len(s.preferred) > 0 {
		limit = min(limit, slices.Max(s.preferred))
	}
	size := first.BatchSize()
	run, best := 0, -1 // queued requests that fit; how many of them end on a preferred size
	if s.preferredSize(size) {
		best = 0
	}
	for i := 0; i < s.queue.len(); {
		r := s.queue.at(i)
		if s.dead(r) {
			dead = append(dead, r)
			s.queue.remove(i)
			continue
		}
		if size+r.BatchSize() > limit || !batchable(first, r) {
			break
		}
		size += r.BatchSize()
		run++
		i++
		if s.preferredSize(size) {
			best = run
		}
	}
	take := -1
	switch {
	case best == run, flush, size >= limit:
		take = run
	case best >= 0:
		take = best
	}
	if take < 0 {
		return nil, dead
	}
	batch = make([]*core.Request, 0, take+1)
	batch = append(batch, first)
	for range take {
		batch = append(batch, s.queue.pop())
	}
	return batch, dead
}

func (s *Batcher) preferredSize(size uint64) bool { return slices.Contains(s.preferred, size) }

// waitFirst returns the oldest live request, waiting for one; nil once the
// scheduler is closed and empty, or aborted.
func (s *Batcher) waitFirst() *core.Request {
	for {
		select {
		case <-s.aborted:
			return nil // Stop gave up: it fails what is still queued
		default:
		}
		s.mu.Lock()
		rejected := s.expireLocked()
		if s.holdUntil > 0 && (s.queue.len() >= s.holdUntil || s.closed) {
			s.holdUntil = 0
		}
		var r *core.Request
		if s.queue.len() > 0 && s.holdUntil == 0 {
			r = s.queue.pop()
			s.placing.Add(1) // the batch r heads, until a worker places it or it fails
		}
		closed := s.closed
		s.mu.Unlock()
		s.reject(rejected)
		if r != nil {
			if s.dead(r) {
				s.placing.Add(-1)
				s.failDead([]*core.Request{r})
				continue
			}
			return r
		}
		if closed {
			return nil
		}
		<-s.wake // Stop signals it too once it gives up (aborted, checked above)
	}
}

// expireLocked takes the requests whose queue policy timed them out out of
// the queue; s.mu held. It reads the clock only where a policy times
// requests out: most models have none, and a clock read is most of what
// waiting for a request costs then.
func (s *Batcher) expireLocked() []*core.Request {
	if !s.queue.timed {
		return nil
	}
	return s.queue.expire(core.Nanotime())
}

// reject completes requests whose queue policy timed them out (REJECT),
// with Triton's error.
func (s *Batcher) reject(rs []*core.Request) {
	for _, r := range rs {
		r.Fail(core.FailureRejected, core.Errorf(core.CodeUnavailable, "Request timeout expired"))
	}
}

// failDead completes requests that were cancelled or timed out while queued.
func (s *Batcher) failDead(dead []*core.Request) {
	m := s.model
	for _, r := range dead {
		if r.Cancelled() {
			r.Fail(core.FailureCanceled, core.Errorf(core.CodeCancelled, "request %q to model %q was cancelled", r.ID(), m.Name()))
		} else {
			r.Fail(core.FailureRejected, core.Errorf(core.CodeUnavailable, "request %q to model %q timed out in the queue", r.ID(), m.Name()))
		}
	}
}

// Stop closes the queue and waits for the workers to execute what is
// queued. If ctx ends first, what is still queued fails at once
// (core.UnloadedError), and only the running executions are waited for.
func (s *Batcher) Stop(ctx context.Context) {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.signal()
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		close(s.aborted)
		s.signal() // a worker waiting for a request (waitFirst)
		s.drain()
		<-done
	}
	s.drain()
}

// drain fails what is queued: nothing more runs, and a request the backend
// reschedules from now on fails too.
func (s *Batcher) drain() {
	s.mu.Lock()
	s.drained = true
	left := s.queue.drain()
	s.mu.Unlock()
	s.failUnloaded(left)
}

// failUnloaded completes requests that will not run because the model
// unloads.
func (s *Batcher) failUnloaded(rs []*core.Request) {
	for _, r := range rs {
		r.Fail(core.FailureOther, core.UnloadedError(s.model, r))
	}
}

// batchable reports whether b can share a batch with a: the same inputs with
// the same shapes after the batch dimension, unless an input allows ragged
// batches.
func batchable(a, b *core.Request) bool {
	ain, bin := a.Inputs(), b.Inputs()
	if len(ain) != len(bin) {
		return false
	}
	for i := range ain {
		ai := &ain[i]
		var bi *core.Input
		for j := range bin {
			if bin[j].Name == ai.Name {
				bi = &bin[j]
				break
			}
		}
		if bi == nil {
			return false
		}
		if cfg := a.Model().InputConfig(ai.Name); cfg != nil && cfg.GetAllowRaggedBatch() {
			continue
		}
		if len(ai.Shape) != len(bi.Shape) || (len(ai.Shape) > 1 && !slices.Equal(ai.Shape[1:], bi.Shape[1:])) {
			return false
		}
	}
	return true
}
