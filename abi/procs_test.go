package abi_test

import (
	"context"
	"os"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/tritonhost/tritonhost/abi"
	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// TestBackendThreadsOutnumberingProcessorsGetOneMore runs more square
// requests at once than the runtime has processors, each answered from a
// thread of the backend's own, on a host with ExtraProcs 1: while they run
// the runtime has one processor more, and a second after they end its
// default again; the threads are counted as live while they run and not
// after. Not parallel: the counts and the setting are the process's.
func TestBackendThreadsOutnumberingProcessorsGetOneMore(t *testing.T) {
	if os.Getenv("GOMAXPROCS") != "" {
		t.Skip("GOMAXPROCS is set in the environment, which turns the extra processors off")
	}
	base := runtime.GOMAXPROCS(0)
	srv := startServerWith(t, testenv.Repository(t, testenv.Model{Name: "square_int32", Config: testenv.ExampleConfig(t, "square_int32")}),
		serverSetup{host: abi.HostOptions{ExtraProcs: 1}})

	requests := base + 2
	const k = 200
	var wg sync.WaitGroup
	fn := func(resp *core.Response, final bool) {
		if resp != nil {
			time.Sleep(200 * time.Microsecond) // keeps each backend thread sending for k*200µs at least
		}
		if final {
			wg.Done()
		}
	}
	for range requests {
		wg.Add(1)
		req := &core.Submission{Model: "square_int32", Inputs: []core.Input{core.NewInput("IN", core.TypeInt32, []int64{1}, int32s(k))}}
		if err := srv.Infer(context.Background(), req, fn); err != nil {
			t.Fatal(err)
		}
	}
	ended := make(chan struct{})
	go func() { wg.Wait(); close(ended) }()
	most, live := base, int64(0)
	for running := true; running; {
		select {
		case <-ended:
			running = false
		case <-time.After(time.Millisecond):
			most = max(most, runtime.GOMAXPROCS(0))
			live = max(live, abi.BackendThreadsLive())
		}
	}
	if most != base+1 {
		t.Errorf("%d backend threads sending at once: at most %d processors, want %d (the default %d and one)", requests, most, base+1, base)
	}
	if live < int64(requests) {
		t.Errorf("%d backend threads sending at once: at most %d counted as live", requests, live)
	}
	if !testenv.Eventually(func() bool { return runtime.GOMAXPROCS(0) == base && abi.BackendThreadsLive() == 0 }) {
		t.Errorf("after the threads ended: %d processors, %d threads live; want the default %d and none", runtime.GOMAXPROCS(0), abi.BackendThreadsLive(), base)
	}
}
