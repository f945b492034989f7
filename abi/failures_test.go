package abi_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/internal/testenv"
	"github.com/tritonhost/tritonhost/loader"
)

// testBackendConfig is a one-input model served by a test backend library.
func testBackendConfig(name, backend string, decoupled bool) string {
	policy := ""
	if decoupled {
		policy = "model_transaction_policy { decoupled: true }"
	}
	return `name: "` + name + `"
backend: "` + backend + `"
max_batch_size: 0
` + policy + `
input [ { name: "IN" data_type: TYPE_INT32 dims: [ 1 ] } ]
output [ { name: "OUT" data_type: TYPE_INT32 dims: [ 1 ] } ]
`
}

func fixture(t *testing.T, backend, source string) string {
	return testenv.SharedLibrary(t, "triton_"+backend, filepath.Join("testdata", source))
}

func TestBrokenBackendsLeaveOtherModelsServing(t *testing.T) {
	t.Parallel()
	repo := testenv.Repository(t,
		testenv.Model{Name: "identity_int32", Config: testenv.ExampleConfig(t, "identity_int32")},
		testenv.Model{Name: "fails_execute", Config: testBackendConfig("fails_execute", "execute_fails", false),
			Files: []string{fixture(t, "execute_fails", "execute_fails.c")}},
		testenv.Model{Name: "lacks_execute", Config: testBackendConfig("lacks_execute", "no_execute", false),
			Files: []string{fixture(t, "no_execute", "no_execute.c")}},
		testenv.Model{Name: "fails_initialize", Config: testBackendConfig("fails_initialize", "initialize_fails", false),
			Files: []string{fixture(t, "initialize_fails", "initialize_fails.c")}},
		testenv.Model{Name: "no_library", Config: testBackendConfig("no_library", "does_not_exist", false)},
	)
	srv := startServer(t, repo)
	if srv.Ready() {
		t.Error("Ready() = true although three models failed to load")
	}

	index := map[string]core.VersionStatus{}
	for _, st := range srv.RepositoryIndex() {
		index[st.Name] = st
	}
	for name, want := range map[string][]string{
		"lacks_execute":    {"libtriton_no_execute.so", "TRITONBACKEND_ModelInstanceExecute"},
		"fails_initialize": {"libtriton_initialize_fails.so", "TRITONBACKEND_Initialize", "refuses to initialize"},
		"no_library":       {"libtriton_does_not_exist.so", "not found"},
	} {
		st := index[name]
		if st.Readiness != core.ModelUnavailable {
			t.Errorf("%s: state %v, want UNAVAILABLE", name, st.Readiness)
		}
		for _, w := range want {
			if !strings.Contains(st.Reason, w) {
				t.Errorf("%s: reason %q does not mention %q", name, st.Reason, w)
			}
		}
		err := srv.Infer(context.Background(), &core.Submission{Model: name,
			Inputs: []core.Input{core.NewInput("IN", core.TypeInt32, []int64{1}, int32s(1))}}, func(*core.Response, bool) {})
		if want := "Request for unknown model: '" + name + "' has no available versions"; core.CodeOf(err) != core.CodeNotFound || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: Infer error %v, want NOT_FOUND %q", name, err, want)
		}
	}
	for _, name := range []string{"identity_int32", "fails_execute"} {
		if st := index[name]; st.Readiness != core.ModelReady {
			t.Errorf("%s: state %v (%s), want READY", name, st.Readiness, st.Reason)
		}
	}

	// A failing Execute: every request gets one final error response.
	for range 3 {
		events := infer(t, srv, &core.Submission{Model: "fails_execute",
			Inputs: []core.Input{core.NewInput("IN", core.TypeInt32, []int64{1}, int32s(1))}})
		if len(events) != 1 || !events[0].final || events[0].resp == nil || events[0].resp.Err == nil {
			t.Fatalf("want one final error response, got %+v", events)
		}
		if err := events[0].resp.Err; core.CodeOf(err) != core.CodeUnavailable || !strings.Contains(err.Error(), "execute failed on purpose") {
			t.Errorf("error = %v (%v), want the backend's UNAVAILABLE error", err, core.CodeOf(err))
		}
	}

	// The healthy model keeps serving.
	events := infer(t, srv, &core.Submission{Model: "identity_int32",
		Inputs: []core.Input{core.NewInput("INPUT0", core.TypeInt32, []int64{2}, int32s(7, 8))}})
	if len(events) != 1 || events[0].resp == nil || events[0].resp.Err != nil {
		t.Fatalf("identity after failures: %+v", events)
	}
	stats, err := srv.Statistics("fails_execute", 0)
	if err != nil || len(stats) != 1 || stats[0].Inference.Fail.Count != 3 {
		t.Errorf("fails_execute statistics = %+v, %v; want 3 failures", stats, err)
	}
}

func TestRequestReleasedWithoutFinalGetsAnError(t *testing.T) {
	t.Parallel()
	repo := testenv.Repository(t, testenv.Model{Name: "forgetful", Config: testBackendConfig("forgetful", "no_final", true),
		Files: []string{fixture(t, "no_final", "no_final.c")}})
	srv := startServer(t, repo)
	events := infer(t, srv, &core.Submission{Model: "forgetful", ID: "lost",
		Inputs: []core.Input{core.NewInput("IN", core.TypeInt32, []int64{1}, int32s(1))}})
	if len(events) != 1 || !events[0].final || events[0].resp == nil || events[0].resp.Err == nil {
		t.Fatalf("want one final error response, got %+v", events)
	}
	if msg := events[0].resp.Err.Error(); !strings.Contains(msg, `"forgetful"`) || !strings.Contains(msg, `"lost"`) {
		t.Errorf("error %q should name the model and the request", msg)
	}
}

// TestSecondResponseOfNonDecoupledModelIsDropped: a model that is not
// decoupled answers once, as Triton's: the client gets the first response,
// final, the backend's second send succeeds, and the server drops (and
// counts) it.
func TestSecondResponseOfNonDecoupledModelIsDropped(t *testing.T) {
	t.Parallel()
	repo := testenv.Repository(t, testenv.Model{Name: "chatty", Config: testBackendConfig("chatty", "two_responses", false),
		Files: []string{fixture(t, "two_responses", "two_responses.c")}})
	srv := startServer(t, repo)
	events := infer(t, srv, &core.Submission{Model: "chatty", ID: "x",
		Inputs: []core.Input{core.NewInput("IN", core.TypeInt32, []int64{1}, int32s(1))}})
	if len(events) != 1 || !events[0].final || events[0].resp == nil || events[0].resp.Err != nil {
		t.Fatalf("want the first response, final, got %+v", events)
	}
	if v, ok := outputInt32(events[0].resp, "OUT"); !ok || v != 7 {
		t.Errorf("OUT = %d (%v), want 7", v, ok)
	}
	m, err := srv.Model("chatty", 0)
	if err != nil {
		t.Fatal(err)
	}
	if !testenv.Eventually(func() bool { return m.DroppedResponses() == 1 }) {
		t.Errorf("gave up waiting for the second response to be dropped: %d dropped", m.DroppedResponses())
	}
	if strings.Contains(srv.log.String(), "not decoupled") {
		t.Errorf("the backend's second send failed:\n%s", srv.log.String())
	}
}

// TestOutputOverTheTensorBoundIsRefusedUncopied: an output larger than the
// server holds (core.Options.MaxTensorBytes) becomes an error for its
// request, naming the output, and the next request is served, whether
// responses are copied or lent (FreesResponses).
func TestOutputOverTheTensorBoundIsRefusedUncopied(t *testing.T) {
	t.Parallel()
	repo := testenv.Repository(t, testenv.Model{
		Name: "big", Config: `name: "big"
backend: "big_output"
input [ { name: "IN" data_type: TYPE_INT32 dims: [ 1 ] } ]
output [ { name: "OUT" data_type: TYPE_INT32 dims: [ -1 ] } ]
`, Files: []string{fixture(t, "big_output", "big_output.c")}})
	srv := startServer(t, repo, func(c *core.Options, _ *loader.Options) { c.MaxTensorBytes = 4096 })
	for _, tc := range []struct {
		n     int32
		frees bool
		want  string // "" for a response
	}{{1 << 20, false, `output "OUT" of 4194304 bytes`}, {16, false, ""}, {1 << 20, true, `output "OUT" of 4194304 bytes`}, {16, true, ""}} {
		events := infer(t, srv, &core.Submission{Model: "big", FreesResponses: tc.frees, Inputs: []core.Input{
			core.NewInput("IN", core.TypeInt32, []int64{1}, int32s(tc.n))}})
		resp := events[len(events)-1].resp
		if resp != nil && (resp.Lent != nil) != (tc.frees && tc.want == "") {
			t.Errorf("n=%d, frees %v: lent memory %v", tc.n, tc.frees, resp.Lent)
		}
		switch {
		case tc.want == "" && (resp == nil || resp.Err != nil):
			t.Errorf("n=%d: %+v, want a response", tc.n, resp)
		case tc.want != "" && (resp == nil || resp.Err == nil || !strings.Contains(resp.Err.Error(), tc.want)):
			t.Errorf("n=%d: %+v, want an error saying %q", tc.n, resp, tc.want)
		}
		resp.Free() // last: nothing may read a response after its Free
	}
}

// TestFailedInstanceInitializeIsFinalized: as in Triton, an instance whose
// TRITONBACKEND_ModelInstanceInitialize failed is finalized all the same,
// so the backend frees what its initialize set up (the python backend
// removes its shared-memory region there).
func TestFailedInstanceInitializeIsFinalized(t *testing.T) {
	t.Parallel()
	repo := testenv.Repository(t, testenv.Model{Name: "halfway", Config: testBackendConfig("halfway", "instance_init_fails", false),
		Files: []string{fixture(t, "instance_init_fails", "instance_init_fails.c")}})
	srv := startServer(t, repo)
	st := srv.RepositoryIndex()[0]
	if st.Readiness != core.ModelUnavailable || !strings.Contains(st.Reason, "the instance initialized halfway") {
		t.Errorf("halfway: %v %q, want UNAVAILABLE with the initialize's error", st.Readiness, st.Reason)
	}
	if !strings.Contains(srv.log.String(), "finalize freed the state of a failed initialize") {
		t.Errorf("the instance was not finalized after its failed initialize:\n%s", srv.log.String())
	}
}
