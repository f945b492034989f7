package reliability

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/tritonhost/tritonhost/client"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// settled waits until the server's goroutine count is at most floor (any
// count when floor is 0) and has not changed for settleFor, at most
// testenv.Patience, and returns its goroutines, threads and RSS then. One
// that never settles is returned as it is: the caller's bounds judge it.
func settled(t *testing.T, srv *testenv.Server, floor int) (int, int64, int64) {
	t.Helper()
	const settleFor = 300 * time.Millisecond
	g, since := srv.Goroutines(t), time.Now()
	testenv.Eventually(func() bool {
		if next := srv.Goroutines(t); next != g {
			g, since = next, time.Now()
		}
		return (floor == 0 || g <= floor) && time.Since(since) >= settleFor
	})
	return g, srv.ProcStatus(t, "Threads"), srv.ProcStatus(t, "VmRSS")
}

// dropRound opens streams on a new connection, starts long requests on
// each (repeat with delays, square with many responses), and drops them
// mid-flight, once each has received a response: half by cancelling the
// call, the rest by closing the connection under them.
func dropRound(t *testing.T, srv *testenv.Server, streams int) {
	conn, c := srv.Dial(t)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	first := make(chan struct{}, streams) // one per stream: its first response, or its end
	cancels := make([]context.CancelFunc, streams)
	for s := range streams {
		sctx, scancel := context.WithCancel(ctx)
		cancels[s] = scancel
		st, err := client.OpenStream(sctx, c)
		if err != nil {
			t.Fatal(err)
		}
		req := squareRequest(fmt.Sprint(s), 100000)
		if s%2 == 1 {
			req = repeatRequest(fmt.Sprint(s), 0, 8)
			req.Inputs[1] = client.Uint32s("DELAY", []int64{8}, 50, 50, 50, 50, 50, 50, 50, 50)
		}
		if err := st.Send(req); err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			for n := 0; ; n++ {
				_, err := st.Recv()
				if n == 0 {
					first <- struct{}{}
				}
				if err != nil {
					return
				}
			}
		})
	}
	deadline := time.NewTimer(time.Minute)
	defer deadline.Stop()
	for range streams {
		select {
		case <-first:
		case <-deadline.C:
			t.Fatalf("not every one of %d streams received a response within a minute", streams)
		}
	}
	for s := 0; s < streams/2; s++ {
		cancels[s]()
	}
	conn.Close()
	wg.Wait()
	cancel()
}

// TestDroppedStreamsLeaveNothingBehind: round after round of streams
// dropped mid-request, the server's goroutines, threads and memory come
// back to where they were.
func TestDroppedStreamsLeaveNothingBehind(t *testing.T) {
	srv := start(t, "")
	rounds, streams := scale(6, 20), scale(20, 100)
	// A first round warms up pools and backend threads.
	dropRound(t, srv, streams)
	g0, th0, rss0 := settled(t, srv, 0)
	var g, th int
	var rss int64
	for r := range rounds {
		dropRound(t, srv, streams)
		var threads int64
		g, threads, rss = settled(t, srv, g0)
		th = int(threads)
		t.Logf("round %d: %d goroutines, %d threads, RSS %d MiB", r+1, g, th, rss>>20)
	}
	if g > g0+4 {
		t.Errorf("goroutines grew from %d to %d over %d rounds", g0, g, rounds)
	}
	if int64(th) > th0+8 {
		t.Errorf("threads grew from %d to %d over %d rounds", th0, th, rounds)
	}
	if rss > rss0+64<<20 {
		t.Errorf("RSS grew from %d MiB to %d MiB over %d rounds", rss0>>20, rss>>20, rounds)
	}
	t.Logf("%d rounds of %d dropped streams: goroutines %d -> %d, threads %d -> %d, RSS %d MiB -> %d MiB",
		rounds, streams, g0, g, th0, th, rss0>>20, rss>>20)
	// And it still serves.
	_, c := srv.Dial(t)
	if _, err := runStream(context.Background(), c, 1, 4); err != nil {
		t.Fatal(err)
	}
}
