package core

import (
	"context"
	"slices"
	"sync"
	"time"
)

// requestScheduler decides which instance executes which requests, and when.
// A model version has one; it is chosen from the configuration by
// newScheduler. Implementations run Execute for an instance from a single
// goroutine, never concurrently for one instance.
type requestScheduler interface {
	// enqueue accepts a request (stamping its queueStart) or refuses it
	// with CodeUnavailable.
	enqueue(r *Request) error
	// requeue takes back a request the backend released with
	// ReleaseReschedule. Unlike enqueue it is accepted while the scheduler
	// stops, until its workers have finished: a request already accepted
	// runs again rather than failing because its model unloads.
	requeue(r *Request) error
	// start launches the instances' goroutines.
	start()
	// stop refuses new requests and returns once every queued request has
	// run and every execution returned. When ctx ends first, the requests
	// still queued fail at once, and stop returns once the running
	// executions have.
	stop(ctx context.Context)
}

// newScheduler picks the scheduler the configuration asks for; an error
// means the configuration cannot be served (the model does not load).
func newScheduler(m *Model) (requestScheduler, error) {
	if m.cfg.GetSequenceBatching() != nil {
		s, err := newSequenceScheduler(m)
		if err != nil {
			return nil, err
		}
		return s, nil
	}
	return newQueueScheduler(m), nil
}

// The errors schedulers give when they cannot take or run a request.
func errUnloading(m *Model) error {
	return Errorf(CodeUnavailable, "model %q version %d is unloading", m.name, m.version)
}

func errNoInstance(m *Model) error {
	return Errorf(CodeUnavailable, "model %q version %d has no active instance", m.name, m.version)
}

func errUnloadedBefore(m *Model, r *Request) error {
	return Errorf(CodeUnavailable, "model %q version %d was unloaded before request %q ran", m.name, m.version, r.ID())
}

func errUnloadedBeforeRerun(m *Model, r *Request) error {
	return Errorf(CodeUnavailable, "model %q version %d was unloaded before request %q could run again", m.name, m.version, r.ID())
}

// scheduler queues the requests of one model version and hands them to the
// model's instances, each of which runs in its own goroutine, so Execute is
// never called concurrently for one instance. One worker at a time (the one
// holding token) waits for and forms the next batch, as Triton's dynamic
// batcher does; without dynamic batching a batch is one request.
type scheduler struct {
	model   *Model
	workers []*Instance

	mu      sync.Mutex
	queue   []*Request
	head    int
	closed  bool // no new requests
	drained bool // the workers have finished: nothing more runs

	wake    chan struct{} // capacity 1: a request arrived or the queue closed
	token   chan struct{} // capacity 1: held by the worker forming a batch
	aborted chan struct{} // closed when stop gives up waiting
	wg      sync.WaitGroup

	maxQueue  int
	batching  bool
	maxBatch  uint64
	preferred []uint64
	delay     time.Duration
}

// newQueueScheduler returns the default scheduler: one queue, and dynamic
// batching when the configuration has dynamic_batching and the model
// batches.
func newQueueScheduler(m *Model) *scheduler {
	s := &scheduler{
		model:   m,
		wake:    make(chan struct{}, 1),
		token:   make(chan struct{}, 1),
		aborted: make(chan struct{}),
	}
	for _, inst := range m.instances {
		if !inst.Passive() {
			s.workers = append(s.workers, inst)
		}
	}
	shareDeviceLocks(m)
	if db := m.cfg.GetDynamicBatching(); db != nil && m.maxBatch > 0 {
		s.batching = true
		s.maxBatch = uint64(m.maxBatch)
		for _, p := range db.GetPreferredBatchSize() {
			s.preferred = append(s.preferred, uint64(p))
		}
		s.delay = time.Duration(db.GetMaxQueueDelayMicroseconds()) * time.Microsecond
		s.maxQueue = int(db.GetDefaultQueuePolicy().GetMaxQueueSize())
	}
	s.token <- struct{}{}
	return s
}

func (s *scheduler) start() {
	for _, inst := range s.workers {
		s.wg.Go(func() {
			for {
				batch := s.nextBatch()
				if batch == nil {
					return
				}
				inst.execute(batch)
			}
		})
	}
}

func (s *scheduler) enqueue(r *Request) error {
	m := s.model
	s.mu.Lock()
	switch {
	case s.closed:
		s.mu.Unlock()
		return errUnloading(m)
	case len(s.workers) == 0:
		s.mu.Unlock()
		return errNoInstance(m)
	case s.maxQueue > 0 && len(s.queue)-s.head >= s.maxQueue:
		s.mu.Unlock()
		return Errorf(CodeUnavailable, "model %q version %d: queue is full (max_queue_size %d)", m.name, m.version, s.maxQueue)
	}
	r.queueStart = Nanotime()
	if r.trace != nil {
		r.trace.Report(TraceQueueStart, r.queueStart)
	}
	s.queue = append(s.queue, r)
	s.mu.Unlock()
	s.signal()
	return nil
}

func (s *scheduler) requeue(r *Request) error {
	s.mu.Lock()
	if s.drained {
		s.mu.Unlock()
		return errUnloadedBeforeRerun(s.model, r)
	}
	r.queueStart = Nanotime()
	s.queue = append(s.queue, r)
	s.mu.Unlock()
	s.signal()
	return nil
}

func (s *scheduler) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// nextBatch waits for work and returns the next batch, or nil once the
// scheduler is closed and drained, or aborted.
//
// With dynamic batching, requests join the oldest one in queue order while
// they are compatible with it (see batchable) and fit in max_batch_size.
// Until the delay expires a batch grows to the largest preferred batch size
// at most (preferred sizes default to max_batch_size). If what is queued adds
// up to a preferred size, or fills that limit, it goes at once; otherwise the
// longest run that adds up to a preferred size goes at once; otherwise the
// batcher waits up to max_queue_delay_microseconds for more and then sends
// what it has, up to max_batch_size.
func (s *scheduler) nextBatch() []*Request {
	select {
	case <-s.token:
	case <-s.aborted:
		return nil
	}
	defer func() { s.token <- struct{}{} }()

	first := s.waitFirst()
	if first == nil {
		return nil
	}
	if !s.batching {
		return []*Request{first}
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
		batch, dead := s.gatherLocked(first, flush)
		s.mu.Unlock()
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
			s.failUnloaded([]*Request{first})
			return nil
		}
	}
}

// gatherLocked decides the batch that first heads, taking the requests it
// picks off the queue; it returns nil when the batcher should wait. Dead
// requests met on the way are removed and returned to be failed.
func (s *scheduler) gatherLocked(first *Request, flush bool) (batch, dead []*Request) {
	limit := s.maxBatch // until the delay expires, a batch grows no larger than the largest preferred size
	if !flush && len(s.preferred) > 0 {
		limit = min(limit, slices.Max(s.preferred))
	}
	size := first.batchSize
	run, best := 0, -1 // queued requests that fit; how many of them end on a preferred size
	if s.preferredSize(size) {
		best = 0
	}
	for i := s.head; i < len(s.queue); {
		r := s.queue[i]
		if r.Cancelled() || r.expired() {
			dead = append(dead, r)
			s.queue = slices.Delete(s.queue, i, i+1)
			continue
		}
		if size+r.batchSize > limit || !batchable(first, r) {
			break
		}
		size += r.batchSize
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
	batch = make([]*Request, 0, take+1)
	batch = append(batch, first)
	for range take {
		batch = append(batch, s.popLocked())
	}
	return batch, dead
}

func (s *scheduler) preferredSize(size uint64) bool { return slices.Contains(s.preferred, size) }

// waitFirst returns the oldest live request, waiting for one; nil once the
// scheduler is closed and empty, or aborted.
func (s *scheduler) waitFirst() *Request {
	for {
		select {
		case <-s.aborted:
			return nil // stop gave up: it fails what is still queued
		default:
		}
		s.mu.Lock()
		var r *Request
		if s.head < len(s.queue) {
			r = s.popLocked()
		}
		closed := s.closed
		s.mu.Unlock()
		if r != nil {
			if r.Cancelled() || r.expired() {
				s.failDead([]*Request{r})
				continue
			}
			return r
		}
		if closed {
			return nil
		}
		select {
		case <-s.wake:
		case <-s.aborted:
			return nil
		}
	}
}

func (s *scheduler) popLocked() *Request {
	r := s.queue[s.head]
	s.queue[s.head] = nil
	s.head++
	if s.head == len(s.queue) {
		s.queue, s.head = s.queue[:0], 0
	} else if s.head > 64 && s.head*2 > len(s.queue) {
		n := copy(s.queue, s.queue[s.head:])
		clear(s.queue[n:])
		s.queue, s.head = s.queue[:n], 0
	}
	return r
}

// failDead completes requests that were cancelled or timed out while queued.
func (s *scheduler) failDead(dead []*Request) {
	m := s.model
	for _, r := range dead {
		var err error
		reason := FailureCanceled
		if r.Cancelled() {
			err = Errorf(CodeCancelled, "request %q to model %q was cancelled", r.ID(), m.name)
		} else {
			err = Errorf(CodeUnavailable, "request %q to model %q timed out in the queue", r.ID(), m.name)
			reason = FailureRejected
		}
		m.stats.failure(r.requestStart, Nanotime(), reason)
		r.failAndRelease(err)
	}
}

// stop closes the queue and waits for the workers to execute what is queued.
// If ctx ends first, what is still queued fails at once, and only the
// running executions are waited for.
func (s *scheduler) stop(ctx context.Context) {
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
		s.drain()
		<-done
	}
	s.drain()
}

// drain fails what is queued: nothing more runs, and a request the backend
// reschedules from now on fails too.
func (s *scheduler) drain() {
	s.mu.Lock()
	s.drained = true
	left := slices.Clone(s.queue[s.head:])
	s.queue, s.head = nil, 0
	s.mu.Unlock()
	s.failUnloaded(left)
}

// failUnloaded completes requests that will not run because the model
// unloads.
func (s *scheduler) failUnloaded(rs []*Request) {
	for _, r := range rs {
		s.model.stats.failure(r.requestStart, Nanotime(), FailureOther)
		r.failAndRelease(errUnloadedBefore(s.model, r))
	}
}

// batchable reports whether b can share a batch with a: the same inputs with
// the same shapes after the batch dimension, unless an input allows ragged
// batches.
func batchable(a, b *Request) bool {
	if len(a.inputs) != len(b.inputs) {
		return false
	}
	for i := range a.inputs {
		ai := &a.inputs[i]
		var bi *Input
		for j := range b.inputs {
			if b.inputs[j].Name == ai.Name {
				bi = &b.inputs[j]
				break
			}
		}
		if bi == nil {
			return false
		}
		if cfg := a.model.inputs[ai.Name]; cfg != nil && cfg.GetAllowRaggedBatch() {
			continue
		}
		if len(ai.Shape) != len(bi.Shape) || (len(ai.Shape) > 1 && !slices.Equal(ai.Shape[1:], bi.Shape[1:])) {
			return false
		}
	}
	return true
}

// shareDeviceLocks gives the instances of one device a common lock when the
// backend chose TRITONBACKEND_EXECUTION_DEVICE_BLOCKING: then only one
// execution runs on a device at a time, as with Triton's per-device thread.
func shareDeviceLocks(m *Model) {
	db, ok := m.backend.(interface{ DeviceBlocking() bool })
	if !ok || !db.DeviceBlocking() {
		return
	}
	type device struct {
		kind InstanceKind
		id   int32
	}
	locks := map[device]*sync.Mutex{}
	for _, inst := range m.instances {
		d := device{inst.kind, inst.deviceID}
		if locks[d] == nil {
			locks[d] = &sync.Mutex{}
		}
		inst.deviceLock = locks[d]
	}
}

func (r *Request) expired() bool { return r.deadline != 0 && Nanotime() > r.deadline }
