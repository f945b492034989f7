package loader_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/loader"
)

// pluginOpener stands in for abi.Host's cache and agent side: it opens
// nothing and records, in order, what the loader asks of it.
type pluginOpener struct {
	mu    sync.Mutex
	calls []string
	fail  map[string]error // by call ("Initialize probe", "NewModel probe", ...)
}

func newPluginOpener() *pluginOpener { return &pluginOpener{fail: map[string]error{}} }

func (o *pluginOpener) record(call string) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.calls = append(o.calls, call)
	return o.fail[call]
}

func (o *pluginOpener) recorded() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.calls)
}

func (o *pluginOpener) OpenCache(path, name, config string) (core.ResponseCache, error) {
	return nil, o.record("OpenCache " + path + " " + config)
}

func (o *pluginOpener) OpenRepoAgent(path, name string) (loader.RepoAgentLibrary, error) {
	if err := o.record("Open " + name); err != nil {
		return nil, err
	}
	return &fakeAgent{o: o, name: name}, nil
}

type fakeAgent struct {
	o    *pluginOpener
	name string
}

func (a *fakeAgent) Initialize() error { return a.o.record("Initialize " + a.name) }
func (a *fakeAgent) Finalize() error   { return a.o.record("Finalize " + a.name) }
func (a *fakeAgent) Close() error      { return a.o.record("Close " + a.name) }
func (a *fakeAgent) NewModel(spec core.RepoAgentModelSpec) (core.RepoAgentModel, error) {
	if err := a.o.record("NewModel " + a.name + " " + spec.Model); err != nil {
		return nil, err
	}
	return &fakeAgentModel{a: a, model: spec.Model}, nil
}

type fakeAgentModel struct {
	a     *fakeAgent
	model string
}

func (m *fakeAgentModel) Action(act core.RepoAction) error { return nil }
func (m *fakeAgentModel) Location() string                 { return "" }
func (m *fakeAgentModel) Finalize() error {
	return m.a.o.record("ModelFinalize " + m.a.name + " " + m.model)
}

// pluginDir makes <dir>/<name>/<file> for each name and returns dir.
func pluginDir(t *testing.T, file func(string) string, names ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, n := range names {
		if err := os.MkdirAll(filepath.Join(dir, n), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, n, file(n)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestOpenCacheFindsTheLibraryAndPassesTheSettingsAsJSON(t *testing.T) {
	t.Parallel()
	dir := pluginDir(t, loader.CacheLibraryFile, "local")
	o := newPluginOpener()
	if _, err := loader.OpenCache(o, dir, "local", map[string]string{"size": "1048576", "a": "b\"c"}); err != nil {
		t.Fatal(err)
	}
	want := []string{"OpenCache " + filepath.Join(dir, "local", "libtritoncache_local.so") + ` {"a":"b\"c","size":"1048576"}`}
	if got := o.recorded(); !slices.Equal(got, want) {
		t.Errorf("calls %q\nwant  %q", got, want)
	}
	_, err := loader.OpenCache(o, dir, "redis", nil)
	if err == nil || err.Error() != "unable to find 'libtritoncache_redis.so' for cache. Searched: "+dir || core.CodeOf(err) != core.CodeInvalidArg {
		t.Errorf("a cache not in the directory: %v (code %v)", err, core.CodeOf(err))
	}
}

// TestRepoAgentsShareALibraryAndCloseItAfterItsLastModel: two models using
// one agent open it once; it is finalized and closed after the second
// model's agent model is finalized, and opened afresh for a later model.
func TestRepoAgentsShareALibraryAndCloseItAfterItsLastModel(t *testing.T) {
	t.Parallel()
	o := newPluginOpener()
	agents := loader.NewRepoAgents(o, pluginDir(t, loader.RepoAgentLibraryFile, "checksum"), nil)
	a, err := agents.NewModel("checksum", core.RepoAgentModelSpec{Model: "a"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := agents.NewModel("checksum", core.RepoAgentModelSpec{Model: "b"})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Finalize(); err != nil {
		t.Fatal(err)
	}
	if agents.Open() != 1 {
		t.Errorf("%d libraries open while b uses the agent, want 1", agents.Open())
	}
	if err := b.Finalize(); err != nil {
		t.Fatal(err)
	}
	c, err := agents.NewModel("checksum", core.RepoAgentModelSpec{Model: "c"})
	if err != nil {
		t.Fatal(err)
	}
	c.Finalize()
	want := []string{
		"Open checksum", "Initialize checksum", "NewModel checksum a", "NewModel checksum b",
		"ModelFinalize checksum a", "ModelFinalize checksum b", "Finalize checksum", "Close checksum",
		"Open checksum", "Initialize checksum", "NewModel checksum c", "ModelFinalize checksum c", "Finalize checksum", "Close checksum",
	}
	if got := o.recorded(); !slices.Equal(got, want) {
		t.Errorf("calls:\n got %q\nwant %q", got, want)
	}
}

func TestRepoAgentsFailuresLeaveNothingOpen(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		fail string
		want []string
		msg  string
	}{
		{"initialize fails", "Initialize checksum",
			[]string{"Open checksum", "Initialize checksum", "Close checksum"}, "TRITONREPOAGENT_Initialize failed: boom"},
		{"model initialize fails", "NewModel checksum m",
			[]string{"Open checksum", "Initialize checksum", "NewModel checksum m", "Finalize checksum", "Close checksum"},
			"TRITONREPOAGENT_ModelInitialize failed: boom"},
		{"open fails", "Open checksum", []string{"Open checksum"}, "boom"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			o := newPluginOpener()
			o.fail[tt.fail] = errors.New("boom")
			agents := loader.NewRepoAgents(o, pluginDir(t, loader.RepoAgentLibraryFile, "checksum"), nil)
			_, err := agents.NewModel("checksum", core.RepoAgentModelSpec{Model: "m"})
			if err == nil || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error %v, want one containing %q", err, tt.msg)
			}
			if got := o.recorded(); !slices.Equal(got, tt.want) {
				t.Errorf("calls:\n got %q\nwant %q", got, tt.want)
			}
			if agents.Open() != 0 {
				t.Errorf("%d libraries open", agents.Open())
			}
		})
	}
}
