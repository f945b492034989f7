package core_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/coretest"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// callTimeout is the BackendCallTimeout of the tests whose backend hangs
// until the test opens a gate: long enough that no call of the fake backend
// that does not hang comes near it, short enough to wait for.
const callTimeout = 500 * time.Millisecond

// modelEvents returns the lifecycle events of model (those naming it).
func modelEvents(p *coretest.Provider, model string) []string {
	var out []string
	for _, e := range p.Events() {
		if f := strings.Fields(e); slices.ContainsFunc(f, func(w string) bool { return w == model || strings.HasPrefix(w, model+"/") }) {
			out = append(out, e)
		}
	}
	return out
}

// inferOn runs one request on model and fails the test unless it succeeds.
func inferOn(t *testing.T, srv *core.Server, model, id string) {
	t.Helper()
	coretest.Succeeded(t, coretest.Infer(t, srv, coretest.Request(model, id, coretest.Int32Input("INPUT0", []int64{1}, 1))))
}

// async runs f on a goroutine of its own and returns what it returns. (Not
// under coretest.Track: the goroutines of a model that f loads outlive the
// test's body, until the server stops at cleanup.)
func async(f func() error) <-chan error {
	ch := make(chan error, 1)
	go func() { ch <- f() }()
	return ch
}

// TestHangingLoadHoldsUpNoOtherModel: while the backend's LoadModel of
// model a hangs, model b loads, serves, unloads and loads again; an unload
// of a waits for a's load and gives up when its context ends; once the
// call returns, a loads and serves.
func TestHangingLoadHoldsUpNoOtherModel(t *testing.T) {
	t.Parallel()
	gate := coretest.NewGate(t)
	p := coretest.NewProvider().Hang("load a", gate)
	srv := coretest.Serve(t, core.Options{Backends: p, ExplicitModelControl: true},
		coretest.ModelDir{Name: "a", Config: vectorConfig()}, coretest.ModelDir{Name: "b", Config: vectorConfig()})
	loadA := async(func() error { return srv.LoadModel("a") })
	p.WaitEvent(t, "load a waits")

	if err := <-async(func() error { return srv.LoadModel("b") }); err != nil {
		t.Fatalf("LoadModel(b) while a's load hangs: %v", err)
	}
	inferOn(t, srv, "b", "b1")
	if err := srv.UnloadModel(t.Context(), "b"); err != nil {
		t.Errorf("UnloadModel(b) while a's load hangs: %v", err)
	}
	if err := <-async(func() error { return srv.LoadModel("b") }); err != nil {
		t.Errorf("LoadModel(b) again: %v", err)
	}
	inferOn(t, srv, "b", "b2")

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	coretest.WantError(t, "UnloadModel(a) while it loads", srv.UnloadModel(ctx, "a"), core.CodeUnavailable, `model "a"`, "in progress")
	select {
	case err := <-loadA:
		t.Fatalf("LoadModel(a) returned (%v) while its backend call hung", err)
	default:
	}
	gate.Open()
	if err := <-loadA; err != nil {
		t.Fatalf("LoadModel(a): %v", err)
	}
	inferOn(t, srv, "a", "a1")
}

// TestLoadCallsAreBounded: a LoadModel or NewInstance call that does not
// return within BackendCallTimeout fails the version's load with an error
// naming the model, the backend and the call; the other model serves. When
// the call returns, what the backend created is finalized, instances
// first, and nothing else is created.
func TestLoadCallsAreBounded(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		hang   string
		config string
		call   string
		events []string // of model a, once the call returned
	}{
		{name: "LoadModel", hang: "load a", config: vectorConfig(), call: "LoadModel",
			events: []string{"load a waits", "load a", "finalize model a"}},
		{name: "the only NewInstance", hang: "instance a/a_0", config: vectorConfig(), call: `NewInstance of instance "a_0"`,
			events: []string{"load a", "instance a/a_0 waits", "instance a/a_0", "finalize instance a/a_0", "finalize model a"}},
		{name: "the second of three NewInstance", hang: "instance a/a_0_1", config: vectorConfig(`instance_group [ { count: 3 kind: KIND_CPU } ]`),
			call: `NewInstance of instance "a_0_1"`,
			events: []string{"load a", "instance a/a_0_0", "instance a/a_0_1 waits", "instance a/a_0_1",
				"finalize instance a/a_0_0", "finalize instance a/a_0_1", "finalize model a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			gate := coretest.NewGate(t)
			p := coretest.NewProvider().Hang(tc.hang, gate)
			srv := coretest.Serve(t, core.Options{Backends: p, BackendCallTimeout: callTimeout},
				coretest.ModelDir{Name: "a", Config: tc.config}, coretest.ModelDir{Name: "m", Config: vectorConfig()})
			var reason string
			for _, st := range srv.RepositoryIndex() {
				if st.Name == "a" {
					reason = st.Reason
					if st.Readiness != core.ModelUnavailable {
						t.Errorf("a is %v, want UNAVAILABLE", st.Readiness)
					}
				}
			}
			for _, part := range []string{`model "a" version 1 (backend "go")`, tc.call + " did not return within 500ms", "left running"} {
				if !strings.Contains(reason, part) {
					t.Errorf("reason %q does not mention %q", reason, part)
				}
			}
			coretest.Succeeded(t, coretest.Infer(t, srv, vector("r", 1)))
			gate.Open()
			p.WaitEvent(t, "finalize model a")
			if got := modelEvents(p, "a"); !slices.Equal(got, tc.events) {
				t.Errorf("events of a %v, want %v", got, tc.events)
			}
		})
	}
}

// TestLateLoadDoesNotDisturbTheNextOne: a load given up on while its
// LoadModel hangs does not stop the model from loading again meanwhile;
// when the hung call returns, only what it created is finalized, and the
// version loaded since keeps serving.
func TestLateLoadDoesNotDisturbTheNextOne(t *testing.T) {
	t.Parallel()
	gate := coretest.NewGate(t)
	p := coretest.NewProvider()
	srv := coretest.Serve(t, core.Options{Backends: p, ExplicitModelControl: true, BackendCallTimeout: callTimeout},
		coretest.ModelDir{Name: "a", Config: vectorConfig()})
	p.Hang("load a", gate)
	coretest.WantError(t, "LoadModel(a)", <-async(func() error { return srv.LoadModel("a") }), core.CodeUnavailable, "LoadModel did not return")
	p.Hang("load a", nil)
	if err := <-async(func() error { return srv.LoadModel("a") }); err != nil {
		t.Fatalf("LoadModel(a) while the first one hangs: %v", err)
	}
	inferOn(t, srv, "a", "r1")
	gate.Open()
	p.WaitEvent(t, "finalize model a")
	inferOn(t, srv, "a", "r2")
	want := []string{"load a waits", "load a", "instance a/a_0", "load a", "finalize model a"}
	if got := modelEvents(p, "a"); !slices.Equal(got, want) {
		t.Errorf("events of a %v, want %v", got, want)
	}
}

// TestUnloadGivesUpOnAStuckFinalize: an unload whose instance Finalize
// does not return within BackendCallTimeout fails, naming the model, the
// backend and the call; meanwhile other models load and unload, and the
// model itself loads again; when the call returns, the old version's
// model is finalized after it.
func TestUnloadGivesUpOnAStuckFinalize(t *testing.T) {
	t.Parallel()
	gate := coretest.NewGate(t)
	p := coretest.NewProvider()
	srv := coretest.Serve(t, core.Options{Backends: p, ExplicitModelControl: true, StartupModels: []string{"*"}, BackendCallTimeout: callTimeout},
		coretest.ModelDir{Name: "a", Config: vectorConfig()}, coretest.ModelDir{Name: "b", Config: vectorConfig()})
	p.Hang("finalize instance a/a_0", gate)
	coretest.WantError(t, "UnloadModel(a)", <-async(func() error { return srv.UnloadModel(context.Background(), "a") }),
		core.CodeUnavailable, `model "a" version 1 (backend "go")`, `Finalize of instance "a_0" did not return within 500ms`, "the unload goes on in the background")
	if err := srv.UnloadModel(t.Context(), "b"); err != nil {
		t.Errorf("UnloadModel(b): %v", err)
	}
	if err := <-async(func() error { return srv.LoadModel("b") }); err != nil {
		t.Errorf("LoadModel(b): %v", err)
	}
	if err := <-async(func() error { return srv.LoadModel("a") }); err != nil {
		t.Errorf("LoadModel(a) while its old version's Finalize hangs: %v", err)
	}
	inferOn(t, srv, "a", "r1")
	p.Hang("finalize instance a/a_0", nil) // the new version's instance is finalized at once, at cleanup
	gate.Open()
	p.WaitEvent(t, "finalize model a")
	want := []string{"load a", "instance a/a_0", "finalize instance a/a_0 waits", "load a", "instance a/a_0", "finalize instance a/a_0", "finalize model a"}
	if got := modelEvents(p, "a"); !slices.Equal(got, want) {
		t.Errorf("events of a %v, want %v", got, want)
	}
}

// TestStopIsBounded: Stop returns when its context ends, or when a
// Finalize call outlasts BackendCallTimeout, with an error naming what it
// gave up on, and leaves the backends open; what it gave up on completes
// in the background once the backend lets it, consistently.
func TestStopIsBounded(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		hang   string // the lifecycle event that hangs
		cancel bool   // Stop's context is cancelled once the call hangs (otherwise it has none)
		async  bool   // a decoupled request is answered after the gate opens
		parts  []string
	}{
		{name: "a Finalize outlasts the context", hang: "finalize instance a/a_0", cancel: true,
			parts: []string{"context canceled", `model "a" version 1 (backend "go"): unload not finished`, `Finalize of instance "a_0" had been running`}},
		{name: "a Finalize outlasts BackendCallTimeout", hang: "finalize model a",
			parts: []string{"BackendCallTimeout (500ms)", `model "a" version 1 (backend "go"): unload not finished`, "Finalize of the model had been running"}},
		{name: "a request is in flight", async: true, cancel: true,
			parts: []string{"context canceled", "1 request(s) still in flight"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			gate := coretest.NewGate(t)
			p := coretest.NewProvider()
			srv := coretest.Serve(t, core.Options{Backends: p, BackendCallTimeout: callTimeout},
				coretest.ModelDir{Name: "a", Config: vectorConfig(decoupled)}, coretest.ModelDir{Name: "b", Config: vectorConfig()})
			var pending *coretest.Collector
			if tc.async {
				p.Set("a", coretest.Async(coretest.After(gate, coretest.Stream(1))))
				pending = coretest.Infer(t, srv, coretest.Request("a", "late", coretest.Int32Input("INPUT0", []int64{1}, 1)))
				p.Reached(t, "late")
			}
			if tc.hang != "" {
				p.Hang(tc.hang, gate)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			stopped := async(func() error { return srv.Stop(ctx) })
			if tc.cancel {
				if tc.hang != "" {
					p.WaitEvent(t, tc.hang+" waits")
				}
				cancel()
			}
			coretest.WantError(t, "Stop", <-stopped, core.CodeUnavailable, append([]string{"stop gave up", "left the backends open"}, tc.parts...)...)
			gate.Open()
			if pending != nil {
				if got := pending.Wait(t); len(got.Responses) != 1 || !got.FlagsOnlyFinal {
					t.Errorf("the request in flight got %d responses (flags-only final %v), want 1 and the final", len(got.Responses), got.FlagsOnlyFinal)
				}
			}
			p.WaitEvent(t, "finalize model a")
			p.WaitEvent(t, "finalize model b")
			testenv.WaitUntil(t, "no request to be live", func() bool { return srv.LiveRequests() == 0 })
			if slices.Contains(p.Events(), "close") {
				t.Errorf("the backends were closed although Stop gave up: %v", p.Events())
			}
		})
	}
}

// TestStopAndALoadInProgress: a model whose load is in progress when Stop
// begins is not left loaded: Stop waits for the load (until its context
// ends, and then says so) and the model is unloaded once loaded; the load
// reports that the server is shutting down.
func TestStopAndALoadInProgress(t *testing.T) {
	t.Parallel()
	for _, giveUp := range []bool{false, true} {
		name := map[bool]string{false: "Stop waits for the load", true: "Stop gives up on the load"}[giveUp]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			gate := coretest.NewGate(t)
			p := coretest.NewProvider().Hang("load a", gate)
			srv := coretest.Serve(t, core.Options{Backends: p, ExplicitModelControl: true},
				coretest.ModelDir{Name: "a", Config: vectorConfig()})
			loadA := async(func() error { return srv.LoadModel("a") })
			p.WaitEvent(t, "load a waits")
			ctx, cancel := context.WithCancel(context.Background())
			if giveUp {
				cancel()
			}
			defer cancel()
			stopped := async(func() error { return srv.Stop(ctx) })
			if giveUp {
				coretest.WantError(t, "Stop", <-stopped, core.CodeUnavailable, "context canceled", `model "a" version 1 (backend "go"): load not finished: LoadModel had been running`)
			} else {
				testenv.WaitUntil(t, "Stop to begin", func() bool { return !srv.Live() })
			}
			gate.Open()
			coretest.WantError(t, "LoadModel(a)", <-loadA, core.CodeUnavailable, `model "a"`, "shutting down")
			p.WaitEvent(t, "finalize model a")
			if !giveUp {
				if err := <-stopped; err != nil {
					t.Errorf("Stop: %v", err)
				}
				p.WaitEvent(t, "close")
			}
			if _, err := srv.Model("a", 0); err == nil {
				t.Error("model a is loaded after Stop")
			}
			want := []string{"load a waits", "load a", "instance a/a_0", "finalize instance a/a_0", "finalize model a"}
			if got := modelEvents(p, "a"); !slices.Equal(got, want) {
				t.Errorf("events of a %v, want %v", got, want)
			}
		})
	}
}
