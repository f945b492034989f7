package core_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/coretest"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// servePolled serves models under model control POLL with an interval the
// tests never wait for: they call Poll themselves.
func servePolled(t *testing.T, p *coretest.Provider, models ...coretest.ModelDir) (*core.Server, string) {
	t.Helper()
	repo := coretest.WriteRepository(t, models...)
	srv := coretest.Serve(t, core.Options{Backends: p, ModelRepositories: []string{repo}, PollModelControl: true, RepositoryPollInterval: time.Hour})
	if !srv.Ready() {
		t.Fatalf("a model did not load: %+v", srv.RepositoryIndex())
	}
	return srv, repo
}

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func poll(t *testing.T, srv *core.Server) {
	t.Helper()
	if err := srv.Poll(); err != nil {
		t.Fatalf("Poll: %v", err)
	}
}

func index(srv *core.Server) map[string]core.VersionStatus {
	out := map[string]core.VersionStatus{}
	for _, st := range srv.RepositoryIndex() {
		out[st.Name+":"+st.Version] = st
	}
	return out
}

// TestPollLoadsNewChangedAndRemovedModelsAndVersions: a model added to the
// repository loads, a changed configuration loads again, a new version
// replaces the old one (version policy latest 1), a removed model unloads.
func TestPollLoadsNewChangedAndRemovedModelsAndVersions(t *testing.T) {
	t.Parallel()
	p := coretest.NewProvider().Set("m", coretest.Echo()).Set("gone", coretest.Echo()).Set("new", coretest.Echo())
	srv, repo := servePolled(t, p, coretest.ModelDir{Name: "m", Config: vectorConfig()}, coretest.ModelDir{Name: "gone", Config: vectorConfig()})
	poll(t, srv) // nothing changed: nothing reloads
	m1, err := srv.Model("m", 1)
	if err != nil {
		t.Fatal(err)
	}

	write(t, filepath.Join(repo, "new", core.ConfigFileName), vectorConfig())
	write(t, filepath.Join(repo, "new", "1", ".keep"), "")
	if err := os.RemoveAll(filepath.Join(repo, "gone")); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(repo, "m", core.ConfigFileName), vectorConfig(`parameters [ { key: "k" value: { string_value: "v2" } } ]`))
	poll(t, srv)
	if _, err := srv.Model("gone", 0); core.CodeOf(err) != core.CodeNotFound {
		t.Errorf("a removed model: %v, want NOT_FOUND", err)
	}
	if _, ok := index(srv)["gone:1"]; ok {
		t.Errorf("a removed model is still in the index: %v", srv.RepositoryIndex())
	}
	coretest.Succeeded(t, coretest.Infer(t, srv, coretest.Request("new", "n", coretest.Int32Input("INPUT0", []int64{1}, 1))))
	m1b, err := srv.Model("m", 1)
	if err != nil || m1b == m1 || m1b.Config().GetParameters()["k"].GetStringValue() != "v2" {
		t.Fatalf("changed model: %v, %v; want version 1 loaded again with parameter k", m1b, err)
	}
	testenv.WaitUntil(t, "the old version to unload", func() bool { return m1.Readiness() == core.ModelUnavailable })

	write(t, filepath.Join(repo, "m", "2", ".keep"), "")
	poll(t, srv)
	if m, err := srv.Model("m", 0); err != nil || m.Version() != 2 {
		t.Errorf("newest version after version 2 appeared: %v, %v", m, err)
	}
	if _, err := srv.Model("m", 1); err == nil {
		t.Errorf("version 1 still serves though the policy keeps the newest only")
	}
	poll(t, srv)
	if st := index(srv)["m:2"]; st.Readiness != core.ModelReady || st.Reason != "" {
		t.Errorf("index of m after a poll with no change: %+v", srv.RepositoryIndex())
	}
}

// TestPollKeepsTheServingVersionWhenAChangeDoesNotLoad: a configuration
// that no longer loads leaves the version serving; the index says why;
// once the configuration is fixed the model loads again.
func TestPollKeepsTheServingVersionWhenAChangeDoesNotLoad(t *testing.T) {
	t.Parallel()
	p := coretest.NewProvider().Set("m", coretest.Echo())
	srv, repo := servePolled(t, p, coretest.ModelDir{Name: "m", Config: vectorConfig()})
	cfg := filepath.Join(repo, "m", core.ConfigFileName)
	write(t, cfg, "this is { not a configuration")
	poll(t, srv)
	coretest.Succeeded(t, coretest.Infer(t, srv, vector("still", 1, 2)))
	st := index(srv)["m:1"]
	if st.Readiness != core.ModelReady || !strings.Contains(st.Reason, "failed to load") || !strings.Contains(st.Reason, "config.pbtxt") {
		t.Errorf("index after a broken change: %+v, want READY with the failure as the reason", st)
	}
	poll(t, srv) // the same broken files: not tried again
	write(t, cfg, vectorConfig(`parameters [ { key: "k" value: { string_value: "fixed" } } ]`))
	poll(t, srv)
	m, err := srv.Model("m", 1)
	if err != nil || m.Config().GetParameters()["k"].GetStringValue() != "fixed" {
		t.Fatalf("after the fix: %v, %v", m, err)
	}
	if st := index(srv)["m:1"]; st.Readiness != core.ModelReady || st.Reason != "" {
		t.Errorf("index after the fix: %+v", st)
	}
}

// TestPollReloadFinishesRequestsInFlightOnTheOldVersion: a request running
// when its model's files change finishes on the version it started on,
// while requests after the switch go to the new version, none failing.
func TestPollReloadFinishesRequestsInFlightOnTheOldVersion(t *testing.T) {
	t.Parallel()
	gate := coretest.NewGate(t)
	p := coretest.NewProvider().Set("m", coretest.Gated(gate, coretest.Echo(), "slow"))
	srv, repo := servePolled(t, p, coretest.ModelDir{Name: "m", Config: vectorConfig()})
	old, err := srv.Model("m", 1)
	if err != nil {
		t.Fatal(err)
	}
	slow := coretest.Infer(t, srv, vector("slow", 7))
	p.Reached(t, "slow")
	write(t, filepath.Join(repo, "m", core.ConfigFileName), vectorConfig(`parameters [ { key: "k" value: { string_value: "new" } } ]`))
	polled := make(chan error, 1)
	go func() { polled <- srv.Poll() }()
	testenv.WaitUntil(t, "the new version to serve", func() bool {
		m, err := srv.Model("m", 1)
		return err == nil && m != old
	})
	coretest.Succeeded(t, coretest.Infer(t, srv, vector("after", 8)))
	if old.Readiness() == core.ModelUnavailable {
		t.Fatal("the old version unloaded with a request running on it")
	}
	gate.Open()
	coretest.Succeeded(t, slow)
	if err := <-polled; err != nil {
		t.Fatal(err)
	}
	testenv.WaitUntil(t, "the old version to unload", func() bool { return old.Readiness() == core.ModelUnavailable })
}
