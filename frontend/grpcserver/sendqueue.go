package grpcserver

import (
	"errors"
	"sync"
	"time"
)

// errStalled is what a producer gets when it waited a stall timeout for
// room in a stream's queue: the client is not reading its responses.
var errStalled = errors.New("the client did not read its responses")

// errStreamEnded is what a producer gets when the stream ended while it
// waited, or before it came.
var errStreamEnded = errors.New("the stream has ended")

// sendQueue hands events from the goroutines and backend threads that
// produce responses to a stream's single sender. It is bounded twice, by
// the number of events and by the bytes of their encoded messages: a
// producer whose event would go past either waits for the sender to make
// room, except into an empty queue (so one message larger than the byte
// bound still goes). It never waits longer than the stall timeout: then
// push gives up with errStalled, and the stream is cut off, so that a
// client that stops reading holds no backend thread for longer than that.
// The sender takes everything queued at once, so a busy stream costs one
// wake-up per batch rather than one per response; with the batch it holds,
// a stream keeps at most twice the bounds in memory. When the sender stops
// it closes the queue: what is queued then, and what is pushed later, is
// freed (events may hold memory a backend lent, which the garbage collector
// would not return).
type sendQueue struct {
	mu        sync.Mutex
	items     []streamEvent
	spare     []streamEvent
	bytes     int
	maxEvents int
	maxBytes  int
	stall     time.Duration
	ready     chan struct{} // capacity 1: the queue became non-empty
	room      chan struct{} // closed (and replaced) when the sender frees room
	full      bool          // a producer waits on room
	closed    bool          // the sender stopped: events are freed, not queued
}

func newSendQueue(maxEvents, maxBytes int, stall time.Duration) *sendQueue {
	return &sendQueue{maxEvents: maxEvents, maxBytes: maxBytes, stall: stall,
		ready: make(chan struct{}, 1), room: make(chan struct{})}
}

// fits reports whether an event of size bytes may join the queue now.
func (q *sendQueue) fits(size int) bool {
	return len(q.items) == 0 || len(q.items) < q.maxEvents && q.bytes+size <= q.maxBytes
}

// push queues ev, waiting while the queue is full: until there is room
// (nil), done closes or the queue is closed (errStreamEnded) or the stall
// timeout passes (errStalled). ev is freed unless push returns nil.
func (q *sendQueue) push(ev streamEvent, done <-chan struct{}) error {
	size := ev.size()
	var timer *time.Timer
	q.mu.Lock()
	for !q.closed && !q.fits(size) {
		q.full = true
		room := q.room
		q.mu.Unlock()
		if timer == nil {
			timer = time.NewTimer(q.stall)
			defer timer.Stop()
		}
		select {
		case <-room:
		case <-done:
			ev.free()
			return errStreamEnded
		case <-timer.C:
			ev.free()
			return errStalled
		}
		q.mu.Lock()
	}
	if q.closed {
		q.mu.Unlock()
		ev.free()
		return errStreamEnded
	}
	wake := len(q.items) == 0
	q.items = append(q.items, ev)
	q.bytes += size
	q.mu.Unlock()
	if wake {
		select {
		case q.ready <- struct{}{}:
		default:
		}
	}
	return nil
}

// take returns every queued event (nil if none). The slice is the sender's
// until it passes it back to recycle.
func (q *sendQueue) take() []streamEvent {
	q.mu.Lock()
	batch := q.items
	q.items, q.spare = q.spare[:0], nil
	q.bytes = 0
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
	if q.spare == nil && cap(batch) <= 4*q.maxEvents {
		q.spare = batch[:0]
	}
	q.mu.Unlock()
}

// close stops the queue for good when its sender stops: queued events are
// freed now, pushed ones from now on, and waiting producers give up.
func (q *sendQueue) close() {
	q.mu.Lock()
	left := q.items
	q.items, q.spare, q.bytes = nil, nil, 0
	q.closed = true
	if q.full {
		close(q.room)
		q.full = false
	}
	q.mu.Unlock()
	freeEvents(left)
}
