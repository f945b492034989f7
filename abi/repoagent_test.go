package abi_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tritonhost/tritonhost/abi"
	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/internal/testenv"
	"github.com/tritonhost/tritonhost/loader"
)

// probeAgents builds testdata/repoagent_probe.c as the agent "probe" in an
// agent directory of its own, and returns a provider of it on a host of
// its own (closed at cleanup).
func probeAgents(t *testing.T) *loader.RepoAgents {
	t.Helper()
	lib := testenv.SharedLibrary(t, "tritonrepoagent_probe", "testdata/repoagent_probe.c")
	dir := t.TempDir()
	testenv.CopyFile(t, lib, filepath.Join(dir, "probe", "libtritonrepoagent_probe.so"))
	host := abi.NewHost(abi.HostOptions{})
	t.Cleanup(host.Close)
	return loader.NewRepoAgents(host, dir, nil)
}

// probeSpec is an agent model of a model in a fresh directory, with the
// probe's parameters and a log file; it returns the log's path.
func probeSpec(t *testing.T, params ...core.RepoAgentSetting) (core.RepoAgentModelSpec, string) {
	t.Helper()
	log := filepath.Join(t.TempDir(), "agent.log")
	return core.RepoAgentModelSpec{Model: "m", Location: t.TempDir(), Config: []byte(`{"name":"m"}`),
		Parameters: append(params, core.RepoAgentSetting{Name: "log", Value: log})}, log
}

func readLog(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return strings.Fields(string(data))
}

func TestRepoAgentSeesTheLifecycleInOrder(t *testing.T) {
	agents := probeAgents(t)
	spec, log := probeSpec(t)
	m, err := agents.NewModel("probe", spec)
	if err != nil {
		t.Fatal(err)
	}
	if agents.Open() != 1 {
		t.Errorf("%d agent libraries open, want 1", agents.Open())
	}
	for _, a := range []core.RepoAction{core.RepoActionLoad, core.RepoActionLoadComplete, core.RepoActionUnload, core.RepoActionUnloadComplete} {
		if err := m.Action(a); err != nil {
			t.Fatalf("%v: %v", a, err)
		}
	}
	if got := m.Location(); got != spec.Location {
		t.Errorf("Location %q, want the model's directory %q", got, spec.Location)
	}
	if err := m.Finalize(); err != nil {
		t.Fatal(err)
	}
	want := "model_initialize LOAD LOAD_COMPLETE UNLOAD UNLOAD_COMPLETE model_finalize"
	if got := strings.Join(readLog(t, log), " "); got != want {
		t.Errorf("agent saw %q\nwant       %q", got, want)
	}
	if agents.Open() != 0 {
		t.Errorf("%d agent libraries open after the last model finalized, want 0", agents.Open())
	}
	if err := m.Finalize(); err == nil {
		t.Error("a second Finalize succeeded")
	}
}

// TestRepoAgentHostFunctionsAnswerAsTheHeaderSays: the probe calls every
// TRITONREPOAGENT host function during LOAD with good and bad arguments
// (and ModelRepositoryUpdate outside LOAD), and fails naming the first
// that did not answer as tritonrepoagent.h says.
func TestRepoAgentHostFunctionsAnswerAsTheHeaderSays(t *testing.T) {
	agents := probeAgents(t)
	spec, _ := probeSpec(t, core.RepoAgentSetting{Name: "checks", Value: "1"})
	m, err := agents.NewModel("probe", spec)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Finalize()
	for _, a := range []core.RepoAction{core.RepoActionLoad, core.RepoActionLoadComplete, core.RepoActionUnload} {
		if err := m.Action(a); err != nil {
			t.Errorf("%v: %v", a, err)
		}
	}
}

func TestRepoAgentRelocatesTheModel(t *testing.T) {
	agents := probeAgents(t)
	spec, _ := probeSpec(t, core.RepoAgentSetting{Name: "config", Value: `name: "m" backend: "identity"`})
	m, err := agents.NewModel("probe", spec)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Action(core.RepoActionLoad); err != nil {
		t.Fatal(err)
	}
	loc := m.Location()
	if loc == spec.Location || !filepath.IsAbs(loc) {
		t.Fatalf("Location after LOAD %q, want a new directory", loc)
	}
	cfg, err := os.ReadFile(filepath.Join(loc, "config.pbtxt"))
	if err != nil || !strings.Contains(string(cfg), `backend: "identity"`) {
		t.Errorf("config.pbtxt in the new location: %q, %v", cfg, err)
	}
	if err := m.Action(core.RepoActionLoadFail); err != nil {
		t.Fatal(err)
	}
	if err := m.Finalize(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(loc); !os.IsNotExist(err) {
		t.Errorf("the acquired location %s outlived the agent model (%v)", loc, err)
	}
}

func TestRepoAgentErrors(t *testing.T) {
	agents := probeAgents(t)
	spec, _ := probeSpec(t, core.RepoAgentSetting{Name: "fail", Value: "LOAD"})
	m, err := agents.NewModel("probe", spec)
	if err != nil {
		t.Fatal(err)
	}
	err = m.Action(core.RepoActionLoad)
	if err == nil || core.CodeOf(err) != core.CodeInvalidArg || err.Error() != "the probe agent refuses LOAD" {
		t.Errorf("LOAD: %v (code %v), want the agent's INVALID_ARG error", err, core.CodeOf(err))
	}
	if err := m.Finalize(); err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	noAction := testenv.SharedLibrary(t, "tritonrepoagent_partial", "testdata/initialize_fails.c")
	testenv.CopyFile(t, noAction, filepath.Join(dir, "partial", "libtritonrepoagent_partial.so"))
	host := abi.NewHost(abi.HostOptions{})
	defer host.Close()
	other := loader.NewRepoAgents(host, dir, nil)
	for name, want := range map[string]string{
		"nope":    "unable to find 'libtritonrepoagent_nope.so' for repo agent 'nope', searched: " + dir,
		"partial": "does not export TRITONREPOAGENT_ModelAction",
		"a/b":     "must be a name",
	} {
		if _, err := other.NewModel(name, spec); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("agent %q: %v, want an error containing %q", name, err, want)
		}
	}
	if other.Open() != 0 {
		t.Errorf("%d agent libraries open after failures, want 0", other.Open())
	}
}
