package coretest

import (
	"context"
	"testing"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/scheduling"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// Serve writes models into a new repository, adds it to opts and starts a
// core.Server with opts (opts.Backends is required; opts.Schedulers defaults
// to scheduling.New). The goroutines the
// server starts are tracked (see Track). At cleanup it opens the test's
// gates, stops the server and fails the test if Stop fails, a request is
// still live or a tracked goroutine outlives the server. Models that fail to
// load do not fail the test; see Start.
func Serve(t testing.TB, opts core.Options, models ...ModelDir) *core.Server {
	t.Helper()
	opts.ModelRepositories = append(opts.ModelRepositories, WriteRepository(t, models...))
	if opts.Schedulers == nil {
		opts.Schedulers = scheduling.New
	}
	var srv *core.Server
	var err error
	Track(t, func() { srv, err = core.NewServer(opts) })
	if err != nil {
		t.Fatalf("core.NewServer: %v", err)
	}
	t.Cleanup(func() {
		openGates(t)
		ctx, cancel := context.WithTimeout(context.Background(), testenv.Patience)
		defer cancel()
		if err := srv.Stop(ctx); err != nil {
			t.Errorf("Stop: %v", err)
		}
		if n := srv.LiveRequests(); n != 0 {
			t.Errorf("%d request(s) still live after Stop", n)
		}
	})
	return srv
}

// Start serves models on backends and fails the test unless every model
// loaded.
func Start(t testing.TB, backends core.BackendProvider, models ...ModelDir) *core.Server {
	t.Helper()
	srv := Serve(t, core.Options{Backends: backends}, models...)
	if !srv.Ready() {
		t.Fatalf("a model did not load: %+v", srv.RepositoryIndex())
	}
	return srv
}

// StartGated serves one model, name, with config on a Provider whose
// behaviour for it echoes once the returned gate opens: a first request
// keeps an instance busy (Provider.Reached tells when) while the test
// queues others.
func StartGated(t testing.TB, name, config string) (*core.Server, *Provider, *Gate) {
	t.Helper()
	p := NewProvider()
	srv := Start(t, p, ModelDir{Name: name, Config: config})
	gate := NewGate(t)
	p.Set(name, Gated(gate, Echo()))
	return srv, p, gate
}

// Statistics returns the statistics of model's one loaded version, failing
// the test unless there is exactly one.
func Statistics(t testing.TB, srv *core.Server, model string) core.ModelStatistics {
	t.Helper()
	st, err := srv.Statistics(model, 0)
	if err != nil || len(st) != 1 {
		t.Fatalf("Statistics(%q): %v, %d versions", model, err, len(st))
	}
	return st[0]
}
