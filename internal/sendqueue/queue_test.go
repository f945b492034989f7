package sendqueue

import (
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tritonhost/tritonhost/internal/testenv"
)

// streamEvent is a test item: its size and whether it is a request's last.
type streamEvent struct {
	bytes int
	last  bool
}

func newSendQueue(maxItems, maxBytes int, stall time.Duration) *Queue[streamEvent] {
	return New(maxItems, maxBytes, stall, func(ev streamEvent) int { return ev.bytes }, nil)
}

// event returns an event of size bytes.
func event(size int, last bool) streamEvent { return streamEvent{bytes: size, last: last} }

func TestQueueKeepsOrderAndWaitsWhenFull(t *testing.T) {
	t.Parallel()
	q := newSendQueue(2, 1<<20, time.Minute)
	done := make(chan struct{})
	if err := q.Push(streamEvent{last: true}, done); err != nil {
		t.Fatal(err)
	}
	if err := q.Push(streamEvent{}, done); err != nil {
		t.Fatal(err)
	}
	pushed := make(chan error)
	go func() { pushed <- q.Push(streamEvent{last: true}, done) }()
	select {
	case err := <-pushed:
		t.Fatalf("push into a full queue did not wait (%v)", err)
	case <-time.After(20 * time.Millisecond):
	}
	batch := q.Take()
	if len(batch) != 2 || !batch[0].last || batch[1].last {
		t.Fatalf("first batch = %+v", batch)
	}
	q.Recycle(batch)
	if err := <-pushed; err != nil {
		t.Fatalf("push after room was made: %v", err)
	}
	if batch := q.Take(); len(batch) != 1 || !batch[0].last {
		t.Fatalf("second batch = %+v", batch)
	}
	// A waiting push gives up when the stream ends.
	_ = q.Push(streamEvent{}, done)
	_ = q.Push(streamEvent{}, done)
	go func() { pushed <- q.Push(streamEvent{}, done) }()
	close(done)
	if err := <-pushed; !errors.Is(err, ErrEnded) {
		t.Fatalf("push after the stream ended: %v, want ErrEnded", err)
	}
}

func TestQueueBoundsBytesButTakesOneLargeMessage(t *testing.T) {
	t.Parallel()
	q := newSendQueue(100, 1000, time.Minute)
	done := make(chan struct{})
	// Into an empty queue, a message larger than the bound still goes.
	if err := q.Push(event(5000, false), done); err != nil {
		t.Fatal(err)
	}
	pushed := make(chan error)
	go func() { pushed <- q.Push(event(10, true), done) }()
	select {
	case err := <-pushed:
		t.Fatalf("push past the byte bound did not wait (%v)", err)
	case <-time.After(20 * time.Millisecond):
	}
	q.Recycle(q.Take())
	if err := <-pushed; err != nil {
		t.Fatal(err)
	}
	// Under the bound, several fit.
	for range 3 {
		if err := q.Push(event(300, false), done); err != nil {
			t.Fatal(err)
		}
	}
	if batch := q.Take(); len(batch) != 4 {
		t.Fatalf("batch of %d events, want the small one and three more", len(batch))
	}
}

func TestQueueGivesUpAfterTheStallTimeout(t *testing.T) {
	t.Parallel()
	q := newSendQueue(1, 1<<20, 30*time.Millisecond)
	done := make(chan struct{})
	defer close(done)
	if err := q.Push(streamEvent{}, done); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err := q.Push(streamEvent{}, done)
	if !errors.Is(err, ErrStalled) {
		t.Fatalf("push into a queue nobody drains: %v, want ErrStalled", err)
	}
	if waited := time.Since(start); waited < 30*time.Millisecond {
		t.Errorf("gave up after %v, before the stall timeout", waited)
	}
	if batch := q.Take(); len(batch) != 1 {
		t.Errorf("the stalled event was queued: %d events", len(batch))
	}
}

func TestQueueManyProducers(t *testing.T) {
	t.Parallel()
	q := newSendQueue(8, 1<<20, time.Minute)
	done := make(chan struct{})
	const producers, each = 4, 1000
	var wg sync.WaitGroup
	for range producers {
		wg.Go(func() {
			for range each {
				if err := q.Push(streamEvent{last: true}, done); err != nil {
					t.Error(err)
				}
			}
		})
	}
	got := 0
	for got < producers*each {
		batch := q.Take()
		if len(batch) == 0 {
			<-q.Ready()
			continue
		}
		got += len(batch)
		q.Recycle(batch)
	}
	wg.Wait()
	if got != producers*each {
		t.Fatalf("received %d events, want %d", got, producers*each)
	}
}

func TestQueueDropsWhatItNeverHandsOn(t *testing.T) {
	t.Parallel()
	var dropped []int
	var mu sync.Mutex
	q := New(1, 1<<20, 20*time.Millisecond, func(n int) int { return 1 }, func(n int) {
		mu.Lock()
		dropped = append(dropped, n)
		mu.Unlock()
	})
	done := make(chan struct{})
	if err := q.Push(1, done); err != nil {
		t.Fatal(err)
	}
	if err := q.Push(2, done); !errors.Is(err, ErrStalled) {
		t.Fatalf("push into a full queue: %v", err)
	}
	// A producer at Close, waiting for room or stalled by then, gives up
	// (TestCloseWakesAWaitingProducer makes sure that it waits).
	waiting := make(chan error)
	go func() { waiting <- q.Push(3, nil) }()
	q.Close()
	if err := <-waiting; !errors.Is(err, ErrEnded) && !errors.Is(err, ErrStalled) {
		t.Fatalf("a producer at Close: %v", err)
	}
	if err := q.Push(4, done); !errors.Is(err, ErrEnded) {
		t.Fatalf("push into a closed queue: %v", err)
	}
	if got := q.Take(); len(got) != 0 {
		t.Fatalf("a closed queue handed on %v", got)
	}
	q.Close()
	mu.Lock()
	defer mu.Unlock()
	slices.Sort(dropped)
	if !slices.Equal(dropped, []int{1, 2, 3, 4}) {
		t.Fatalf("dropped %v, want every item once", dropped)
	}
}

// TestCloseWakesAWaitingProducer: a producer that waits for room in a
// full queue gives up with ErrEnded as soon as the queue closes, long
// before its stall timeout, and its item is dropped.
func TestCloseWakesAWaitingProducer(t *testing.T) {
	t.Parallel()
	var dropped atomic.Int32
	q := New(1, 1<<20, time.Hour, func(int) int { return 1 }, func(int) { dropped.Add(1) })
	if err := q.Push(1, nil); err != nil {
		t.Fatal(err)
	}
	waiting := make(chan error, 1)
	go func() { waiting <- q.Push(2, nil) }()
	testenv.WaitUntil(t, "the producer to wait for room", func() bool {
		q.mu.Lock()
		defer q.mu.Unlock()
		return q.full
	})
	q.Close()
	select {
	case err := <-waiting:
		if !errors.Is(err, ErrEnded) {
			t.Fatalf("a producer waiting at Close: %v, want ErrEnded", err)
		}
	case <-time.After(testenv.Patience):
		t.Fatal("a producer waiting at Close still waits")
	}
	if n := dropped.Load(); n != 2 {
		t.Errorf("dropped %d items, want 2 (the queued one and the waiting one)", n)
	}
}

// TestLenCountsWhatIsQueued: Len, which takes no lock, follows every
// operation that changes what is queued.
func TestLenCountsWhatIsQueued(t *testing.T) {
	t.Parallel()
	q := newSendQueue(4, 1<<20, time.Minute)
	done := make(chan struct{})
	for _, step := range []struct {
		what string
		do   func()
		want int
	}{
		{"new", func() {}, 0},
		{"one pushed", func() { _ = q.Push(event(1, false), done) }, 1},
		{"three pushed", func() { _ = q.Push(event(1, false), done); _ = q.Push(event(1, true), done) }, 3},
		{"taken", func() { q.Recycle(q.Take()) }, 0},
		{"pushed again", func() { _ = q.Push(event(1, false), done) }, 1},
		{"closed", q.Close, 0},
		{"pushed after close", func() { _ = q.Push(event(1, false), done) }, 0},
	} {
		step.do()
		if got := q.Len(); got != step.want {
			t.Errorf("%s: Len %d, want %d", step.what, got, step.want)
		}
	}
}

// BenchmarkLen asks whether the queue is empty, as a stream's producer
// does before it sends on its own, while the sender takes what another
// producer pushes.
func BenchmarkLen(b *testing.B) {
	q := newSendQueue(1<<20, 1<<30, time.Minute)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			_ = q.Push(event(1, false), stop)
			q.Recycle(q.Take())
		}
	})
	var n int
	for b.Loop() {
		n += q.Len()
	}
	close(stop)
	wg.Wait()
	_ = n
}

// A sender that wakes to an empty queue (the producer sent on its own)
// takes nothing and passes nothing back; the queue's storage must survive
// that, so that a busy stream allocates nothing per batch.
func TestQueueKeepsItsStorageAcrossEmptyTakes(t *testing.T) {
	q := newSendQueue(64, 1<<20, time.Minute)
	done := make(chan struct{})
	push := func() {
		for range 8 {
			if err := q.Push(event(1, false), done); err != nil {
				t.Fatal(err)
			}
		}
	}
	take := func() []streamEvent {
		batch := q.Take()
		if len(batch) != 8 {
			t.Fatalf("took %d events, want 8", len(batch))
		}
		return batch
	}
	round := func() {
		push()
		batch := take()
		push() // while the sender sends the batch
		q.Recycle(batch)
		q.Recycle(take())
		if batch := q.Take(); batch != nil {
			t.Fatalf("an empty queue gave %d events", len(batch))
		}
	}
	round() // the two slices grow once
	round()
	if allocs := testing.AllocsPerRun(100, round); allocs != 0 {
		t.Errorf("%.1f allocations per batch with empty takes between, want 0", allocs)
	}
}
