package core

import (
	"context"
	"slices"
	"sync"
)

// sequenceScheduler is Triton's sequence batcher for stateful models
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
type sequenceScheduler struct {
	model *Model
	cfg   *sequenceConfig
	lanes []*seqLane

	mu      sync.Mutex
	closed  bool
	drained bool // the lanes have finished: a rescheduled request cannot run again
	started bool
	bound   map[CorrelationID]*sequence // sequences in a slot that take more requests
	waiting map[CorrelationID]*sequence // sequences in the backlog that take more requests
	backlog []*sequence                 // sequences waiting for a slot, oldest first

	reap       chan struct{} // capacity 1: the reaper has something to look at
	aborted    chan struct{} // closed when stop gives up waiting
	quit       chan struct{} // closed to end the reaper
	reaperDone chan struct{}
	wg         sync.WaitGroup // lanes
}

// seqLane is one instance with its sequence slots; one goroutine runs it.
type seqLane struct {
	s     *sequenceScheduler
	inst  *Instance
	slots []*sequence   // nil: free
	wake  chan struct{} // capacity 1
}

// sequence is one sequence from its START request until its slot is given
// back. All fields are guarded by the scheduler's mu.
type sequence struct {
	id       CorrelationID
	lane     *seqLane // nil while in the backlog or once the slot is given back
	slot     int
	queue    []*Request
	open     bool   // takes more requests: no END queued, not cut short
	running  bool   // one of its requests is executing
	ended    bool   // give the slot back once the queue is empty and nothing runs
	lastUsed uint64 // Nanotime of the last enqueue or execution end

	states *sequenceStates // the current state run; nil before START or without states
}

// seqFailure is a request to complete with an error once the lock is
// dropped.
type seqFailure struct {
	r   *Request
	err error
}

func newSequenceScheduler(m *Model) (*sequenceScheduler, error) {
	s := &sequenceScheduler{
		model:      m,
		bound:      map[CorrelationID]*sequence{},
		waiting:    map[CorrelationID]*sequence{},
		reap:       make(chan struct{}, 1),
		aborted:    make(chan struct{}),
		quit:       make(chan struct{}),
		reaperDone: make(chan struct{}),
	}
	cfg, err := newSequenceConfig(m)
	if err != nil {
		return nil, Errorf(CodeInvalidArg, "model %q version %d: sequence batcher: %w", m.name, m.version, err)
	}
	s.cfg = cfg
	if m.cfg.GetSequenceBatching().GetIterativeSequence() {
		m.log.Warnf("model %q: sequence_batching.iterative_sequence is not supported; requests are scheduled as ordinary sequences and need a correlation ID", m.name)
	}
	for _, inst := range m.instances {
		if !inst.Passive() {
			s.lanes = append(s.lanes, &seqLane{s: s, inst: inst, slots: make([]*sequence, cfg.slots), wake: make(chan struct{}, 1)})
		}
	}
	return s, nil
}

func (s *sequenceScheduler) Start() {
	s.mu.Lock()
	s.started = true
	s.mu.Unlock()
	for _, l := range s.lanes {
		s.wg.Go(l.run)
	}
	go s.reaper()
}

// enqueue checks the request's sequence fields and queues it on its
// sequence, creating the sequence (in a free slot or the backlog) for a
// START request. Errors are returned to the client before anything runs.
func (s *sequenceScheduler) Enqueue(r *Request) error {
	m := s.model
	if t := r.seq.Load(); t != nil {
		return s.requeueIn(r, t.seq)
	}
	if r.batchSize > 1 {
		return Errorf(CodeInvalidArg, "inference request to model %q must specify batch-size 1 due to requirements of sequence batcher", m.name)
	}
	id := r.CorrelationID()
	if !id.inSequence() {
		return Errorf(CodeInvalidArg, "inference request to model %q must specify a non-zero or non-empty correlation ID", m.name)
	}
	if err := s.cfg.checkCorrID(m, id); err != nil {
		return err
	}
	start := r.Flags()&RequestFlagSequenceStart != 0
	end := r.Flags()&RequestFlagSequenceEnd != 0
	// A cancelled request is cut from its queue by the reaper, so it does
	// not wait for its turn. The hook goes in before the request can run:
	// the backend layer replaces it once the request executes, and must
	// not be replaced in turn.
	r.responder.OnCancel(s.kick)

	s.mu.Lock()
	switch {
	case s.closed:
		s.mu.Unlock()
		return UnloadingError(m)
	case len(s.lanes) == 0:
		s.mu.Unlock()
		return NoInstanceError(m)
	}
	seq := s.bound[id]
	if seq == nil {
		seq = s.waiting[id]
	}
	switch {
	case seq == nil && !start:
		s.mu.Unlock()
		return Errorf(CodeInvalidArg, "inference request for sequence %s to model %q must specify the START flag on the first request of the sequence", id.format(), m.name)
	case seq != nil && start:
		m.log.Warnf("sequence %s for model %q has a conflict: the previous sequence did not end before this sequence start; the previous sequence ends early", id.format(), m.name)
	case seq == nil:
		seq = &sequence{id: id, slot: -1, open: true}
		if l, slot := s.freeSlotLocked(); l != nil {
			s.bindLocked(seq, l, slot)
		} else {
			s.backlog = append(s.backlog, seq)
			s.waiting[id] = seq
		}
	}
	now := Nanotime()
	r.queueStart = now
	if r.trace != nil {
		r.trace.Report(TraceQueueStart, now)
	}
	seq.queue = append(seq.queue, r)
	seq.lastUsed = now
	if end {
		s.closeLocked(seq)
	}
	lane := seq.lane
	s.mu.Unlock()
	if lane != nil {
		lane.signal()
	}
	return nil
}

func (s *sequenceScheduler) Requeue(r *Request) error {
	if t := r.seq.Load(); t != nil {
		return s.requeueIn(r, t.seq)
	}
	return s.Enqueue(r)
}

// requeueIn puts a request the backend released with ReleaseReschedule back
// at the head of its sequence, to run again next; while the scheduler stops
// it is still accepted, until the lanes have finished.
func (s *sequenceScheduler) requeueIn(r *Request, seq *sequence) error {
	m := s.model
	s.mu.Lock()
	if s.drained {
		s.mu.Unlock()
		return UnloadedBeforeRerunError(m, r)
	}
	if seq.lane == nil {
		s.mu.Unlock()
		return Errorf(CodeInvalidArg, "request %q to model %q cannot be rescheduled: its sequence %s has ended", r.ID(), m.name, seq.id.format())
	}
	r.queueStart = Nanotime()
	seq.queue = slices.Insert(seq.queue, 0, r)
	lane := seq.lane
	s.mu.Unlock()
	lane.signal()
	return nil
}

// stop refuses new requests, lets the queued ones run (sequences drain;
// idle ones give their slots to the backlog at once) and returns when every
// execution returned. If ctx ends first, what is still queued fails.
func (s *sequenceScheduler) Stop(ctx context.Context) {
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
func (s *sequenceScheduler) takeQueued(running bool) []seqFailure {
	m := s.model
	s.mu.Lock()
	defer s.mu.Unlock()
	s.drained = true
	var left []seqFailure
	take := func(seq *sequence) {
		for _, r := range seq.queue {
			left = append(left, seqFailure{r, UnloadedError(m, r)})
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

// NewSequenceBatcher returns the sequence batcher of m, whose instances
// exist.
func NewSequenceBatcher(m *Model) (Scheduler, error) { return newSequenceScheduler(m) }
