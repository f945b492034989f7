package grpcserver

import "sync"

// sendQueue hands events from the goroutines and backend threads that
// produce responses to a stream's single sender. It is bounded: a producer
// waits while limit events are queued (back-pressure instead of memory
// growth). The sender takes everything queued at once, so a busy stream
// costs one wake-up per batch rather than one per response.
type sendQueue struct {
	mu    sync.Mutex
	items []streamEvent
	spare []streamEvent
	limit int
	ready chan struct{} // capacity 1: the queue became non-empty
	room  chan struct{} // closed (and replaced) when the sender frees room
	full  bool          // a producer waits on room
}

func newSendQueue(limit int) *sendQueue {
	return &sendQueue{limit: limit, ready: make(chan struct{}, 1), room: make(chan struct{})}
}

// push queues ev, waiting while the queue is full. It returns false, and
// drops ev, if done closes first.
func (q *sendQueue) push(ev streamEvent, done <-chan struct{}) bool {
	q.mu.Lock()
	for len(q.items) >= q.limit {
		q.full = true
		room := q.room
		q.mu.Unlock()
		select {
		case <-room:
		case <-done:
			return false
		}
		q.mu.Lock()
	}
	wake := len(q.items) == 0
	q.items = append(q.items, ev)
	q.mu.Unlock()
	if wake {
		select {
		case q.ready <- struct{}{}:
		default:
		}
	}
	return true
}

// take returns every queued event (nil if none). The slice is the sender's
// until it passes it back to recycle.
func (q *sendQueue) take() []streamEvent {
	q.mu.Lock()
	batch := q.items
	q.items, q.spare = q.spare[:0], nil
	if q.full {
		close(q.room)
		q.room, q.full = make(chan struct{}), false
	}
	q.mu.Unlock()
	return batch
}

// recycle gives a batch's storage back for reuse.
func (q *sendQueue) recycle(batch []streamEvent) {
	clear(batch)
	q.mu.Lock()
	if q.spare == nil && cap(batch) <= 4*q.limit {
		q.spare = batch[:0]
	}
	q.mu.Unlock()
}
