// Package sendqueue hands the responses that backend threads produce to the
// single goroutine that writes a stream (a gRPC ModelStreamInfer call, an
// HTTP Server-Sent Events stream), with bounds: a stream holds at most so
// many responses and bytes for a client that reads slowly, and a producer
// waits for room at most a stall timeout, so a client that stops reading
// never holds a backend thread for longer than that.
//
// Not API: a part of the frontends' streams, so it is internal; a program
// that embeds a server sets the bounds through the frontends' Options
// (grpcserver.StreamLimits, httpserver's Stream).
package sendqueue

import (
	"errors"
	"sync"
	"sync/atomic"
	"time"
)

// ErrStalled is what a producer gets when it waited a stall timeout for
// room in a queue: the client is not reading its responses.
var ErrStalled = errors.New("the client did not read its responses")

// ErrEnded is what a producer gets when the stream ended while it waited,
// or before it came.
var ErrEnded = errors.New("the stream has ended")

// Queue hands items from the goroutines and backend threads that produce
// them to a stream's single sender. It is bounded twice, by the number of
// items and by their bytes (as size reports them): a producer whose item
// would go past either waits for the sender to make room, except into an
// empty queue (so one item larger than the byte bound still goes). It never
// waits longer than the stall timeout: then Push gives up with ErrStalled,
// and the caller cuts the stream off, so that a client that stops reading
// holds no backend thread for longer than that. The sender takes everything
// queued at once, so a busy stream costs one wake-up per batch rather than
// one per item; with the batch it holds, a stream keeps at most twice the
// bounds in memory. When the sender stops it closes the queue: items queued
// then, and pushed later, are dropped with the queue's drop function (items
// may hold memory the garbage collector does not return, lent by a
// backend). All methods are safe for concurrent use.
type Queue[T any] struct {
	mu       sync.Mutex
	items    []T
	spare    []T
	bytes    int
	maxItems int
	maxBytes int
	stall    time.Duration
	size     func(T) int
	drop     func(T)       // nil: nothing to do
	ready    chan struct{} // capacity 1: the queue became non-empty
	room     chan struct{} // closed (and replaced) when the sender frees room
	full     bool          // a producer waits on room
	closed   bool          // the sender stopped: items are dropped, not queued
	// queued is len(items), written under mu and read without it (Len),
	// so that a producer that checks whether the queue is empty before it
	// sends on its own takes no lock for it.
	queued atomic.Int64
}

// New returns a queue of at most maxItems items and maxBytes bytes (each
// item weighing size(item)), whose producers wait at most stall for room.
// drop (nil: none) releases what an item that is never taken holds: one
// that Push refuses, or one left when the queue is closed.
func New[T any](maxItems, maxBytes int, stall time.Duration, size func(T) int, drop func(T)) *Queue[T] {
	return &Queue[T]{maxItems: maxItems, maxBytes: maxBytes, stall: stall, size: size, drop: drop,
		ready: make(chan struct{}, 1), room: make(chan struct{})}
}

// dropItem releases an item that is never taken.
func (q *Queue[T]) dropItem(item T) {
	if q.drop != nil {
		q.drop(item)
	}
}

// fits reports whether an item of size bytes may join the queue now.
func (q *Queue[T]) fits(size int) bool {
	return len(q.items) == 0 || len(q.items) < q.maxItems && q.bytes+size <= q.maxBytes
}

// Push queues item, waiting while the queue is full: until there is room
// (nil), done closes or the queue is closed (ErrEnded) or the stall timeout
// passes (ErrStalled). The item is dropped unless Push returns nil.
func (q *Queue[T]) Push(item T, done <-chan struct{}) error {
	size := q.size(item)
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
			q.dropItem(item)
			return ErrEnded
		case <-timer.C:
			q.dropItem(item)
			return ErrStalled
		}
		q.mu.Lock()
	}
	if q.closed {
		q.mu.Unlock()
		q.dropItem(item)
		return ErrEnded
	}
	wake := len(q.items) == 0
	q.items = append(q.items, item)
	q.bytes += size
	q.queued.Store(int64(len(q.items)))
	q.mu.Unlock()
	if wake {
		select {
		case q.ready <- struct{}{}:
		default:
		}
	}
	return nil
}

// Len returns how many items are queued. It takes no lock: an item a
// caller pushed before is counted, one that another goroutine pushes at
// the same time may not be yet.
func (q *Queue[T]) Len() int { return int(q.queued.Load()) }

// Ready is signalled when the queue becomes non-empty; the sender waits on
// it between batches.
func (q *Queue[T]) Ready() <-chan struct{} { return q.ready }

// Take returns every queued item (nil if none). The slice is the sender's
// until it passes it back to Recycle. Taking nothing keeps the queue's
// storage: a sender that wakes to an empty queue passes nothing back.
func (q *Queue[T]) Take() []T {
	q.mu.Lock()
	if len(q.items) == 0 {
		q.mu.Unlock()
		return nil
	}
	batch := q.items
	q.items, q.spare = q.spare[:0], nil
	q.bytes = 0
	q.queued.Store(0)
	if q.full {
		close(q.room)
		q.room, q.full = make(chan struct{}), false
	}
	q.mu.Unlock()
	return batch
}

// Recycle gives a batch's storage back for reuse.
func (q *Queue[T]) Recycle(batch []T) {
	clear(batch)
	q.mu.Lock()
	if q.spare == nil && cap(batch) <= 4*q.maxItems {
		q.spare = batch[:0]
	}
	q.mu.Unlock()
}

// Close stops the queue for good, when its sender stops: queued items are
// dropped now, pushed ones from then on, and waiting producers give up with
// ErrEnded. Later calls do nothing.
func (q *Queue[T]) Close() {
	q.mu.Lock()
	left := q.items
	q.items, q.spare, q.bytes = nil, nil, 0
	q.queued.Store(0)
	q.closed = true
	if q.full {
		close(q.room)
		q.room, q.full = make(chan struct{}), false
	}
	q.mu.Unlock()
	for _, item := range left {
		q.dropItem(item)
	}
}
