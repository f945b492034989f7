package abi_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/tritonhost/tritonhost/abi"
	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/scheduling"
	"github.com/tritonhost/tritonhost/core/serverlog"
	"github.com/tritonhost/tritonhost/internal/testenv"
	"github.com/tritonhost/tritonhost/loader"
)

type testServer struct {
	*core.Server
	host      *abi.Host
	log       *testenv.LogBuffer
	afterStop []func() // checks that run once the server has stopped
}

// TestMain runs the tests, then checks that they left no goroutine behind
// (tests run in parallel, so the count is only meaningful at the end) and
// no handle of the backend API live.
func TestMain(m *testing.M) {
	goroutines := runtime.NumGoroutine()
	code := m.Run()
	testenv.RemoveSharedFakeCUDADriver()
	if code == 0 {
		testenv.Eventually(func() bool { return runtime.NumGoroutine() <= goroutines })
		if n := runtime.NumGoroutine(); n > goroutines {
			buf := make([]byte, 1<<20)
			fmt.Fprintf(os.Stderr, "%d goroutines left after the tests (%d before):\n%s\n", n, goroutines, buf[:runtime.Stack(buf, true)])
			code = 1
		}
		if n := abi.LiveHandles(); n != 0 {
			fmt.Fprintf(os.Stderr, "%d handles of the backend API still live after the tests\n", n)
			code = 1
		}
	}
	os.Exit(code)
}

// startServer serves repo with the project's backends on a host of its own
// and, at cleanup, stops the server and checks that nothing leaked: no live
// request, no backend API object.
func startServer(t *testing.T, repo string, mutate ...func(*core.Options, *loader.Options)) *testServer {
	t.Helper()
	return startServerWith(t, repo, serverSetup{}, mutate...)
}

// serverSetup is what startServerWith does differently from startServer.
type serverSetup struct {
	host abi.HostOptions // the host's options (its logger is the test's)
	// wrap, if set, wraps the loader as the server's backend provider.
	wrap func(core.BackendProvider) core.BackendProvider
	// detached leaves the host without a server for the in-process API,
	// as while the server's models load.
	detached bool
}

// startServerWith is startServer as setup says.
func startServerWith(t *testing.T, repo string, setup serverSetup, mutate ...func(*core.Options, *loader.Options)) *testServer {
	t.Helper()
	hopts := setup.host
	backends := testenv.BackendDir(t)
	logs := &testenv.LogBuffer{}
	logger := serverlog.New(logs)
	lopts := loader.Options{BackendDirectory: backends, Logger: logger, CloseGrace: 5 * time.Second}
	copts := core.Options{ModelRepositories: []string{repo}, Logger: logger, Schedulers: scheduling.New}
	for _, f := range mutate {
		f(&copts, &lopts)
	}
	hopts.Logger = lopts.Logger
	host := abi.NewHost(hopts)
	lopts.Opener = host
	copts.Backends = loader.New(lopts)
	if setup.wrap != nil {
		copts.Backends = setup.wrap(copts.Backends)
	}
	srv, err := core.NewServer(copts)
	if err != nil {
		t.Fatalf("NewServer: %v", err)
	}
	if !setup.detached {
		host.AttachServer(srv)
	}
	ts := &testServer{Server: srv, host: host, log: logs}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := srv.Stop(ctx); err != nil {
			t.Errorf("Stop: %v", err)
		}
		if n := srv.LiveRequests(); n != 0 {
			t.Errorf("%d request(s) still live after Stop", n)
		}
		if !testenv.Eventually(func() bool { return host.Live().Zero() }) {
			t.Errorf("gave up waiting for every backend API object released: live objects: %s", host.Live().String())
		}
		for _, check := range ts.afterStop {
			check()
		}
		host.Close()
		if t.Failed() || os.Getenv("TESTLOG") != "" {
			t.Logf("server log:\n%s", logs.String())
		}
	})
	return ts
}

// event is one call of a ResponseFunc.
type event struct {
	resp  *core.Response
	final bool
}

// collector records the responses of one request.
type collector struct {
	mu     sync.Mutex
	events []event
	done   chan struct{}
	finals int
}

func newCollector() *collector { return &collector{done: make(chan struct{})} }

func (c *collector) fn(resp *core.Response, final bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.events = append(c.events, event{resp, final})
	if final {
		c.finals++
		if c.finals == 1 {
			close(c.done)
		}
	}
}

// wait returns the events once the final one arrived.
func (c *collector) wait(t *testing.T) []event {
	t.Helper()
	select {
	case <-c.done:
	case <-time.After(20 * time.Second):
		t.Fatal("timed out waiting for the final response")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]event(nil), c.events...)
}

func int32s(vs ...int32) []byte {
	b := make([]byte, 4*len(vs))
	for i, v := range vs {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(v))
	}
	return b
}

func uint32s(vs ...uint32) []byte {
	b := make([]byte, 4*len(vs))
	for i, v := range vs {
		binary.LittleEndian.PutUint32(b[4*i:], v)
	}
	return b
}

func float32s(vs ...float32) []byte {
	b := make([]byte, 4*len(vs))
	for i, v := range vs {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	return b
}

func output(t *testing.T, r *core.Response, name string) core.Output {
	t.Helper()
	for _, o := range r.Outputs {
		if o.Name == name {
			return o
		}
	}
	t.Fatalf("response has no output %q: %+v", name, r)
	return core.Output{}
}

func scalarInt32(t *testing.T, r *core.Response, name string) int32 {
	t.Helper()
	o := output(t, r, name)
	if len(o.Data) != 4 {
		t.Fatalf("output %q has %d bytes, want 4", name, len(o.Data))
	}
	return int32(binary.LittleEndian.Uint32(o.Data))
}

func infer(t *testing.T, srv *testServer, req *core.Submission) []event {
	t.Helper()
	c := newCollector()
	if err := srv.Infer(context.Background(), req, c.fn); err != nil {
		t.Fatalf("Infer(%s): %v", req.Model, err)
	}
	return c.wait(t)
}
