package core_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"tritonhost/core"
	"tritonhost/core/coretest"
)

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
	succeeded(t, coretest.Infer(t, srv, coretest.Request(model, id, coretest.Int32Input("INPUT0", []int64{1}, 1))))
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
	wantError(t, "UnloadModel(a) while it loads", srv.UnloadModel(ctx, "a"), core.CodeUnavailable, `model "a"`, "in progress")
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

// TestStopWaitsForALoadInProgress: a model whose load is in progress when
// Stop begins is not left loaded: Stop waits for the load, then the model
// is unloaded; the load reports that the server is shutting down.
func TestStopWaitsForALoadInProgress(t *testing.T) {
	t.Parallel()
	gate := coretest.NewGate(t)
	p := coretest.NewProvider().Hang("load a", gate)
	srv := coretest.Serve(t, core.Options{Backends: p, ExplicitModelControl: true},
		coretest.ModelDir{Name: "a", Config: vectorConfig()})
	loadA := async(func() error { return srv.LoadModel("a") })
	p.WaitEvent(t, "load a waits")
	stopped := async(func() error { return srv.Stop(context.Background()) })
	coretest.WaitUntil(t, "Stop to begin", func() bool { return !srv.Live() })
	gate.Open()
	wantError(t, "LoadModel(a)", <-loadA, core.CodeUnavailable, `model "a"`, "shutting down")
	if err := <-stopped; err != nil {
		t.Errorf("Stop: %v", err)
	}
	if _, err := srv.Model("a", 0); err == nil {
		t.Error("model a is loaded after Stop")
	}
	want := []string{"load a waits", "load a", "instance a/a_0", "finalize instance a/a_0", "finalize model a", "close"}
	if got := p.Events(); !slices.Equal(got, want) {
		t.Errorf("events %v, want %v", got, want)
	}
}
