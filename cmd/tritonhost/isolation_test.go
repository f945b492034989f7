package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tritonhost/tritonhost/client"
	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// crashConfig is the model of testdata/crash.c, its backend isolated by
// the model's own parameter (extra lines appended).
const crashConfig = `name: "crash"
backend: "crash"
max_batch_size: 0
model_transaction_policy { decoupled: true }
input [ { name: "IN" data_type: TYPE_INT32 dims: [ 1 ] } ]
output [ { name: "OUT" data_type: TYPE_INT32 dims: [ 1 ] } ]
instance_group [ { count: 1 kind: KIND_CPU } ]
parameters [ { key: "tritonhost_isolation" value: { string_value: "process" } } ]
`

// crashRepo holds the example models and "crash".
func crashRepo(t *testing.T) string {
	t.Helper()
	lib := testenv.SharedLibrary(t, "triton_crash", filepath.Join("testdata", "crash.c"))
	models := []testenv.Model{{Name: "crash", Config: crashConfig, Files: []string{lib}}}
	for _, name := range []string{"identity_int32", "square_int32"} {
		models = append(models, testenv.Model{Name: name, Config: testenv.ExampleConfig(t, name)})
	}
	return testenv.Repository(t, models...)
}

// crashOnce sends IN = mode to "crash" over a stream and returns what
// came back.
func crashOnce(t *testing.T, srv *serverProcess, mode int32) []result {
	t.Helper()
	s, err := client.OpenStream(ctxFor(t), srv.Client)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Send(client.Request{Model: "crash", ID: fmt.Sprint("mode-", mode), Inputs: []client.Tensor{client.Int32s("IN", []int64{1}, mode)}}); err != nil {
		t.Fatal(err)
	}
	s.CloseSend()
	return collect(t, s)
}

// bystanders keeps a square stream and identity unary calls going until
// stop is closed, and counts what went wrong.
func bystanders(t *testing.T, srv *serverProcess, stop <-chan struct{}) (wait func() (calls, failures int64)) {
	t.Helper()
	var calls, failures atomic.Int64
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			resp, err := srv.Client.ModelInfer(context.Background(), &pb.ModelInferRequest{ModelName: "identity_int32",
				Inputs: []*pb.ModelInferRequest_InferInputTensor{{Name: "INPUT0", Datatype: "INT32", Shape: []int64{2},
					Contents: &pb.InferTensorContents{IntContents: []int32{4, 5}}}}})
			calls.Add(1)
			if err != nil || len(resp.GetRawOutputContents()) != 1 {
				failures.Add(1)
			}
		}
	})
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			s, err := client.OpenStream(context.Background(), srv.Client)
			if err != nil {
				failures.Add(1)
				continue
			}
			_ = s.Send(client.Request{Model: "square_int32", Inputs: []client.Tensor{client.Int32s("IN", []int64{1}, 3)}})
			s.CloseSend()
			n := 0
			for {
				r, err := s.Recv()
				if err != nil {
					break
				}
				if r.Err != nil {
					failures.Add(1)
				}
				n++
			}
			calls.Add(1)
			if n != 3 {
				failures.Add(1)
			}
		}
	})
	return func() (int64, int64) {
		wg.Wait()
		return calls.Load(), failures.Load()
	}
}

// TestIsolatedBackendCrashesAlone: a backend that crashes its process (a
// segfault in execute, or on its own thread after two responses, an
// abort, an exit) takes down its worker only: the request in flight ends
// at once with an error naming the model and how the worker ended (the
// runtime's crash line where it caught the fault, else the signal), the
// models in the server's process keep serving throughout (no failure), and
// the model serves again once its worker restarted.
func TestIsolatedBackendCrashesAlone(t *testing.T) {
	srv := startServer(t, crashRepo(t), "--backend-restart-backoff", "50")
	stop := make(chan struct{})
	wait := bystanders(t, srv, stop)
	for _, tc := range []struct {
		name      string
		mode      int32
		responses int    // before the error
		how       string // in the error
	}{
		{"segfault in execute", 1, 0, "SIGSEGV"},
		{"segfault on a thread after two responses", 2, 2, "signal 11 (segmentation fault)"},
		{"abort", 3, 0, "SIGABRT"},
		{"exit", 4, 0, "exited with status 3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := crashOnce(t, srv, tc.mode)
			if len(got) != tc.responses+1 {
				t.Fatalf("%d messages, want %d responses and the error: %+v", len(got), tc.responses, got)
			}
			last := got[len(got)-1]
			for _, want := range []string{"model 'crash' version 1", "the worker process", tc.how, "the model restarts"} {
				if !strings.Contains(last.err, want) {
					t.Errorf("error %q does not say %q", last.err, want)
				}
			}
			testenv.WaitUntil(t, "the crash model to serve again", func() bool {
				got := crashOnce(t, srv, 0)
				return len(got) == 1 && got[0].err == "" && len(got[0].outs["OUT"]) == 1
			})
		})
	}
	close(stop)
	calls, failures := wait()
	if failures != 0 || calls == 0 {
		t.Errorf("the bystanders made %d calls, %d of which failed; want none failed", calls, failures)
	}
	// A restart is counted just after the new worker takes requests, which
	// may have answered the last crashOnce first.
	srv.waitMetric(t, `tritonhost_backend_restarts_total{model="crash",version="1"}`, 4)
	metrics := srv.scrapeMetrics(t)
	if !strings.Contains(metrics, `tritonhost_backend_restarts_total{model="crash",version="1"} 4`) {
		t.Errorf("/metrics does not count 4 restarts of crash:\n%s", grepLines(metrics, "restarts"))
	}
}

// TestIsolatedBackendThatHangsIsKilled: an execution past
// --backend-execute-timeout kills its worker, fails its request naming the
// flag, and the model restarts.
func TestIsolatedBackendThatHangsIsKilled(t *testing.T) {
	srv := startServer(t, crashRepo(t), "--backend-execute-timeout", "500", "--backend-restart-backoff", "50")
	start := time.Now()
	got := crashOnce(t, srv, 5)
	if len(got) != 1 || !strings.Contains(got[0].err, "--backend-execute-timeout") {
		t.Fatalf("got %+v, want one error naming --backend-execute-timeout", got)
	}
	if took := time.Since(start); took > 30*time.Second {
		t.Errorf("the hung request was answered after %v", took)
	}
	testenv.WaitUntil(t, "the crash model to serve again", func() bool {
		got := crashOnce(t, srv, 0)
		return len(got) == 1 && got[0].err == ""
	})
}

// TestIsolatedBackendIsBoundedInMemory: under --backend-memory-limit a
// backend that allocates without end fails its allocations in its worker,
// and the server and its other models stay as they were.
func TestIsolatedBackendIsBoundedInMemory(t *testing.T) {
	srv := startServer(t, crashRepo(t), "--backend-memory-limit", fmt.Sprint(1<<30))
	before := srv.ProcStatus(t, "VmRSS")
	got := crashOnce(t, srv, 6)
	if len(got) != 1 || !strings.Contains(got[0].err, "out of memory after") {
		t.Fatalf("got %+v, want the backend's out-of-memory error", got)
	}
	if grew := srv.ProcStatus(t, "VmRSS") - before; grew > 256<<20 {
		t.Errorf("the server's own RSS grew by %d MiB", grew>>20)
	}
	if got := crashOnce(t, srv, 0); len(got) != 1 || got[0].err != "" {
		t.Errorf("after: %+v", got)
	}
}

func grepLines(text, word string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, word) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestIsolatedBackendsMetricFamiliesAreServed: the metric families a
// backend registers in its worker (TRITONSERVER_MetricFamilyNew: a
// counter, a gauge, a histogram) are on the server's /metrics with what
// the backend set, as they are for a backend in process.
func TestIsolatedBackendsMetricFamiliesAreServed(t *testing.T) {
	lib := testenv.SharedLibrary(t, "triton_metrics_test", filepath.Join("..", "..", "abi", "testdata", "metrics_backend.c"))
	repo := testenv.Repository(t, testenv.Model{Name: "metrics", Files: []string{lib}, Config: `name: "metrics"
backend: "metrics_test"
max_batch_size: 0
input [ { name: "IN" data_type: TYPE_FP64 dims: [ -1 ] } ]
output [
  { name: "CODES" data_type: TYPE_INT32 dims: [ -1 ] },
  { name: "VALUES" data_type: TYPE_FP64 dims: [ 5 ] }
]
parameters { key: "tritonhost_isolation" value: { string_value: "process" } }
`})
	srv := startServer(t, repo)
	in := client.Tensor{Name: "IN", Datatype: "FP64", Shape: []int64{1}, Data: binary.LittleEndian.AppendUint64(nil, math.Float64bits(0.5))}
	msg, err := client.Request{Model: "metrics", ID: "m", Inputs: []client.Tensor{in}}.Message()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Client.ModelInfer(ctxFor(t), msg); err != nil {
		t.Fatalf("ModelInfer(metrics): %v", err)
	}
	if !strings.Contains(srv.Log(), `model "metrics" version 1: its backend runs in worker process`) {
		t.Fatalf("the model is not isolated")
	}
	text := srv.scrapeMetrics(t)
	for _, want := range []string{
		"# TYPE thost_test_requests counter",
		`thost_test_requests{kind="ok",model="metrics"}`,
		"# TYPE thost_test_level gauge",
		`thost_test_level{model="metrics"}`,
		"# TYPE thost_test_latency histogram",
		`thost_test_latency_bucket{model="metrics",le="+Inf"}`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("/metrics lacks %q:\n%s", want, grepLines(text, "thost_test"))
		}
	}
}
