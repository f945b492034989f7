package grpcserver

import (
	"errors"
	"sync"
	"testing"
	"time"
)

// event returns an event whose message holds size bytes.
func event(size int, last bool) streamEvent {
	m := (&encodedMessage{}).single(make([]byte, size))
	return streamEvent{msg: m, last: last}
}

func TestSendQueueKeepsOrderAndWaitsWhenFull(t *testing.T) {
	t.Parallel()
	q := newSendQueue(2, 1<<20, time.Minute)
	done := make(chan struct{})
	if err := q.push(streamEvent{last: true}, done); err != nil {
		t.Fatal(err)
	}
	if err := q.push(streamEvent{}, done); err != nil {
		t.Fatal(err)
	}
	pushed := make(chan error)
	go func() { pushed <- q.push(streamEvent{last: true}, done) }()
	select {
	case err := <-pushed:
		t.Fatalf("push into a full queue did not wait (%v)", err)
	case <-time.After(20 * time.Millisecond):
	}
	batch := q.take()
	if len(batch) != 2 || !batch[0].last || batch[1].last {
		t.Fatalf("first batch = %+v", batch)
	}
	q.recycle(batch)
	if err := <-pushed; err != nil {
		t.Fatalf("push after room was made: %v", err)
	}
	if batch := q.take(); len(batch) != 1 || !batch[0].last {
		t.Fatalf("second batch = %+v", batch)
	}
	// A waiting push gives up when the stream ends.
	_ = q.push(streamEvent{}, done)
	_ = q.push(streamEvent{}, done)
	go func() { pushed <- q.push(streamEvent{}, done) }()
	close(done)
	if err := <-pushed; !errors.Is(err, errStreamEnded) {
		t.Fatalf("push after the stream ended: %v, want errStreamEnded", err)
	}
}

func TestSendQueueBoundsBytesButTakesOneLargeMessage(t *testing.T) {
	t.Parallel()
	q := newSendQueue(100, 1000, time.Minute)
	done := make(chan struct{})
	// Into an empty queue, a message larger than the bound still goes.
	if err := q.push(event(5000, false), done); err != nil {
		t.Fatal(err)
	}
	pushed := make(chan error)
	go func() { pushed <- q.push(event(10, true), done) }()
	select {
	case err := <-pushed:
		t.Fatalf("push past the byte bound did not wait (%v)", err)
	case <-time.After(20 * time.Millisecond):
	}
	q.recycle(q.take())
	if err := <-pushed; err != nil {
		t.Fatal(err)
	}
	// Under the bound, several fit.
	for range 3 {
		if err := q.push(event(300, false), done); err != nil {
			t.Fatal(err)
		}
	}
	if batch := q.take(); len(batch) != 4 {
		t.Fatalf("batch of %d events, want the small one and three more", len(batch))
	}
}

func TestSendQueueGivesUpAfterTheStallTimeout(t *testing.T) {
	t.Parallel()
	q := newSendQueue(1, 1<<20, 30*time.Millisecond)
	done := make(chan struct{})
	defer close(done)
	if err := q.push(streamEvent{}, done); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err := q.push(streamEvent{}, done)
	if !errors.Is(err, errStalled) {
		t.Fatalf("push into a queue nobody drains: %v, want errStalled", err)
	}
	if waited := time.Since(start); waited < 30*time.Millisecond {
		t.Errorf("gave up after %v, before the stall timeout", waited)
	}
	if batch := q.take(); len(batch) != 1 {
		t.Errorf("the stalled event was queued: %d events", len(batch))
	}
}

func TestSendQueueManyProducers(t *testing.T) {
	t.Parallel()
	q := newSendQueue(8, 1<<20, time.Minute)
	done := make(chan struct{})
	const producers, each = 4, 1000
	var wg sync.WaitGroup
	for range producers {
		wg.Go(func() {
			for range each {
				if err := q.push(streamEvent{last: true}, done); err != nil {
					t.Error(err)
				}
			}
		})
	}
	got := 0
	for got < producers*each {
		batch := q.take()
		if len(batch) == 0 {
			<-q.ready
			continue
		}
		got += len(batch)
		q.recycle(batch)
	}
	wg.Wait()
	if got != producers*each {
		t.Fatalf("received %d events, want %d", got, producers*each)
	}
}
