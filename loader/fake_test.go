package loader_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/scheduling"
	"github.com/tritonhost/tritonhost/core/serverlog"
	"github.com/tritonhost/tritonhost/loader"
)

// fakeOpener stands in for abi.Host: it opens nothing, and records every
// call the loader makes on the libraries it returns, in order.
type fakeOpener struct {
	mu      sync.Mutex
	calls   []string                     // "<backend>: <call>"
	configs map[string]map[string]string // backend config passed to Open, by backend
	fail    map[string]error             // "<backend>.<call>" -> the error it returns
	attrs   loader.Attributes
	held    int64 // what HeldRequests reports
}

func newFakeOpener() *fakeOpener {
	return &fakeOpener{configs: map[string]map[string]string{}, fail: map[string]error{}}
}

func (o *fakeOpener) record(backend, call string) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.calls = append(o.calls, backend+": "+call)
	return o.fail[backend+"."+strings.Fields(call)[0]]
}

func (o *fakeOpener) recorded() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.calls)
}

func (o *fakeOpener) Open(path, name string, config map[string]string) (loader.Library, error) {
	if err := o.record(name, "Open "+filepath.Base(path)); err != nil {
		return nil, err
	}
	o.mu.Lock()
	o.configs[name] = config
	o.mu.Unlock()
	return &fakeLibrary{o: o, backend: name}, nil
}

type fakeLibrary struct {
	o       *fakeOpener
	backend string
}

func (l *fakeLibrary) Initialize() error { return l.o.record(l.backend, "Initialize") }
func (l *fakeLibrary) Attributes() (loader.Attributes, error) {
	return l.o.attrs, l.o.record(l.backend, "Attributes")
}
func (l *fakeLibrary) DeviceBlocking() bool { return false }
func (l *fakeLibrary) Finalize() error      { return l.o.record(l.backend, "Finalize") }
func (l *fakeLibrary) Close() error         { return l.o.record(l.backend, "Close") }
func (l *fakeLibrary) HeldRequests() int64 {
	l.o.mu.Lock()
	defer l.o.mu.Unlock()
	return l.o.held
}

func (l *fakeLibrary) NewModel(m *core.Model, autoComplete bool) (loader.Model, error) {
	name := fmt.Sprintf("%s/%d", m.Name(), m.Version())
	if err := l.o.record(l.backend, fmt.Sprintf("NewModel %s auto=%v", name, autoComplete)); err != nil {
		return nil, err
	}
	return &fakeModel{l: l, name: name}, nil
}

type fakeModel struct {
	l    *fakeLibrary
	name string
}

func (m *fakeModel) Initialize() error { return m.l.o.record(m.l.backend, "ModelInitialize "+m.name) }
func (m *fakeModel) Finalize() error   { return m.l.o.record(m.l.backend, "ModelFinalize "+m.name) }
func (m *fakeModel) Retire()           { _ = m.l.o.record(m.l.backend, "ModelRetire "+m.name) }
func (m *fakeModel) NewInstance(inst *core.Instance) (loader.Instance, error) {
	if err := m.l.o.record(m.l.backend, "NewInstance "+inst.Name()); err != nil {
		return nil, err
	}
	return &fakeInstance{m: m, name: inst.Name()}, nil
}

type fakeInstance struct {
	m    *fakeModel
	name string
}

func (i *fakeInstance) rec(call string) error { return i.m.l.o.record(i.m.l.backend, call+" "+i.name) }
func (i *fakeInstance) Initialize() error     { return i.rec("InstanceInitialize") }
func (i *fakeInstance) Ready() error          { return nil }
func (i *fakeInstance) Finalize() error       { return i.rec("InstanceFinalize") }
func (i *fakeInstance) Retire()               { _ = i.rec("InstanceRetire") }

// Execute answers every request with an empty final response.
func (i *fakeInstance) Execute(batch []*core.Request) error {
	for _, r := range batch {
		_ = r.Responder().Send(&core.Response{}, true)
		_ = r.Release(core.ReleaseAll)
	}
	return nil
}

// model is a model directory of a test repository.
type model struct {
	name, backend string
	extra         string   // more configuration text
	files         []string // files to create, relative to the model directory
}

// repository writes models into a temporary repository, with an empty
// backend library file where each model's files say, and returns it.
func repository(t *testing.T, models ...model) string {
	t.Helper()
	repo := t.TempDir()
	for _, m := range models {
		dir := filepath.Join(repo, m.name)
		if err := os.MkdirAll(filepath.Join(dir, "1"), 0o755); err != nil {
			t.Fatal(err)
		}
		cfg := fmt.Sprintf("name: %q\nbackend: %q\n%s", m.name, m.backend, m.extra)
		if err := os.WriteFile(filepath.Join(dir, core.ConfigFileName), []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, f := range m.files {
			if err := os.WriteFile(filepath.Join(dir, f), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return repo
}

// backendDirectory makes a backend directory holding an empty
// <backend>/libtriton_<backend>.so and returns it.
func backendDirectory(t *testing.T, backend string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, backend), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, backend, loader.LibraryFile(backend, "")), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// startServer serves repo through a Provider over o.
func startServer(t *testing.T, repo string, o *fakeOpener, mutate ...func(*loader.Options)) *core.Server {
	t.Helper()
	opts := loader.Options{Opener: o, Logger: serverlog.Discard(), CloseGrace: 50 * time.Millisecond}
	for _, f := range mutate {
		f(&opts)
	}
	srv, err := core.NewServer(core.Options{ModelRepositories: []string{repo}, Backends: loader.New(opts), Schedulers: scheduling.New})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Stop(context.Background()) })
	return srv
}

var errFake = errors.New("the fake says no")
