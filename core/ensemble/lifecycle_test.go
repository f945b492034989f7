package ensemble_test

import (
	"context"
	"slices"
	"testing"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/coretest"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// outer is ensemble "outer", which runs ensemble "pipe" as its one step.
var outer = coretest.ModelDir{Name: "outer", Config: ensembleConfig([]string{"X"}, []string{"Y"}, []string{step("pipe", "IN:X", "OUT:Y")})}

// TestEnsemblesLoadAfterTheModelsTheyRun: with one load at a time, and
// names that sort before their steps', ensembles (one running another)
// load after the models they run, and serve.
func TestEnsemblesLoadAfterTheModelsTheyRun(t *testing.T) {
	t.Parallel()
	p := coretest.NewProvider()
	a := coretest.ModelDir{Name: "a", Config: ensembleConfig([]string{"X"}, []string{"Y"}, []string{step("outer", "X:X", "Y:Y")})}
	srv := coretest.Serve(t, core.Options{Backends: p, LoadConcurrency: 1}, append(vectorModels("pre", "post"), pipeline(), outer, a)...)
	if !srv.Ready() {
		t.Fatalf("not every model loaded: %+v", srv.RepositoryIndex())
	}
	if got := ints(t, coretest.Infer(t, srv, coretest.Request("a", "r", input("X", 3, 1))).Single(t), "Y"); !slices.Equal(got, []int32{3, 1}) {
		t.Errorf("Y = %v, want [3 1]", got)
	}
	for _, m := range []string{"pre", "post"} {
		if n := len(p.Executions(m)); n != 1 {
			t.Errorf("%s ran %d times for a request through three nested ensembles, want once", m, n)
		}
	}
}

// explicitServer serves pre, post, pipe and outer under explicit model
// control, loading startup at start.
func explicitEnsembleServer(t *testing.T, p *coretest.Provider, startup ...string) *core.Server {
	t.Helper()
	return coretest.Serve(t, core.Options{Backends: p, ExplicitModelControl: true, StartupModels: startup},
		append(vectorModels("pre", "post"), pipeline(), outer)...)
}

func readiness(t *testing.T, srv *core.Server, models ...string) []core.ModelReadiness {
	t.Helper()
	var out []core.ModelReadiness
	for _, m := range models {
		st, _ := indexReason(t, srv, m)
		out = append(out, st)
	}
	return out
}

// TestLoadingAnEnsembleLoadsTheModelsItRuns, at start and by LoadModel,
// under explicit model control.
func TestLoadingAnEnsembleLoadsTheModelsItRuns(t *testing.T) {
	t.Parallel()
	ready := []core.ModelReadiness{core.ModelReady, core.ModelReady, core.ModelReady}
	srv := explicitEnsembleServer(t, coretest.NewProvider(), "outer")
	if got := readiness(t, srv, "pre", "post", "pipe"); !slices.Equal(got, ready) {
		t.Errorf("with outer loaded at start, pre, post and pipe are %v, want ready", got)
	}

	p := coretest.NewProvider()
	srv = explicitEnsembleServer(t, p)
	if err := srv.LoadModel("pipe"); err != nil {
		t.Fatalf("LoadModel(pipe): %v", err)
	}
	if got := readiness(t, srv, "pre", "post", "pipe"); !slices.Equal(got, ready) {
		t.Errorf("after LoadModel(pipe), pre, post and pipe are %v, want ready", got)
	}
	if st, _ := indexReason(t, srv, "outer"); st != core.ModelUnavailable {
		t.Errorf("outer, which runs pipe, is %v; loading a model loads what it runs, not what runs it", st)
	}
	coretest.Infer(t, srv, coretest.Request("pipe", "r", input("IN", 1))).Single(t)
}

// TestUnloadingAModelTakesAwayTheEnsemblesThatRunIt: unloading pre makes
// pipe, and outer which runs pipe, unavailable with Triton's reasons (the
// server stays ready: nothing failed), and loading pre brings them back.
func TestUnloadingAModelTakesAwayTheEnsemblesThatRunIt(t *testing.T) {
	t.Parallel()
	srv := explicitEnsembleServer(t, coretest.NewProvider(), "outer")
	coretest.Track(t, func() {
		if err := srv.UnloadModel(context.Background(), "pre"); err != nil {
			t.Fatalf("UnloadModel(pre): %v", err)
		}
	})
	const pipeGone = "ensemble pipe contains models that are not available or ambiguous: pre"
	for _, c := range []struct{ model, reason string }{
		{"pipe", pipeGone},
		{"outer", "ensemble 'outer' depends on 'pipe' which is not valid. Model 'pipe' failed with error: " + pipeGone},
	} {
		if st, reason := indexReason(t, srv, c.model); st != core.ModelUnavailable || reason != c.reason {
			t.Errorf("%s is %v (%q), want unavailable (%q)", c.model, st, reason, c.reason)
		}
	}
	err := srv.Infer(context.Background(), coretest.Request("pipe", "r", input("IN", 1)), coretest.NewCollector().Receive)
	coretest.WantError(t, "Infer(pipe)", err, core.CodeNotFound, "has no available versions", pipeGone)
	if !srv.Ready() {
		t.Errorf("the server is not ready after an explicit unload")
	}

	if err := srv.LoadModel("pre"); err != nil {
		t.Fatalf("LoadModel(pre): %v", err)
	}
	if got := readiness(t, srv, "pre", "pipe", "outer"); !slices.Equal(got, []core.ModelReadiness{core.ModelReady, core.ModelReady, core.ModelReady}) {
		t.Errorf("after LoadModel(pre), pre, pipe and outer are %v, want ready", got)
	}
	coretest.Infer(t, srv, coretest.Request("outer", "r", input("X", 1))).Single(t)
}

// TestUnloadingAnEnsembleWaitsForItsRequests: the unload returns once the
// request in flight has finished, and that request succeeds.
func TestUnloadingAnEnsembleWaitsForItsRequests(t *testing.T) {
	t.Parallel()
	p := coretest.NewProvider()
	gate := coretest.NewGate(t)
	p.Set("pre", coretest.Gated(gate, coretest.Echo()))
	srv := explicitEnsembleServer(t, p, "pipe")
	reply := coretest.Infer(t, srv, coretest.Request("pipe", "r", input("IN", 5)))
	p.Reached(t, "r")
	unloaded := make(chan error, 1)
	coretest.Track(t, func() { go func() { unloaded <- srv.UnloadModel(context.Background(), "pipe") }() })
	testenv.WaitUntil(t, "pipe to unload", func() bool { st, _ := indexReason(t, srv, "pipe"); return st != core.ModelReady })
	select {
	case err := <-unloaded:
		t.Fatalf("UnloadModel returned (%v) while a request was in flight", err)
	default:
	}
	gate.Open()
	if got := ints(t, reply.Single(t), "OUT"); !slices.Equal(got, []int32{5}) {
		t.Errorf("OUT = %v, want [5]", got)
	}
	if err := <-unloaded; err != nil {
		t.Errorf("UnloadModel: %v", err)
	}
}

// TestNoGoroutineOutlivesUnloadedEnsembles: what loading an ensemble and
// its models started, and what its requests (decoupled ones too) started,
// ends once they are unloaded.
func TestNoGoroutineOutlivesUnloadedEnsembles(t *testing.T) {
	t.Parallel()
	p := coretest.NewProvider()
	stream := coretest.ModelDir{Name: "stream", Config: ensembleConfig([]string{"IN"}, []string{"OUT"}, []string{
		step("gen", "INPUT0:IN", "OUTPUT0:g"), step("post", "INPUT0:g", "OUTPUT0:OUT")})}
	srv := coretest.Serve(t, core.Options{Backends: p, ExplicitModelControl: true}, append(vectorModels("pre", "post"), pipeline(), genModel(p), stream)...)
	coretest.Track(t, func() {
		for _, m := range []string{"pipe", "stream"} {
			if err := srv.LoadModel(m); err != nil {
				t.Fatalf("LoadModel(%s): %v", m, err)
			}
		}
		for i := range 5 {
			coretest.Infer(t, srv, coretest.Request("pipe", "p", input("IN", int32(i)))).Single(t)
			if got := streamed(t, coretest.Infer(t, srv, coretest.Request("stream", "s", input("IN", 1, 2, int32(i))))); len(got) != 3 {
				t.Errorf("stream answered %d times, want 3", len(got))
			}
		}
		for _, m := range []string{"pipe", "stream", "pre", "post", "gen"} {
			if err := srv.UnloadModel(context.Background(), m); err != nil {
				t.Errorf("UnloadModel(%s): %v", m, err)
			}
		}
	})
	if n := srv.LiveRequests(); n != 0 {
		t.Errorf("%d requests still live after every model unloaded", n)
	}
}

// TestReloadingAStepModelKeepsRequestsInFlight: a request in flight when
// the model of its next step reloads goes on with the new version, and
// the reload (which reloads the ensemble too) returns once it is done.
func TestReloadingAStepModelKeepsRequestsInFlight(t *testing.T) {
	t.Parallel()
	p := coretest.NewProvider()
	gate := coretest.NewGate(t)
	p.Set("pre", coretest.Gated(gate, coretest.Echo()))
	srv := explicitEnsembleServer(t, p, "pipe")
	reply := coretest.Infer(t, srv, coretest.Request("pipe", "r", input("IN", 6)))
	p.Reached(t, "r")
	reloaded := make(chan error, 1)
	go func() { reloaded <- srv.LoadModel("post") }()
	p.WaitEvent(t, "finalize model post") // the version the request started with is gone
	gate.Open()
	if got := ints(t, reply.Single(t), "OUT"); !slices.Equal(got, []int32{6}) {
		t.Errorf("OUT = %v, want [6]", got)
	}
	if err := <-reloaded; err != nil {
		t.Errorf("LoadModel(post): %v", err)
	}
	if got := readiness(t, srv, "post", "pipe"); !slices.Equal(got, []core.ModelReadiness{core.ModelReady, core.ModelReady}) {
		t.Errorf("after the reload, post and pipe are %v, want ready", got)
	}
}

// TestUnloadWithDependentsUnloadsTheStepsNoOtherEnsembleRuns: unloading an
// ensemble with its dependents unloads the models its steps run, except
// those another loaded ensemble still runs.
func TestUnloadWithDependentsUnloadsTheStepsNoOtherEnsembleRuns(t *testing.T) {
	t.Parallel()
	p := coretest.NewProvider()
	other := coretest.ModelDir{Name: "other", Config: ensembleConfig([]string{"IN"}, []string{"OUT"},
		[]string{step("post", "INPUT0:IN", "OUTPUT0:OUT")})}
	models := append(vectorModels("pre", "post"), pipeline(), other)
	srv := coretest.Serve(t, core.Options{Backends: p, ExplicitModelControl: true}, models...)
	for _, m := range []string{"pipe", "other"} {
		if err := srv.LoadModel(m); err != nil {
			t.Fatalf("load %s: %v", m, err)
		}
	}
	if err := srv.UnloadModelAndDependents(t.Context(), "pipe"); err != nil {
		t.Fatal(err)
	}
	if got := readyModels(srv); !slices.Equal(got, []string{"other", "post"}) {
		t.Errorf("ready after unloading pipe with its dependents: %v, want other and post", got)
	}

	// StartUnload returns once the model takes no new requests.
	if err := srv.StartUnload(t.Context(), "other", true); err != nil {
		t.Fatal(err)
	}
	testenv.WaitUntil(t, "other and post to unload", func() bool { return len(readyModels(srv)) == 0 })
	coretest.WantError(t, "StartUnload of a model no repository has", srv.StartUnload(t.Context(), "nope", false), core.CodeNotFound, "no such model")
}

// readyModels lists the models with a ready version, from the index.
func readyModels(srv *core.Server) []string {
	var out []string
	for _, st := range srv.RepositoryIndex() {
		if st.Readiness == core.ModelReady {
			out = append(out, st.Name)
		}
	}
	return out
}
