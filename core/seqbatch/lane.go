package seqbatch

import (
	"slices"
	"time"

	"github.com/tritonhost/tritonhost/core"
)

// run executes batches on the lane's instance until the scheduler is
// stopped and the lane's sequences and the backlog are drained, or Stop
// gives up.
func (l *lane) run() {
	for {
		batch, seqs := l.next()
		if batch == nil {
			return
		}
		l.inst.Execute(batch)
		l.s.executed(seqs)
	}
}

// next waits for the next batch: the head request of each ready slot.
func (l *lane) next() ([]*core.Request, []*sequence) {
	s := l.s
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		select {
		case <-s.aborted:
			return nil, nil
		default:
		}
		s.mu.Lock()
		var dead []failure
		batch, seqs, wait := l.collectLocked(&dead)
		exit := batch == nil && s.closed && l.drainedLocked() && len(s.backlog) == 0
		s.mu.Unlock()
		s.fail(dead)
		if batch != nil {
			return batch, seqs
		}
		if exit {
			return nil, nil
		}
		var expire <-chan time.Time
		if wait > 0 {
			if timer == nil {
				timer = time.NewTimer(wait)
			} else {
				timer.Reset(wait)
			}
			expire = timer.C
		}
		select {
		case <-l.wake:
		case <-expire:
		case <-s.aborted:
			return nil, nil
		}
	}
}

// drainedLocked reports whether no slot of the lane has a queued request.
func (l *lane) drainedLocked() bool {
	for _, seq := range l.slots {
		if seq != nil && len(seq.queue) > 0 {
			return false
		}
	}
	return true
}

// collectLocked takes the next batch from the lane's ready slots (a
// sequence with a queued request and nothing executing). A head request
// that was cancelled or timed out ends its sequence instead. When the
// strategy holds the batch back, it returns how long to wait.
func (l *lane) collectLocked(dead *[]failure) ([]*core.Request, []*sequence, time.Duration) {
	s := l.s
	if s.heldLocked() {
		return nil, nil, 0
	}
	var ready []*sequence
	oldest := ^uint64(0)
	for i := range l.slots {
		seq := l.slots[i]
		if seq == nil || seq.running || len(seq.queue) == 0 {
			continue
		}
		head := seq.queue[0]
		if head.Cancelled() || head.Expired() {
			s.cutLocked(seq, 0, dead)
			continue
		}
		ready = append(ready, seq)
		oldest = min(oldest, head.QueueStart())
	}
	if len(ready) == 0 {
		return nil, nil, 0
	}
	if wait := s.holdLocked(len(ready), oldest); wait > 0 {
		return nil, nil, wait
	}
	if s.cfg.oldest {
		slices.SortStableFunc(ready, func(a, b *sequence) int {
			qa, qb := a.queue[0].QueueStart(), b.queue[0].QueueStart()
			switch {
			case qa < qb:
				return -1
			case qa > qb:
				return 1
			}
			return 0
		})
	}
	if len(ready) > s.cfg.maxBatch {
		ready = ready[:s.cfg.maxBatch]
	}
	batch := make([]*core.Request, len(ready))
	for i, seq := range ready {
		r := seq.queue[0]
		seq.queue[0] = nil
		seq.queue = seq.queue[1:]
		seq.running = true
		s.prepareLocked(r, seq)
		batch[i] = r
	}
	return batch, ready, 0
}

// holdLocked returns how much longer to wait before executing n ready
// requests whose oldest was queued at oldest, or 0 to execute now. direct
// waits while fewer than minimum_slot_utilization of the slots are ready;
// oldest while the batch is neither full nor of a preferred size; neither
// waits past max_queue_delay_microseconds, and nothing waits once the
// scheduler is stopping.
func (s *Batcher) holdLocked(n int, oldest uint64) time.Duration {
	c := s.cfg
	if c.delay <= 0 || s.closed {
		return 0
	}
	waited := time.Duration(core.Nanotime() - oldest)
	if waited >= c.delay {
		return 0
	}
	if c.oldest {
		if n >= c.maxBatch || slices.Contains(c.preferred, n) {
			return 0
		}
	} else if c.minUtil <= 0 || float32(n)/float32(c.maxBatch) >= c.minUtil {
		return 0
	}
	return c.delay - waited
}

// prepareLocked gives a request about to execute its control inputs and
// its sequence's state inputs, replacing any input of those names, and ties
// it to its sequence. A START request begins a new state run.
func (s *Batcher) prepareLocked(r *core.Request, seq *sequence) {
	c := s.cfg
	flags := r.Flags()
	if flags&core.RequestFlagSequenceStart != 0 || seq.states == nil {
		seq.states = c.states.NewRun()
	}
	if flags&core.RequestFlagSequenceEnd != 0 {
		seq.ended = true
	}
	inputs := r.Inputs()
	ins := make([]core.Input, 0, len(inputs)+len(c.provided))
	for _, in := range inputs {
		if !c.provided[in.Name] {
			ins = append(ins, in)
		}
	}
	ins = append(ins, c.controlInputs(flags, seq.id)...)
	if seq.states != nil {
		ins = append(ins, seq.states.Inputs()...)
	}
	r.SetInputs(ins)
	r.SetSchedulerData(&core.SchedulerData{States: seq.states, Own: seq})
}
