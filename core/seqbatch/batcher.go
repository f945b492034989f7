package seqbatch

import (
	"context"
	"slices"
	"sync"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/internal/testhooks"
)

// Batcher is Triton's sequence batcher for stateful models
// (sequence_batching in the configuration). Every request names a sequence
// by its correlation id; the first request of a sequence carries the START
// flag and binds the sequence to one slot of one instance, which keeps it
// until the request with the END flag has executed or the sequence stays
// idle for max_sequence_idle_microseconds. When every slot is taken, new
// sequences wait in a backlog, oldest first. Requests of one sequence run in
// the order they arrived, one at a time: the next is dispatched after the
// execution of the previous one returned. Each dispatched request gets the
// configured control inputs (START, END, READY, CORRID) and the sequence's
// implicit state inputs added to its inputs.
//
// Strategies: direct gives each instance max(1, max_batch_size) slots and
// executes one request of each ready slot per batch (a batch never holds
// padding: slots without a request are left out, and READY is always true);
// minimum_slot_utilization and max_queue_delay_microseconds hold a batch
// back as in Triton. oldest is scheduled the same way with
// max_candidate_sequences slots per instance; a batch takes the oldest ready
// requests up to max_batch_size, held back until it reaches a preferred
// batch size or max_batch_size or its oldest request waited
// max_queue_delay_microseconds. Unlike Triton's oldest strategy, the next
// request of a sequence waits for the previous execution to return, not for
// the backend to release the previous request.
//
// With iterative_sequence a request without a correlation id is a sequence
// of its own, as in Triton: the server gives it an id and the START flag,
// the backend reschedules it (ReleaseReschedule) for each further
// iteration, which runs next in the same slot without START, and the
// sequence ends when the backend releases it for good.
type Batcher struct {
	model *core.Model
	cfg   *sequenceConfig
	lanes []*lane

	mu            sync.Mutex
	closed        bool
	drained       bool // the lanes have finished: a rescheduled request cannot run again
	started       bool
	bound         map[core.CorrelationID]*sequence // sequences in a slot that take more requests
	waiting       map[core.CorrelationID]*sequence // sequences in the backlog that take more requests
	backlog       []*sequence                      // sequences waiting for a slot, oldest first
	lastIterative uint64                           // the id of the last iterative sequence made
	// Triton's test hooks: nothing runs until this many requests are
	// queued (TRITONSERVER_DELAY_SCHEDULER), or wait in the backlog
	// (TRITONSERVER_BACKLOG_DELAY_SCHEDULER); each is 0 once reached.
	holdQueued, holdBacklog int

	reap       chan struct{} // capacity 1: the reaper has something to look at
	aborted    chan struct{} // closed when Stop gives up waiting
	quit       chan struct{} // closed to end the reaper
	reaperDone chan struct{}
	wg         sync.WaitGroup // lanes
}

// lane is one instance with its sequence slots; one goroutine runs it.
type lane struct {
	s     *Batcher
	inst  *core.Instance
	slots []*sequence   // nil: free
	wake  chan struct{} // capacity 1
}

// sequence is one sequence from its START request until its slot is given
// back. All fields are guarded by the scheduler's mu.
type sequence struct {
	id      core.CorrelationID
	lane    *lane // nil while in the backlog or once the slot is given back
	slot    int
	queue   []*core.Request
	open    bool // takes more requests: no END queued, not cut short
	running bool // one of its requests is executing
	ended   bool // give the slot back once the queue is empty and nothing runs
	// iterative: the server made the sequence for one request without a
	// correlation id (iterative_sequence); it ends when the backend
	// releases that request for good.
	iterative bool
	lastUsed  uint64 // Nanotime of the last enqueue or execution end

	states *core.StateRun // the current state run; nil before START or without states
}

// sequenceOf returns the sequence r was dispatched in, nil before its
// first dispatch.
func sequenceOf(r *core.Request) *sequence {
	if d := r.SchedulerData(); d != nil {
		seq, _ := d.Own.(*sequence)
		return seq
	}
	return nil
}

// failure is a request to complete with an error once the lock is
// dropped.
type failure struct {
	r   *core.Request
	err error
}

var _ core.Scheduler = (*Batcher)(nil)

// New returns the sequence batcher of m, whose instances exist. An error
// (CodeInvalidArg) means that m's sequence_batching cannot be served: too
// many slots, or an implicit state that core.NewStates refuses.
func New(m *core.Model) (*Batcher, error) {
	s := &Batcher{
		model:      m,
		bound:      map[core.CorrelationID]*sequence{},
		waiting:    map[core.CorrelationID]*sequence{},
		reap:       make(chan struct{}, 1),
		aborted:    make(chan struct{}),
		quit:       make(chan struct{}),
		reaperDone: make(chan struct{}),
	}
	cfg, err := newSequenceConfig(m)
	if err != nil {
		return nil, core.Errorf(core.CodeInvalidArg, "model %q version %d: sequence batcher: %w", m.Name(), m.Version(), err)
	}
	s.cfg = cfg
	s.holdQueued = testhooks.Count(testhooks.DelayScheduler)
	s.holdBacklog = testhooks.Count(testhooks.BacklogDelayScheduler)
	for _, inst := range m.Instances() {
		if !inst.Passive() {
			s.lanes = append(s.lanes, &lane{s: s, inst: inst, slots: make([]*sequence, cfg.slots), wake: make(chan struct{}, 1)})
		}
	}
	return s, nil
}

// Start launches one goroutine per active instance, and the reaper.
func (s *Batcher) Start() {
	s.mu.Lock()
	s.started = true
	s.mu.Unlock()
	for _, l := range s.lanes {
		s.wg.Go(l.run)
	}
	go s.reaper()
}

// Enqueue checks the request's sequence fields and queues it on its
// sequence, creating the sequence (in a free slot or the backlog) for a
// START request. Errors are returned to the client before anything runs:
// CodeInvalidArg for a batch larger than one, no correlation id, one the
// CORRID control cannot carry, or a sequence's first request without
// START; CodeUnavailable once the batcher stops or when every instance is
// passive.
func (s *Batcher) Enqueue(r *core.Request) error {
	m := s.model
	if seq := sequenceOf(r); seq != nil {
		return s.requeueIn(r, seq)
	}
	if r.BatchSize() > 1 {
		return core.Errorf(core.CodeInvalidArg, "inference request to model '%s' must specify batch-size 1 due to requirements of sequence batcher", m.Name())
	}
	id := r.CorrelationID()
	if !inSequence(id) && s.cfg.iterative {
		return s.enqueueIterative(r)
	}
	if !inSequence(id) {
		return core.Errorf(core.CodeInvalidArg, "inference request to model '%s' must specify a non-zero or non-empty correlation ID", m.Name())
	}
	if err := s.cfg.checkCorrID(m, id); err != nil {
		return err
	}
	start := r.Flags()&core.RequestFlagSequenceStart != 0
	end := r.Flags()&core.RequestFlagSequenceEnd != 0
	// A cancelled request is cut from its queue by the reaper, so it does
	// not wait for its turn. The hook goes in before the request can run:
	// the backend layer replaces it once the request executes, and must
	// not be replaced in turn.
	r.Responder().OnCancel(s.kick)

	s.mu.Lock()
	switch {
	case s.closed:
		s.mu.Unlock()
		return core.UnloadingError(m)
	case len(s.lanes) == 0:
		s.mu.Unlock()
		return core.NoInstanceError(m)
	}
	seq := s.bound[id]
	if seq == nil {
		seq = s.waiting[id]
	}
	switch {
	case seq == nil && !start:
		s.mu.Unlock()
		return core.Errorf(core.CodeInvalidArg, "inference request for sequence %s to model '%s' must specify the START flag on the first request of the sequence", format(id), m.Name())
	case seq != nil && start:
		m.Logger().Warnf("sequence %s for model '%s' has a conflict: the previous sequence did not end before this sequence start; the previous sequence ends early", format(id), m.Name())
	case seq == nil:
		seq = &sequence{id: id, slot: -1, open: true}
		if l, slot := s.freeSlotLocked(); l != nil {
			s.bindLocked(seq, l, slot)
		} else {
			s.backlog = append(s.backlog, seq)
			s.waiting[id] = seq
		}
	}
	now := r.MarkQueued()
	seq.queue = append(seq.queue, r)
	seq.lastUsed = now
	if end {
		s.closeLocked(seq)
	}
	l := seq.lane
	held := s.holdQueued > 0 || s.holdBacklog > 0
	s.mu.Unlock()
	switch {
	case held: // the count every lane waits for may be reached
		for _, l := range s.lanes {
			l.signal()
		}
	case l != nil:
		l.signal()
	}
	return nil
}

// heldLocked reports whether Triton's test hooks still hold every lane
// back, and lets go of them for good once their counts are reached.
func (s *Batcher) heldLocked() bool {
	if s.holdQueued == 0 && s.holdBacklog == 0 {
		return false
	}
	queued, backlog := 0, 0
	for _, l := range s.lanes {
		for _, seq := range l.slots {
			if seq != nil {
				queued += len(seq.queue)
			}
		}
	}
	for _, seq := range s.backlog {
		backlog += len(seq.queue)
	}
	if s.holdQueued > 0 && (queued+backlog >= s.holdQueued || s.closed) {
		s.holdQueued = 0
	}
	if s.holdBacklog > 0 && (backlog >= s.holdBacklog || s.closed) {
		s.holdBacklog = 0
	}
	return s.holdQueued > 0 || s.holdBacklog > 0
}

// enqueueIterative makes a sequence of its own for r, a request without a
// correlation id to a model with iterative_sequence, as Triton does: a new
// id, r's flags START; the backend reschedules r (ReleaseReschedule) as
// long as it iterates, each time without START, and the sequence ends when
// it releases r for good.
func (s *Batcher) enqueueIterative(r *core.Request) error {
	m := s.model
	r.Responder().OnCancel(s.kick)
	s.mu.Lock()
	switch {
	case s.closed:
		s.mu.Unlock()
		return core.UnloadingError(m)
	case len(s.lanes) == 0:
		s.mu.Unlock()
		return core.NoInstanceError(m)
	}
	s.lastIterative++
	seq := &sequence{id: core.CorrelationID{Uint: s.lastIterative}, slot: -1, iterative: true}
	r.SetSequence(seq.id, core.RequestFlagSequenceStart)
	r.SetReleaseHook(func() { s.iterationsDone(seq) })
	if l, slot := s.freeSlotLocked(); l != nil {
		s.bindLocked(seq, l, slot)
	} else {
		s.backlog = append(s.backlog, seq)
	}
	seq.lastUsed = r.MarkQueued()
	seq.queue = append(seq.queue, r)
	l := seq.lane
	held := s.holdQueued > 0 || s.holdBacklog > 0
	s.mu.Unlock()
	switch {
	case held:
		for _, l := range s.lanes {
			l.signal()
		}
	case l != nil:
		l.signal()
	}
	return nil
}

// iterationsDone ends an iterative sequence whose request the backend
// released for good: its slot is given back once nothing of it runs.
func (s *Batcher) iterationsDone(seq *sequence) {
	s.mu.Lock()
	seq.ended = true
	if !seq.running && len(seq.queue) == 0 {
		s.releaseLocked(seq)
	}
	s.mu.Unlock()
	s.kick()
}

// Requeue takes back a request its backend rescheduled: at the head of its
// sequence when it had been dispatched (see requeueIn), otherwise as
// Enqueue would.
func (s *Batcher) Requeue(r *core.Request) error {
	if seq := sequenceOf(r); seq != nil {
		return s.requeueIn(r, seq)
	}
	return s.Enqueue(r)
}

// requeueIn puts a request the backend released with ReleaseReschedule back
// at the head of its sequence, to run again next; while the scheduler stops
// it is still accepted, until the lanes have finished.
func (s *Batcher) requeueIn(r *core.Request, seq *sequence) error {
	m := s.model
	s.mu.Lock()
	if s.drained {
		s.mu.Unlock()
		return core.UnloadedBeforeRerunError(m, r)
	}
	if seq.lane == nil {
		s.mu.Unlock()
		return core.Errorf(core.CodeInvalidArg, "request %q to model %q cannot be rescheduled: its sequence %s has ended", r.ID(), m.Name(), format(seq.id))
	}
	r.MarkRequeued()
	if seq.iterative {
		r.SetSequence(seq.id, 0) // the next iteration: neither START nor END
	}
	seq.queue = slices.Insert(seq.queue, 0, r)
	l := seq.lane
	s.mu.Unlock()
	l.signal()
	return nil
}

// Stop refuses new requests, lets the queued ones run (sequences drain;
// idle ones give their slots to the backlog at once) and returns when every
// execution returned. If ctx ends first, what is still queued fails.
func (s *Batcher) Stop(ctx context.Context) {
	s.mu.Lock()
	s.closed = true
	started := s.started
	for _, l := range s.lanes {
		for _, seq := range l.slots {
			if seq != nil && !seq.running && len(seq.queue) == 0 {
				s.releaseLocked(seq)
			}
		}
	}
	s.mu.Unlock()
	for _, l := range s.lanes {
		l.signal()
	}
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		close(s.aborted)
		s.fail(s.takeQueued(true))
		<-done
	}
	close(s.quit)
	if started {
		<-s.reaperDone
	}
	s.fail(s.takeQueued(false))
}

// takeQueued takes every queued request out of the scheduler, to
// fail: nothing more runs, and a request the backend reschedules from now
// on fails too. Once the lanes have returned (running false) it also gives
// every slot back.
func (s *Batcher) takeQueued(running bool) []failure {
	m := s.model
	s.mu.Lock()
	defer s.mu.Unlock()
	s.drained = true
	var left []failure
	take := func(seq *sequence) {
		for _, r := range seq.queue {
			left = append(left, failure{r, core.UnloadedError(m, r)})
		}
		seq.queue = nil
	}
	for _, l := range s.lanes {
		for i, seq := range l.slots {
			if seq == nil {
				continue
			}
			take(seq)
			if !running {
				seq.lane, seq.states = nil, nil
				l.slots[i] = nil
			}
		}
	}
	for _, seq := range s.backlog {
		take(seq)
	}
	if !running {
		s.backlog = nil
		clear(s.bound)
		clear(s.waiting)
	}
	return left
}
