package core_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/coretest"
)

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

// TestPollLoadsNewAndChangedModelsAndForgetsRemovedOnes: under poll model
// control every model loads at start, and each poll brings the models in
// line with the repository: a new directory loads, a changed one loads
// again, a removed one unloads and leaves the index.
func TestPollLoadsNewAndChangedModelsAndForgetsRemovedOnes(t *testing.T) {
	t.Parallel()
	p := coretest.NewProvider()
	srv := coretest.Serve(t, core.Options{Backends: p, PollModelControl: true}, vectorModels("a", "b")...)
	repo := srv.Repositories()[0]
	if got := readyModels(srv); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("ready at start: %v", got)
	}
	poll := func(what string, events ...string) {
		t.Helper()
		before := len(p.Events())
		// Not tracked: the models stay loaded until the server stops.
		if err := srv.Poll(); err != nil {
			t.Errorf("%s: poll: %v", what, err)
		}
		got := p.Events()[before:]
		slices.Sort(got)
		slices.Sort(events)
		if !slices.Equal(got, events) {
			t.Errorf("%s: events %v, want %v", what, got, events)
		}
	}
	poll("nothing changed")

	coretest.WriteModel(t, repo, coretest.ModelDir{Name: "c", Config: vectorConfig()})
	poll("a new model", "load c", "instance c/c_0")

	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(filepath.Join(repo, "a", core.ConfigFileName), later, later); err != nil {
		t.Fatal(err)
	}
	poll("a changed model", "load a", "instance a/a_0", "finalize instance a/a_0", "finalize model a")

	if err := os.RemoveAll(filepath.Join(repo, "b")); err != nil {
		t.Fatal(err)
	}
	poll("a removed model", "finalize instance b/b_0", "finalize model b")
	for _, st := range srv.RepositoryIndex() {
		if st.Name == "b" {
			t.Errorf("b is still in the index: %+v", st)
		}
	}
	if got := readyModels(srv); !slices.Equal(got, []string{"a", "c"}) {
		t.Errorf("ready after the polls: %v", got)
	}
	coretest.WantError(t, "LoadModel under poll control", srv.LoadModel("a"), core.CodeUnavailable, "explicit model load / unload is not allowed if polling is enabled")

	fixed, _ := serveModel(t, vectorConfig(), coretest.Echo())
	wantExactError(t, "poll without poll control", fixed.Poll(), core.CodeUnavailable, "polling is disabled")
}

// TestRegisteredRepositoryServesItsModelsByNameOrMapping: under explicit
// model control a repository registered while the server runs serves its
// models by directory name, or by the name a mapping gives a directory;
// unregistered, it serves nothing new. Triton's errors for the rest.
func TestRegisteredRepositoryServesItsModelsByNameOrMapping(t *testing.T) {
	t.Parallel()
	p := coretest.NewProvider()
	srv := coretest.Serve(t, core.Options{Backends: p, ExplicitModelControl: true}, vectorModels("m")...)
	extra := coretest.WriteRepository(t, vectorModels("x", "y")...)

	wantExactError(t, "a repository that does not exist", srv.RegisterRepository("/no/such/dir", nil), core.CodeInvalidArg,
		"failed to register '/no/such/dir', repository not found")
	if err := srv.RegisterRepository(extra, map[string]string{"renamed": "y"}); err != nil {
		t.Fatal(err)
	}
	wantExactError(t, "registered twice", srv.RegisterRepository(extra, nil), core.CodeAlreadyExists,
		"model repository '"+extra+"' has already been registered")
	for _, m := range []string{"x", "renamed"} {
		if err := srv.LoadModel(m); err != nil {
			t.Errorf("load %s: %v", m, err)
		}
	}
	coretest.WantError(t, "a mapped directory under its own name", srv.LoadModel("y"), core.CodeInternal, "failed to load 'y'")
	if got := readyModels(srv); !slices.Equal(got, []string{"renamed", "x"}) {
		t.Errorf("ready: %v", got)
	}
	if m, err := srv.Model("renamed", -1); err != nil || m.Config().GetName() != "renamed" {
		t.Errorf("the mapped model: %v, %v", m, err)
	}

	if err := srv.UnregisterRepository(extra); err != nil {
		t.Fatal(err)
	}
	wantExactError(t, "unregistered twice", srv.UnregisterRepository(extra), core.CodeInvalidArg,
		"failed to unregister '"+extra+"', repository not found")
	coretest.WantError(t, "load from an unregistered repository", srv.LoadModel("x"), core.CodeInternal, "failed to load 'x'")

	fixed, _ := serveModel(t, vectorConfig(), coretest.Echo())
	wantExactError(t, "register without explicit control", fixed.RegisterRepository(extra, nil), core.CodeUnsupported,
		"repository registration is not allowed if model control mode is not EXPLICIT")
	wantExactError(t, "unregister without explicit control", fixed.UnregisterRepository(extra), core.CodeUnsupported,
		"repository unregistration is not allowed if model control mode is not EXPLICIT")
}

// TestChildTracesRecordTheirParent: a trace spawned from another gets a new
// id, its parent's id and an empty context, and reaches whatever its
// parent's end reaches.
func TestChildTracesRecordTheirParent(t *testing.T) {
	root := core.NewOwnTrace(7)
	root.SetContext("ctx")
	child := root.SpawnChild()
	if root.ParentID != 7 || child.ParentID != root.ID || child.ID == root.ID || child.Context() != "" || root.Context() != "ctx" {
		t.Errorf("root %+v (context %q), child %+v (context %q)", root, root.Context(), child, child.Context())
	}
}
