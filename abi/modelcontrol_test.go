package abi_test

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/tritonhost/tritonhost/abi"
	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/internal/testenv"
	"github.com/tritonhost/tritonhost/loader"
)

// The modelcontrol backend (backends_c/modelcontrol) calls the server the
// way Triton's python backend does for a Python model: model loading and
// unloading, transaction properties, and calls to other models with a
// child of the request's trace.

// command runs one command on a modelcontrol model and returns its report.
func command(t *testing.T, srv *testServer, model, id string, cmd map[string]any) map[string]any {
	t.Helper()
	js, err := json.Marshal(cmd)
	if err != nil {
		t.Fatal(err)
	}
	events := infer(t, srv, &core.Submission{Model: model, ID: id,
		Inputs: []core.Input{core.NewInput("COMMAND", core.TypeBytes, []int64{1}, core.EncodeBytes(js))}})
	if len(events) != 1 || events[0].resp == nil || events[0].resp.Err != nil {
		t.Fatalf("%s %v: events %+v", model, cmd, events)
	}
	elems, err := core.DecodeBytes(output(t, events[0].resp, "REPORT").Data)
	if err != nil || len(elems) != 1 {
		t.Fatalf("REPORT = %q, %v", elems, err)
	}
	var report map[string]any
	if err := json.Unmarshal(elems[0], &report); err != nil {
		t.Fatalf("REPORT %q: %v", elems[0], err)
	}
	return report
}

// sampleModel traces the requests of one model and keeps their traces,
// and those of the child traces spawned from them.
type sampleModel struct {
	recordingTracer
	model string
}

func (s *sampleModel) Sample(model string, _ int64) bool { return model == s.model }

// activityNames returns the names of a trace's activities in the order of
// their timestamps.
func activityNames(tr *core.Trace) []string {
	acts := tr.Activities()
	slices.SortStableFunc(acts, func(a, b core.TraceActivity) int { return cmp.Compare(a.Timestamp, b.Timestamp) })
	var names []string
	for _, a := range acts {
		names = append(names, a.Name)
	}
	return names
}

// timeline is what the probe's request records, in time order: the
// server's activities and the probe's own, probe_step.
var timeline = []string{"REQUEST_START", "QUEUE_START", "COMPUTE_START", "COMPUTE_INPUT_END",
	"probe_step", "COMPUTE_OUTPUT_START", "COMPUTE_END", "REQUEST_END"}

// A request the server traces: the backend reads its context and passes a
// command on to another model with a child of its trace, as python backend
// does for a call a Python model makes. The callee's backend sees the child
// (parent, context set on it, model, request id) and adds an activity; the
// server's tracer receives the child, finished like any trace it sampled.
func TestModelControlCallsWithAChildOfTheRequestTrace(t *testing.T) {
	t.Parallel()
	tracer := &sampleModel{model: "control"}
	srv := startServer(t, testenv.ModelControlRepository(t), func(c *core.Options, _ *loader.Options) { c.Tracer = tracer })
	r := command(t, srv, "control", "outer", map[string]any{"op": "trace", "model": "probe", "context": `{"traceparent":"00-1"}`})
	if r["ok"] != true || r["request_traced"] != true || r["request_context"] != "" || r["trace_released"] != false {
		t.Fatalf("report %v", r)
	}
	parent, child := r["parent_id"].(float64), r["child_id"].(float64)
	if parent == 0 || child == parent || r["child_parent_id"] != parent {
		t.Errorf("parent %v, child %v with parent %v", parent, child, r["child_parent_id"])
	}
	p, _ := r["probe"].(map[string]any)
	if p["ok"] != true || p["traced"] != true || p["id"] != child || p["parent_id"] != parent ||
		p["context"] != `{"traceparent":"00-1"}` || p["model"] != "probe" || p["version"] != 1.0 || p["request_id"] != "traced-call" {
		t.Errorf("the callee saw %v", p)
	}
	if !testenv.Eventually(func() bool {
		tracer.mu.Lock()
		defer tracer.mu.Unlock()
		return len(tracer.traces) == 2
	}) {
		t.Error("gave up waiting for both traces")
	}
	byID := map[uint64]*core.Trace{}
	for _, tr := range tracer.traces {
		byID[tr.ID] = tr
	}
	outer, inner := byID[uint64(parent)], byID[uint64(child)]
	if outer == nil || inner == nil || outer.Model != "control" || inner.Model != "probe" || inner.ParentID != outer.ID {
		t.Fatalf("traces %+v", tracer.traces)
	}
	if got := activityNames(inner); !slices.Equal(got, timeline) {
		t.Errorf("child trace activities %v, want %v", got, timeline)
	}
	if inner.Context() != `{"traceparent":"00-1"}` {
		t.Errorf("child trace context %q", inner.Context())
	}
	if !testenv.Eventually(func() bool { return abi.LiveTraces() == 0 }) {
		t.Errorf("gave up waiting for no trace left: %d live", abi.LiveTraces())
	}
}

// A request nothing traces: the backend makes its own trace and spawns the
// child from it, as an application tracing its calls would; the child then
// reports the callee's timeline, its custom activity included, to the
// backend's activity function, and comes back through its release
// function.
func TestModelControlCallsWithAChildOfItsOwnTrace(t *testing.T) {
	t.Parallel()
	srv := startServer(t, testenv.ModelControlRepository(t))
	r := command(t, srv, "control", "outer", map[string]any{"op": "trace", "model": "probe"})
	if r["ok"] != true || r["request_traced"] != false || r["trace_released"] != true {
		t.Fatalf("report %v", r)
	}
	parent, child := r["parent_id"].(float64), r["child_id"].(float64)
	if r["child_parent_id"] != parent || r["released_trace_id"] != child {
		t.Errorf("parent %v, child %v, child's parent %v, released %v", parent, child, r["child_parent_id"], r["released_trace_id"])
	}
	var got []string
	for _, a := range r["activities"].([]any) {
		got = append(got, a.(string))
	}
	if !slices.Equal(got, timeline) {
		t.Errorf("activities %v, want %v", got, timeline)
	}
	if p, _ := r["probe"].(map[string]any); p["traced"] != true || p["id"] != child || p["parent_id"] != parent || p["context"] != "" {
		t.Errorf("the callee saw %v", p)
	}
	if !testenv.Eventually(func() bool { return abi.LiveTraces() == 0 }) {
		t.Errorf("gave up waiting for no trace left: %d live", abi.LiveTraces())
	}
}

// A callee answering with an error: the caller takes the response's error
// (a copy it owns), deletes it, then deletes the response, as Triton's
// python backend does; nothing is freed twice, and the caller reports the
// error's code and message.
func TestModelControlDeletesTheErrorOfACalleesResponse(t *testing.T) {
	t.Parallel()
	srv := startServer(t, testenv.ModelControlRepository(t))
	for i := range 3 {
		r := command(t, srv, "control", fmt.Sprint("outer-", i), map[string]any{"op": "trace", "model": "probe", "callee_op": "fail"})
		p, _ := r["probe"].(map[string]any)
		if r["ok"] != true || p["ok"] != false || p["code"] != "INVALID_ARG" || p["message"] != "failed as the command asked" {
			t.Fatalf("report %v", r)
		}
	}
}

// Model control from a backend, under explicit model control: loading with
// a configuration and files, readiness, transaction properties, unloading
// (the model serving the call included) and unloading with dependents.
func TestModelControlLoadsAndUnloadsModels(t *testing.T) {
	t.Parallel()
	srv := startServer(t, testenv.ModelControlRepository(t), func(c *core.Options, _ *loader.Options) {
		c.ExplicitModelControl, c.StartupModels = true, []string{"control", "probe"}
	})
	run := func(cmd map[string]any) map[string]any { return command(t, srv, "control", "c", cmd) }
	ready := func(model string) any { return run(map[string]any{"op": "ready", "model": model})["ready"] }

	if r := run(map[string]any{"op": "load", "model": "identity_fp32"}); r["ok"] != true || ready("identity_fp32") != true {
		t.Errorf("load identity_fp32: %v", r)
	}
	override := `{"name":"from_files","backend":"identity","max_batch_size":0,
		"input":[{"name":"INPUT0","data_type":"TYPE_FP32","dims":[3]}],
		"output":[{"name":"OUTPUT0","data_type":"TYPE_FP32","dims":[3]}]}`
	if r := run(map[string]any{"op": "load", "model": "from_files", "config": override,
		"files": map[string]string{"1/notes.txt": "sent with the load"}}); r["ok"] != true || ready("from_files") != true {
		t.Errorf("load from files: %v", r)
	}
	for _, tc := range []struct {
		cmd  map[string]any
		code string
	}{
		{map[string]any{"op": "load", "model": "nope"}, "INTERNAL"},
		{map[string]any{"op": "load", "model": "x", "files": map[string]string{"1/a": "b"}}, "INTERNAL"},
		{map[string]any{"op": "load", "model": "x", "config": "{"}, "INTERNAL"},
		{map[string]any{"op": "txn", "model": "nope"}, "NOT_FOUND"},
		{map[string]any{"op": "txn", "model": "identity_fp32", "version": 7}, "NOT_FOUND"},
		{map[string]any{"op": "unload", "model": "nope"}, "NOT_FOUND"},
	} {
		if r := run(tc.cmd); r["ok"] != false || r["code"] != tc.code {
			t.Errorf("%v: %v, want %s", tc.cmd, r, tc.code)
		}
	}

	if r := run(map[string]any{"op": "txn", "model": "identity_fp32"}); r["flags"] != 1.0 || r["voidp_null"] != true {
		t.Errorf("txn identity_fp32: %v", r)
	}
	if r := run(map[string]any{"op": "load", "model": "square_pipeline"}); r["ok"] != true {
		t.Fatalf("load square_pipeline: %v", r)
	}
	for _, m := range []string{"square_pipeline", "square_int32"} {
		if r := run(map[string]any{"op": "txn", "model": m, "version": 1}); r["flags"] != 2.0 || r["decoupled"] != true {
			t.Errorf("txn %s: %v", m, r)
		}
	}

	// Unloading returns once the model takes no more requests.
	if r := run(map[string]any{"op": "unload", "model": "identity_fp32"}); r["ok"] != true {
		t.Errorf("unload: %v", r)
	}
	if ready("identity_fp32") != false {
		t.Errorf("identity_fp32 is still ready")
	}
	if r := run(map[string]any{"op": "unload", "model": "square_pipeline", "dependents": true}); r["ok"] != true {
		t.Errorf("unload square_pipeline and dependents: %v", r)
	}
	if !testenv.Eventually(func() bool { return ready("square_int32") == false && ready("identity_int32") == false }) {
		t.Errorf("gave up waiting for the steps to unload: %s", fmt.Sprint(srv.RepositoryIndex()))
	}

	// A backend may unload the model that serves its call.
	if r := command(t, srv, "probe", "p", map[string]any{"op": "unload", "model": "probe"}); r["ok"] != true {
		t.Errorf("probe unloading itself: %v", r)
	}
	if !testenv.Eventually(func() bool { return ready("probe") == false }) {
		t.Error("gave up waiting for probe to unload")
	}
}
