package seqbatch

import (
	"slices"
	"time"

	"github.com/tritonhost/tritonhost/core"
)

// reaper gives back the slots of sequences idle for longer than
// max_sequence_idle_microseconds (no request queued or executing) and cuts
// cancelled requests out of the queues, so a cancelled request completes
// at once instead of when its turn comes. It wakes at the next idle
// deadline, on a cancellation, after each execution and on Stop.
func (s *Batcher) reaper() {
	defer close(s.reaperDone)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		s.mu.Lock()
		var dead []failure
		next := s.sweepLocked(&dead)
		s.mu.Unlock()
		s.fail(dead)
		var expire <-chan time.Time
		if next > 0 {
			timer.Reset(next)
			expire = timer.C
		}
		select {
		case <-s.reap:
		case <-expire:
		case <-s.quit:
			return
		}
	}
}

// sweepLocked cuts cancelled requests, reaps idle sequences and returns
// the time until the next sequence would become idle (0: none is waiting).
func (s *Batcher) sweepLocked(dead *[]failure) time.Duration {
	now := core.Nanotime()
	var next time.Duration
	for _, l := range s.lanes {
		for i := range l.slots {
			seq := l.slots[i]
			if seq == nil {
				continue
			}
			if k := firstCancelled(seq.queue); k >= 0 {
				s.cutLocked(seq, k, dead)
				continue
			}
			if seq.running || len(seq.queue) > 0 {
				continue
			}
			if seq.ended || s.closed {
				s.releaseLocked(seq)
				continue
			}
			idle := time.Duration(now - seq.lastUsed)
			if idle >= s.cfg.idle {
				s.model.Logger().Verbosef(1, "model %q: sequence %s was idle for %v (max_sequence_idle_microseconds %d); its slot %d of instance %q is freed",
					s.model.Name(), format(seq.id), idle.Round(time.Microsecond), s.cfg.idle.Microseconds(), seq.slot, l.inst.Name())
				s.releaseLocked(seq)
				continue
			}
			if left := s.cfg.idle - idle; next == 0 || left < next {
				next = left
			}
		}
	}
	for _, seq := range slices.Clone(s.backlog) {
		if k := firstCancelled(seq.queue); k >= 0 {
			s.cutLocked(seq, k, dead)
		}
	}
	return next
}

// firstCancelled returns the index of the first cancelled request, or -1.
func firstCancelled(queue []*core.Request) int {
	for i, r := range queue {
		if r.Cancelled() {
			return i
		}
	}
	return -1
}
