package abi_test

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/internal/testenv"
	"github.com/tritonhost/tritonhost/loader"
)

// recordingTracer traces requests whose id starts with "t" and keeps the
// finished traces.
type recordingTracer struct {
	mu     sync.Mutex
	traces []*core.Trace
}

func (r *recordingTracer) Sample(string, int64) bool { return true }

func (r *recordingTracer) Finish(t *core.Trace) {
	r.mu.Lock()
	r.traces = append(r.traces, t)
	r.mu.Unlock()
}

func TestTracedRequestsReachTheBackendAndTheTracer(t *testing.T) {
	t.Parallel()
	cfg := `name: "traced"
backend: "traced"
max_batch_size: 0
input [ { name: "IN" data_type: TYPE_INT32 dims: [ 1 ] } ]
output [ { name: "OUT" data_type: TYPE_STRING dims: [ 1 ] } ]
`
	repo := testenv.Repository(t, testenv.Model{Name: "traced", Config: cfg,
		Files: []string{testenv.SharedLibrary(t, "triton_traced", "testdata/traced.c")}})
	tracer := &recordingTracer{}
	srv := startServer(t, repo, func(c *core.Options, _ *loader.Options) { c.Tracer = tracer })

	events := infer(t, srv, &core.Submission{Model: "traced", ID: "t-1",
		Inputs: []core.Input{core.NewInput("IN", core.TypeInt32, []int64{1}, int32s(1))}})
	if len(events) != 1 || events[0].resp == nil || events[0].resp.Err != nil {
		t.Fatalf("events %+v", events)
	}
	elems, err := core.DecodeBytes(output(t, events[0].resp, "OUT").Data)
	if err != nil || len(elems) != 1 {
		t.Fatalf("OUT = %v, %v", elems, err)
	}
	if !testenv.Eventually(func() bool {
		tracer.mu.Lock()
		defer tracer.mu.Unlock()
		return len(tracer.traces) == 1
	}) {
		t.Error("gave up waiting for the finished trace")
	}
	tr := tracer.traces[0]
	want := fmt.Sprintf("traced=1 id=%d parent=0 model=traced version=1 request=t-1", tr.ID)
	if got := string(elems[0]); got != want {
		t.Errorf("backend saw %q, want %q", got, want)
	}
	var names []string
	var last uint64
	for _, a := range tr.Activities() {
		names = append(names, a.Name)
		if a.Timestamp < last && a.Name != "BACKEND_STEP" && !strings.HasPrefix(a.Name, "COMPUTE") {
			t.Errorf("activity %s at %d goes back in time", a.Name, a.Timestamp)
		}
		last = max(last, a.Timestamp)
	}
	for _, w := range []string{"REQUEST_START", "QUEUE_START", "BACKEND_STEP", "COMPUTE_START", "COMPUTE_INPUT_END", "COMPUTE_OUTPUT_START", "COMPUTE_END", "REQUEST_END"} {
		if !slices.Contains(names, w) {
			t.Errorf("trace lacks %s: %v", w, names)
		}
	}
	if names[0] != "REQUEST_START" || names[len(names)-1] != "REQUEST_END" {
		t.Errorf("activities %v should start with REQUEST_START and end with REQUEST_END", names)
	}

	// The instance's memory report reaches the statistics.
	stats, err := srv.Statistics("traced", 1)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(stats[0].MemoryUsage); got != "[{CPU 0 1000} {CPU_PINNED 0 24}]" {
		t.Errorf("memory usage = %s, want CPU 1000 and CPU_PINNED 24", got)
	}
}

func TestUntracedRequestHasNoTrace(t *testing.T) {
	t.Parallel()
	cfg := `name: "traced"
backend: "traced"
max_batch_size: 0
input [ { name: "IN" data_type: TYPE_INT32 dims: [ 1 ] } ]
output [ { name: "OUT" data_type: TYPE_STRING dims: [ 1 ] } ]
`
	repo := testenv.Repository(t, testenv.Model{Name: "traced", Config: cfg,
		Files: []string{testenv.SharedLibrary(t, "triton_traced", "testdata/traced.c")}})
	srv := startServer(t, repo)
	events := infer(t, srv, &core.Submission{Model: "traced", ID: "u",
		Inputs: []core.Input{core.NewInput("IN", core.TypeInt32, []int64{1}, int32s(1))}})
	elems, _ := core.DecodeBytes(output(t, events[0].resp, "OUT").Data)
	if len(elems) != 1 || string(elems[0]) != "traced=0" {
		t.Errorf("backend saw %q, want traced=0", elems)
	}
}
