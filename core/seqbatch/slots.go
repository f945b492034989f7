package seqbatch

import (
	"slices"

	"github.com/tritonhost/tritonhost/core"
)

// Slot bookkeeping of the sequence scheduler: binding sequences to slots,
// giving slots back and refilling them from the backlog, ending sequences
// early. The *Locked methods run with the scheduler's mu held.

// freeSlotLocked returns a free slot on the instance with the most free
// slots, so sequences spread over instances.
func (s *Batcher) freeSlotLocked() (*lane, int) {
	var best *lane
	bestSlot, bestFree := -1, 0
	for _, l := range s.lanes {
		free, first := 0, -1
		for i, seq := range l.slots {
			if seq == nil {
				free++
				if first < 0 {
					first = i
				}
			}
		}
		if free > bestFree {
			best, bestSlot, bestFree = l, first, free
		}
	}
	return best, bestSlot
}

func (s *Batcher) bindLocked(seq *sequence, l *lane, slot int) {
	l.slots[slot] = seq
	seq.lane, seq.slot = l, slot
	if s.waiting[seq.id] == seq {
		delete(s.waiting, seq.id)
	}
	if seq.open {
		s.bound[seq.id] = seq
	}
}

// closeLocked stops a sequence from taking more requests: a later request
// with its correlation id needs the START flag.
func (s *Batcher) closeLocked(seq *sequence) {
	seq.open = false
	if s.bound[seq.id] == seq {
		delete(s.bound, seq.id)
	}
	if s.waiting[seq.id] == seq {
		delete(s.waiting, seq.id)
	}
}

// releaseLocked gives a sequence's slot back, dropping its state, and hands
// the slot to the oldest sequence of the backlog.
func (s *Batcher) releaseLocked(seq *sequence) {
	s.closeLocked(seq)
	l, slot := seq.lane, seq.slot
	if l == nil {
		s.backlog = slices.DeleteFunc(s.backlog, func(x *sequence) bool { return x == seq })
		return
	}
	l.slots[slot] = nil
	seq.lane, seq.slot, seq.states = nil, -1, nil
	for len(s.backlog) > 0 {
		next := s.backlog[0]
		s.backlog[0] = nil
		s.backlog = s.backlog[1:]
		if len(next.queue) == 0 {
			s.closeLocked(next)
			continue
		}
		s.bindLocked(next, l, slot)
		l.signal()
		return
	}
}

// cutLocked ends a sequence early at queue[k], a request that was cancelled
// or timed out: it and every later request of the sequence fail, earlier
// ones still run, and the slot is given back once they have.
func (s *Batcher) cutLocked(seq *sequence, k int, dead *[]failure) {
	m := s.model
	r := seq.queue[k]
	code, why := core.CodeCancelled, "was cancelled"
	if !r.Cancelled() {
		code, why = core.CodeUnavailable, "timed out in the sequence batcher queue"
	}
	*dead = append(*dead, failure{r, core.Errorf(code, "request %q to model %q %s", r.ID(), m.Name(), why)})
	for _, later := range seq.queue[k+1:] {
		*dead = append(*dead, failure{later, core.Errorf(code, "request %q to model %q did not run: its sequence %s ended early because request %q %s",
			later.ID(), m.Name(), format(seq.id), r.ID(), why)})
	}
	clear(seq.queue[k:])
	seq.queue = seq.queue[:k]
	s.closeLocked(seq)
	seq.ended = true
	if len(seq.queue) == 0 && !seq.running {
		s.releaseLocked(seq)
	}
}

// executed records that a batch's execution returned: its sequences may run
// their next request, and ended ones give their slot back.
func (s *Batcher) executed(seqs []*sequence) {
	s.mu.Lock()
	now := core.Nanotime()
	for _, seq := range seqs {
		seq.running = false
		seq.lastUsed = now
		if seq.lane != nil && len(seq.queue) == 0 && (seq.ended || s.closed) {
			s.releaseLocked(seq)
		}
	}
	s.mu.Unlock()
	s.kick()
}

// fail completes requests that never reached the backend.
func (s *Batcher) fail(dead []failure) {
	for _, d := range dead {
		d.r.Fail(core.FailureReasonOf(d.err), d.err)
	}
}

// kick wakes the reaper.
func (s *Batcher) kick() {
	select {
	case s.reap <- struct{}{}:
	default:
	}
}

func (l *lane) signal() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}
