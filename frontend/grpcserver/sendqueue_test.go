package grpcserver

import (
	"sync"
	"testing"
	"time"
)

func TestSendQueueKeepsOrderAndBlocksWhenFull(t *testing.T) {
	q := newSendQueue(2)
	done := make(chan struct{})
	q.push(streamEvent{last: true}, done)
	q.push(streamEvent{}, done)
	pushed := make(chan bool)
	go func() { pushed <- q.push(streamEvent{last: true}, done) }()
	select {
	case <-pushed:
		t.Fatal("push into a full queue did not wait")
	case <-time.After(20 * time.Millisecond):
	}
	batch := q.take()
	if len(batch) != 2 || !batch[0].last || batch[1].last {
		t.Fatalf("first batch = %+v", batch)
	}
	q.recycle(batch)
	if !<-pushed {
		t.Fatal("push failed after room was made")
	}
	if batch := q.take(); len(batch) != 1 || !batch[0].last {
		t.Fatalf("second batch = %+v", batch)
	}
	// A waiting push gives up when the stream ends.
	q.push(streamEvent{}, done)
	q.push(streamEvent{}, done)
	go func() { pushed <- q.push(streamEvent{}, done) }()
	close(done)
	if <-pushed {
		t.Fatal("push succeeded after the stream ended")
	}
}

func TestSendQueueManyProducers(t *testing.T) {
	q := newSendQueue(8)
	done := make(chan struct{})
	const producers, each = 4, 1000
	var wg sync.WaitGroup
	for range producers {
		wg.Go(func() {
			for range each {
				q.push(streamEvent{last: true}, done)
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
