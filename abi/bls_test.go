package abi_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tritonhost/tritonhost/abi"
	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/coretest"
	"github.com/tritonhost/tritonhost/internal/testenv"
	"github.com/tritonhost/tritonhost/loader"
)

// The bls backend (backends_c/bls) answers its requests by calling
// another model through the in-process API: bls_simple waits for "simple",
// bls_square streams every response of the decoupled square_int32. These
// tests run the example models on real backends; startServer's cleanup
// checks that no object of the API outlives the server (requests,
// responses, allocators, calls).

// blsRepo holds simple, square_int32, bls_simple, bls_square and extra.
func blsRepo(t *testing.T, extra ...testenv.Model) string {
	t.Helper()
	var models []testenv.Model
	for _, name := range []string{"simple", "square_int32", "bls_simple", "bls_square"} {
		models = append(models, testenv.Model{Name: name, Config: testenv.ExampleConfig(t, name)})
	}
	return testenv.Repository(t, append(models, extra...)...)
}

// blsConfig is a bls model calling callee, with one INT32 input and output
// of dims [-1], extra lines appended.
func blsConfig(name, callee string, extra ...string) string {
	return fmt.Sprintf(`name: %q
backend: "bls"
max_batch_size: 0
input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ -1 ] } ]
parameters [ { key: "bls_model" value: { string_value: %q } } ]
`, name, callee) + strings.Join(extra, "\n")
}

func squareRequest(id string, k int32) *core.Submission {
	return &core.Submission{Model: "bls_square", ID: id,
		Inputs: []core.Input{core.NewInput("IN", core.TypeInt32, []int64{1}, int32s(k))}}
}

// outValues returns OUT of every response with outputs, and fails the test
// unless the final call is the last one and the only final.
func outValues(t *testing.T, evs []event) []int32 {
	t.Helper()
	var got []int32
	for i, ev := range evs {
		if ev.final != (i == len(evs)-1) {
			t.Fatalf("response %d of %d: final = %v", i, len(evs), ev.final)
		}
		if ev.resp == nil {
			continue
		}
		if ev.resp.Err != nil {
			t.Fatalf("response %d: %v", i, ev.resp.Err)
		}
		got = append(got, scalarInt32(t, ev.resp, "OUT"))
	}
	return got
}

func TestBLSCallsAModelAndWaitsForItsResponse(t *testing.T) {
	t.Parallel()
	// bls_batched takes batches (dynamic batching, one instance): it starts
	// the calls of a batch before waiting for any.
	batched := strings.Replace(testenv.ExampleConfig(t, "bls_simple"), `name: "bls_simple"`, `name: "bls_batched"`, 1) +
		"dynamic_batching { max_queue_delay_microseconds: 20000 }\ninstance_group [ { count: 1 kind: KIND_CPU } ]\n"
	batched = strings.Replace(batched, "instance_group [ { count: 2 kind: KIND_CPU } ]", "", 1)
	srv := startServer(t, blsRepo(t, testenv.Model{Name: "bls_batched", Config: batched}))
	const n = 12
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			outputs := [][]string{nil, {"OUTPUT1"}}[i%2]
			model := []string{"bls_simple", "bls_batched"}[i/2%2]
			req, a, b := addsubRequest(model, core.TypeInt32, []int64{1, 16}, i+1, outputs...)
			evs := infer(t, srv, req)
			if len(evs) != 1 || !evs[0].final || evs[0].resp == nil || evs[0].resp.Err != nil {
				t.Errorf("request %d: want one final response, got %+v", i, evs)
				return
			}
			resp := evs[0].resp
			if outputs == nil && len(resp.Outputs) != 2 || outputs != nil && len(resp.Outputs) != 1 {
				t.Errorf("request %d asked for %v: got outputs %+v", i, outputs, resp.Outputs)
			}
			for _, o := range resp.Outputs {
				want := addsubWant(core.TypeInt32, a, b, o.Name == "OUTPUT1")
				if !slices.Equal(o.Data, want) || !slices.Equal(o.Shape, []int64{1, 16}) {
					t.Errorf("request %d: %s = %v %v, want %v [1 16]", i, o.Name, o.Data, o.Shape, want)
				}
			}
		})
	}
	wg.Wait()
	// A backend reports a request's statistics after its response: wait
	// for them.
	for model, want := range map[string]uint64{"bls_simple": n / 2, "bls_batched": n / 2, "simple": n} {
		var stats []core.ModelStatistics
		var err error
		if !testenv.Eventually(func() bool {
			stats, err = srv.Statistics(model, 1)
			return err == nil && len(stats) == 1 && stats[0].Inference.Success.Count == want
		}) {
			t.Errorf("gave up waiting for %s statistics: %+v %v, want %d successes", model, stats, err, want)
		}
	}
}

func TestBLSStreamsEveryResponseOfADecoupledCallee(t *testing.T) {
	t.Parallel()
	srv := startServer(t, blsRepo(t))
	ks := []int32{0, 1, 5, 300, 7}
	var wg sync.WaitGroup
	for i, k := range ks {
		wg.Go(func() {
			evs := infer(t, srv, squareRequest(fmt.Sprint("sq", i), k))
			got := outValues(t, evs)
			if len(got) != int(k) {
				t.Errorf("IN=%d: %d responses with OUT, want %d", k, len(got), k)
			}
			for j, v := range got {
				if v != k {
					t.Errorf("IN=%d: response %d has OUT=%d", k, j, v)
					break
				}
			}
		})
	}
	wg.Wait()
}

func TestBLSChecksTheCalleeWithTheModelQueries(t *testing.T) {
	t.Parallel()
	srv := startServer(t, blsRepo(t,
		testenv.Model{Name: "bls_nowhere", Config: blsConfig("bls_nowhere", "nowhere")},
		testenv.Model{Name: "bls_wrong_input", Config: strings.Replace(blsConfig("bls_wrong_input", "simple"), "INPUT0", "WRONG", 1)},
		testenv.Model{Name: "bls_blocking_square", Config: `name: "bls_blocking_square"
backend: "bls"
input [ { name: "IN" data_type: TYPE_INT32 dims: [ 1 ] } ]
output [ { name: "OUT" data_type: TYPE_INT32 dims: [ 1 ] } ]
parameters [ { key: "bls_model" value: { string_value: "square_int32" } } ]
`},
		testenv.Model{Name: "bls_no_callee", Config: strings.Replace(blsConfig("bls_no_callee", "x"), "bls_model", "other", 1)},
	))
	in := core.NewInput("INPUT0", core.TypeInt32, []int64{2}, int32s(1, 2))
	for _, tc := range []struct {
		model string
		input core.Input
		code  core.Code
		parts []string
	}{
		{"bls_nowhere", in, core.CodeUnavailable, []string{"model 'nowhere' is not ready"}},
		{"bls_wrong_input", core.NewInput("WRONG", core.TypeInt32, []int64{1}, int32s(1)), core.CodeInvalidArg,
			[]string{"input[0]", "WRONG", "is not an input of model 'simple'"}},
		{"bls_blocking_square", core.NewInput("IN", core.TypeInt32, []int64{1}, int32s(3)), core.CodeInvalidArg,
			[]string{"parameters.bls_model", "square_int32", "decoupled"}},
	} {
		evs := infer(t, srv, &core.Submission{Model: tc.model, Inputs: []core.Input{tc.input}})
		if len(evs) != 1 || evs[0].resp == nil {
			t.Errorf("%s: want one error response, got %+v", tc.model, evs)
			continue
		}
		err := evs[0].resp.Err
		if core.CodeOf(err) != tc.code {
			t.Errorf("%s: error %v, want code %v", tc.model, err, tc.code)
		}
		for _, p := range tc.parts {
			if err == nil || !strings.Contains(err.Error(), p) {
				t.Errorf("%s: error %v does not mention %q", tc.model, err, p)
			}
		}
	}
	if _, err := srv.Model("bls_no_callee", 0); err == nil || !strings.Contains(err.Error(), "parameters.bls_model") {
		t.Errorf("a bls model naming no callee loaded, or failed without naming the field: %v", err)
	}
}

// TestBLSCallsBeforeTheServerServesAreRefusedAsTritons: while the host has
// no server (as while the models load) the in-process API answers
// Triton's UNAVAILABLE "Server not ready", which bls passes to its client.
func TestBLSCallsBeforeTheServerServesAreRefusedAsTritons(t *testing.T) {
	t.Parallel()
	srv := startServerWith(t, blsRepo(t), serverSetup{detached: true})
	req, _, _ := addsubRequest("bls_simple", core.TypeInt32, []int64{1, 16}, 3)
	evs := infer(t, srv, req)
	if len(evs) != 1 || evs[0].resp == nil {
		t.Fatalf("want one error response, got %+v", evs)
	}
	if err := evs[0].resp.Err; core.CodeOf(err) != core.CodeUnavailable || err.Error() != "Server not ready" {
		t.Errorf("error %v (%v), want UNAVAILABLE \"Server not ready\"", err, core.CodeOf(err))
	}
}

func TestBLSGivesUpOnASlowCalleeAtItsDeadline(t *testing.T) {
	t.Parallel()
	slow := identityConfig("slow", 0, `parameters [{ key: "execute_delay_ms" value: { string_value: "1500" } }]
`)
	bls := strings.Replace(blsConfig("bls_slow", "slow", `parameters [ { key: "bls_timeout_ms" value: { string_value: "100" } } ]`),
		"INPUT0", "INPUT7", 1)
	bls = strings.Replace(bls, "OUTPUT0", "OUTPUT7", 1)
	srv := startServer(t, testenv.Repository(t, testenv.Model{Name: "slow", Config: slow},
		testenv.Model{Name: "bls_slow", Config: bls}))
	start := time.Now()
	evs := infer(t, srv, &core.Submission{Model: "bls_slow", ID: "late",
		Inputs: []core.Input{core.NewInput("INPUT7", core.TypeInt32, []int64{1}, int32s(4))}})
	if len(evs) != 1 || evs[0].resp == nil || core.CodeOf(evs[0].resp.Err) != core.CodeUnavailable ||
		!strings.Contains(evs[0].resp.Err.Error(), "did not answer within 100 ms") {
		t.Fatalf("want one UNAVAILABLE response naming the deadline, got %+v (%v)", evs, evs[0].resp)
	}
	if d := time.Since(start); d >= 1500*time.Millisecond {
		t.Errorf("the answer took %v, not bounded by the 100 ms deadline", d)
	}
	// The outer request is released once the callee hands the inner one
	// back; Stop (cleanup) then finds nothing left.
}

// TestBLSStalledCallerBoundsItsQueueAndBlocksNothingElse: a caller whose
// response callback does not return (here the client of bls_square, which
// the callback forwards to, stops taking responses) holds only its own
// request: the callee's sends wait for room in the bounded queue up to the
// stall timeout, then fail and the callee's request is cancelled, while
// other requests keep being served.
func TestBLSStalledCallerBoundsItsQueueAndBlocksNothingElse(t *testing.T) {
	t.Parallel()
	const maxPending, k = 4, 60
	srv := startServerWith(t, blsRepo(t), serverSetup{host: abi.HostOptions{InProcessMaxPending: maxPending, InProcessStallTimeout: time.Second}})
	gate := make(chan struct{})
	var once sync.Once
	c := newCollector()
	err := srv.Infer(context.Background(), squareRequest("stalled", k), func(resp *core.Response, final bool) {
		once.Do(func() { <-gate }) // the first response blocks its delivery
		c.fn(resp, final)
	})
	if err != nil {
		t.Fatal(err)
	}
	if !testenv.Eventually(func() bool {
		return strings.Contains(srv.log.String(), fmt.Sprintf("has not taken its last %d responses", maxPending))
	}) {
		t.Errorf("gave up waiting for the callee's send to time out: %s", srv.log.String())
	}

	// Meanwhile other requests, to the same backends, are served.
	req, a, b := addsubRequest("bls_simple", core.TypeInt32, []int64{1, 16}, 3)
	if evs := infer(t, srv, req); len(evs) != 1 || evs[0].resp.Err != nil ||
		!slices.Equal(output(t, evs[0].resp, "OUTPUT0").Data, addsubWant(core.TypeInt32, a, b, false)) {
		t.Errorf("bystander: %+v", evs)
	}
	if got := outValues(t, infer(t, srv, squareRequest("bystander", 3))); len(got) != 3 {
		t.Errorf("bystander stream: %v", got)
	}

	close(gate)
	got := outValues(t, c.wait(t))
	// One in the blocked callback and maxPending in the queue; the next
	// send timed out and the callee, cancelled, stopped (a send it made
	// before it saw the cancellation may still have found room once the
	// gate opened).
	if len(got) < 1+maxPending || len(got) >= k {
		t.Errorf("the stalled caller got %d responses, want from %d to fewer than %d", len(got), 1+maxPending, k)
	}
}

func TestBLSIsAccountedForUntilUnload(t *testing.T) {
	t.Parallel()
	srv := startServer(t, blsRepo(t))
	infer(t, srv, squareRequest("one", 2))
	live := srv.host.Live()
	if live.Allocators != 2 { // one per bls model
		t.Errorf("live allocators = %d while bls_simple and bls_square are loaded, want 2", live.Allocators)
	}
	if !testenv.Eventually(func() bool { return srv.host.Live().GoInferCalls == 0 }) {
		t.Errorf("gave up waiting for the call to be handed back: %s", srv.host.Live().String())
	}
	// The call leaves the host's table before its release callback runs,
	// where the backend deletes its request: wait for that too.
	testenv.Eventually(func() bool { live := srv.host.Live(); return live.InferRequests == 0 && live.InferResponses == 0 })
	if live := srv.host.Live(); live.InferRequests != 0 || live.InferResponses != 0 {
		t.Errorf("after the call: %v", live)
	}
	srv.afterStop = append(srv.afterStop, func() {
		if live := srv.host.Live(); live.Allocators != 0 {
			t.Errorf("after unload: %v", live)
		}
	})
}

// goModels serves the models of backend "go" with a Go-native fake backend
// (core/coretest), the others with the loader.
type goModels struct {
	goBackend *coretest.Provider
	loader    core.BackendProvider
}

func (p goModels) LoadModel(m *core.Model) (core.BackendModel, error) {
	if m.Config().GetBackend() == "go" {
		return p.goBackend.LoadModel(m)
	}
	return p.loader.LoadModel(m)
}

func (p goModels) Close() error { return errors.Join(p.goBackend.Close(), p.loader.Close()) }

// TestBLSCopiesOutputsTheServerHolds: the outputs of a model whose
// responses the server holds in its own memory (a Go-native backend here,
// an ensemble elsewhere) reach the caller through its allocator too,
// allocated when the response is delivered and copied in, streamed
// response by response.
func TestBLSCopiesOutputsTheServerHolds(t *testing.T) {
	t.Parallel()
	goBackend := coretest.NewProvider().Set("echo", coretest.Answering(coretest.Times(3)))
	srv := startServerWith(t, testenv.Repository(t,
		testenv.Model{Name: "echo", Config: `backend: "go"
model_transaction_policy { decoupled: true }
input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ -1 ] } ]`},
		testenv.Model{Name: "bls_echo", Config: blsConfig("bls_echo", "echo", "model_transaction_policy { decoupled: true }")},
	), serverSetup{wrap: func(l core.BackendProvider) core.BackendProvider { return goModels{goBackend, l} }})
	evs := infer(t, srv, &core.Submission{Model: "bls_echo", ID: "copied",
		Inputs: []core.Input{core.NewInput("INPUT0", core.TypeInt32, []int64{3}, int32s(7, -8, 9))}})
	var n int
	for _, ev := range evs {
		if ev.resp == nil {
			continue
		}
		if ev.resp.Err != nil {
			t.Fatalf("response %d: %v", n, ev.resp.Err)
		}
		if o := output(t, ev.resp, "OUTPUT0"); !slices.Equal(o.Data, int32s(7, -8, 9)) || !slices.Equal(o.Shape, []int64{3}) {
			t.Errorf("response %d: OUTPUT0 = %v %v", n, o.Data, o.Shape)
		}
		n++
	}
	if n != 3 || !evs[len(evs)-1].final {
		t.Errorf("got %d responses (last final: %v), want 3 and a final", n, evs[len(evs)-1].final)
	}
}

// TestBLSCallsEnsembles: an ensemble's responses are built by the server
// (from its steps' outputs) and copied to the caller through its
// allocator: a decoupled one (square_pipeline) streams every response with
// its data, a plain one (two identity steps) answers once.
func TestBLSCallsEnsembles(t *testing.T) {
	t.Parallel()
	const twoIdentities = `name: "identity_twice"
platform: "ensemble"
max_batch_size: 0
input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ -1 ] } ]
ensemble_scheduling { step [
  { model_name: "identity_int32" model_version: -1
    input_map { key: "INPUT0" value: "INPUT0" } output_map { key: "OUTPUT0" value: "mid" } },
  { model_name: "identity_int32" model_version: -1
    input_map { key: "INPUT0" value: "mid" } output_map { key: "OUTPUT0" value: "OUTPUT0" } }
] }`
	pipeline := strings.NewReplacer(`name: "bls_square"`, `name: "bls_pipeline"`,
		`string_value: "square_int32"`, `string_value: "square_pipeline"`).Replace(testenv.ExampleConfig(t, "bls_square"))
	srv := startServer(t, blsRepo(t,
		testenv.Model{Name: "identity_int32", Config: testenv.ExampleConfig(t, "identity_int32")},
		testenv.Model{Name: "square_pipeline", Config: testenv.ExampleConfig(t, "square_pipeline")},
		testenv.Model{Name: "identity_twice", Config: twoIdentities},
		testenv.Model{Name: "bls_pipeline", Config: pipeline},
		testenv.Model{Name: "bls_twice", Config: blsConfig("bls_twice", "identity_twice")},
	))
	t.Run("decoupled", func(t *testing.T) {
		for _, k := range []int32{0, 1, 4} {
			req := squareRequest(fmt.Sprint("pipe", k), k)
			req.Model = "bls_pipeline"
			got := outValues(t, infer(t, srv, req))
			if want := slices.Repeat([]int32{k}, int(k)); !slices.Equal(got, want) {
				t.Errorf("IN=%d: OUT of each response %v, want %v", k, got, want)
			}
		}
	})
	t.Run("not decoupled", func(t *testing.T) {
		evs := infer(t, srv, &core.Submission{Model: "bls_twice", ID: "twice",
			Inputs: []core.Input{core.NewInput("INPUT0", core.TypeInt32, []int64{3}, int32s(7, -8, 9))}})
		if len(evs) != 1 || !evs[0].final || evs[0].resp == nil || evs[0].resp.Err != nil {
			t.Fatalf("want one final response, got %+v", evs)
		}
		if o := output(t, evs[0].resp, "OUTPUT0"); !slices.Equal(o.Data, int32s(7, -8, 9)) || !slices.Equal(o.Shape, []int64{3}) {
			t.Errorf("OUTPUT0 = %v %v, want [7 -8 9] [3]", o.Data, o.Shape)
		}
	})
	if strings.Contains(srv.log.String(), "panic") {
		t.Errorf("the server recovered from a panic:\n%s", srv.log.String())
	}
}

// TestBLSRequestsHaveTheirOwnTensorBound: a request a backend submits to
// another model is held to the in-process bound
// (--inprocess-max-tensor-size), not to the bound the server puts on what
// its frontends take (--grpc-max-message-size): a 4 KiB tensor passes
// through a BLS call on a server that takes 1 KiB from its clients, and a
// smaller in-process bound refuses it, named.
func TestBLSRequestsHaveTheirOwnTensorBound(t *testing.T) {
	t.Parallel()
	repo := blsRepo(t, testenv.Model{Name: "identity_int32", Config: testenv.ExampleConfig(t, "identity_int32")},
		testenv.Model{Name: "bls_identity", Config: blsConfig("bls_identity", "identity_int32")})
	small := func(c *core.Options, _ *loader.Options) {
		c.MaxTensorBytes, c.MaxTensorBytesSetting = 1<<10, "--grpc-max-message-size"
	}
	values := make([]int32, 1024) // 4 KiB
	for i := range values {
		values[i] = int32(i)
	}
	req := func() *core.Submission {
		return &core.Submission{Model: "bls_identity", ID: "big",
			// the client's frontend takes more than the server's default
			TensorLimit: core.TensorLimit{Bytes: 1 << 20, Setting: "a frontend's own"},
			Inputs:      []core.Input{core.NewInput("INPUT0", core.TypeInt32, []int64{1024}, int32s(values...))}}
	}
	t.Run("within the in-process bound", func(t *testing.T) {
		srv := startServer(t, repo, small)
		evs := infer(t, srv, req())
		if len(evs) != 1 || evs[0].resp == nil || evs[0].resp.Err != nil {
			t.Fatalf("want one response, got %+v", evs)
		}
		if o := output(t, evs[0].resp, "OUTPUT0"); !slices.Equal(o.Data, int32s(values...)) {
			t.Errorf("OUTPUT0 is not INPUT0")
		}
	})
	t.Run("past it", func(t *testing.T) {
		srv := startServerWith(t, repo, serverSetup{host: abi.HostOptions{InProcessMaxTensorBytes: 2 << 10}}, small)
		evs := infer(t, srv, req())
		if len(evs) != 1 || evs[0].resp == nil || evs[0].resp.Err == nil ||
			!strings.Contains(evs[0].resp.Err.Error(), "--inprocess-max-tensor-size") {
			t.Fatalf("want an error naming --inprocess-max-tensor-size, got %+v", evs)
		}
	})
}
