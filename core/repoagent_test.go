package core_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/coretest"
)

// agentsConfig is vectorConfig naming the agents, each with one parameter
// "p" whose value is the agent's name.
func agentsConfig(agents ...string) string {
	var list []string
	for _, a := range agents {
		list = append(list, `{ name: "`+a+`" parameters { key: "p" value: "`+a+`" } parameters { key: "a" value: "first" } }`)
	}
	return vectorConfig("model_repository_agents { agents [ " + strings.Join(list, ", ") + " ] }")
}

// serveAgents serves model "m" with config under explicit model control,
// with agents as the server's repository agents.
func serveAgents(t *testing.T, agents core.RepoAgentProvider, p *coretest.Provider, opts core.Options, config string) *core.Server {
	t.Helper()
	opts.Backends, opts.RepoAgents = p, agents
	opts.ExplicitModelControl, opts.StartupModels = true, []string{"*"}
	return coretest.Serve(t, opts, coretest.ModelDir{Name: "m", Config: config})
}

func reason(srv *core.Server, model string) string {
	for _, st := range srv.RepositoryIndex() {
		if st.Name == model {
			return st.Reason
		}
	}
	return ""
}

func TestRepoAgentsSeeTheLifecycleInTritonsOrder(t *testing.T) {
	agents := coretest.NewAgents()
	srv := serveAgents(t, agents, coretest.NewProvider(), core.Options{}, agentsConfig("a", "b"))
	if !srv.Ready() {
		t.Fatalf("not ready: %+v", srv.RepositoryIndex())
	}
	echoed(t, srv, vector("r", 1))
	if err := srv.UnloadModel(context.Background(), "m"); err != nil {
		t.Fatal(err)
	}
	agents.WaitLog(t,
		"a m new", "a m LOAD", "b m new", "b m LOAD",
		"b m LOAD_COMPLETE", "a m LOAD_COMPLETE",
		"a m UNLOAD", "b m UNLOAD",
		"b m UNLOAD_COMPLETE", "a m UNLOAD_COMPLETE",
		"b m finalize", "a m finalize")
	specs := agents.Specs()
	want := []core.RepoAgentSetting{{Name: "a", Value: "first"}, {Name: "p", Value: "a"}}
	if len(specs) != 2 || !slices.Equal(specs[0].Parameters, want) || !filepath.IsAbs(specs[0].Location) ||
		!strings.Contains(string(specs[0].Config), `"name":"m"`) {
		t.Errorf("agent a's spec %+v; want parameters %v sorted by name, an absolute location and the JSON configuration", specs[0], want)
	}
}

func TestRepoAgentRefusingTheLoadFailsIt(t *testing.T) {
	agents := coretest.NewAgents().Set("b", func(act core.RepoAction, _ core.RepoAgentModelSpec) (string, error) {
		if act == core.RepoActionLoad {
			return "", core.Errorf(core.CodeInvalidArg, "Mismatched MD5 hash for file 1/model.bin")
		}
		return "", nil
	})
	p := coretest.NewProvider()
	srv := serveAgents(t, agents, p, core.Options{}, agentsConfig("a", "b", "c"))
	if srv.Ready() {
		t.Fatal("ready, though an agent refused the load")
	}
	if r := reason(srv, "m"); !strings.Contains(r, `repository agent "b" refused the load: Mismatched MD5 hash for file 1/model.bin`) {
		t.Errorf("reason %q; want the agent's", r)
	}
	agents.WaitLog(t, "a m new", "a m LOAD", "b m new", "b m LOAD", "b m LOAD_FAIL", "a m LOAD_FAIL", "b m finalize", "a m finalize")
	if slices.ContainsFunc(p.Events(), func(ev string) bool { return strings.HasPrefix(ev, "load ") }) {
		t.Errorf("the backend loaded the model: %v", p.Events())
	}
	if _, err := srv.Model("m", 0); err == nil {
		t.Error("the model is served")
	}
}

func TestRepoAgentsHearOfAFailedBackendLoad(t *testing.T) {
	agents := coretest.NewAgents()
	p := coretest.NewProvider().FailLoad("m", errors.New("no such file"))
	srv := serveAgents(t, agents, p, core.Options{}, agentsConfig("a"))
	if srv.Ready() {
		t.Fatal("ready, though the backend failed")
	}
	agents.WaitLog(t, "a m new", "a m LOAD", "a m LOAD_FAIL", "a m finalize")
}

// TestRepoAgentRelocatesTheModel: an agent that gives a new location makes
// the next agent see it, and the server read the configuration and the
// versions there and load from it.
func TestRepoAgentRelocatesTheModel(t *testing.T) {
	moved := t.TempDir()
	if err := os.MkdirAll(filepath.Join(moved, "3"), 0o755); err != nil {
		t.Fatal(err)
	}
	// The new configuration names the same agents (Triton runs those of
	// the original) and takes batches.
	newConfig := agentsConfig("a", "b") + "\nmax_batch_size: 8\n"
	newConfig = strings.Replace(newConfig, "max_batch_size: 0\n", "", 1)
	if err := os.WriteFile(filepath.Join(moved, "config.pbtxt"), []byte(newConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	agents := coretest.NewAgents().Set("a", func(act core.RepoAction, _ core.RepoAgentModelSpec) (string, error) {
		return moved, nil
	})
	srv := serveAgents(t, agents, coretest.NewProvider(), core.Options{}, agentsConfig("a", "b"))
	if !srv.Ready() {
		t.Fatalf("not ready: %+v", srv.RepositoryIndex())
	}
	m, err := srv.Model("m", 0)
	if err != nil {
		t.Fatal(err)
	}
	if m.Version() != 3 || m.Path() != moved || m.MaxBatchSize() != 8 {
		t.Errorf("loaded version %d from %s with max_batch_size %d; want version 3 from %s with 8", m.Version(), m.Path(), m.MaxBatchSize(), moved)
	}
	if specs := agents.Specs(); len(specs) != 2 || specs[1].Location != moved || !strings.Contains(string(specs[1].Config), `"max_batch_size":8`) {
		t.Errorf("agent b saw %+v; want the location and configuration agent a gave", specs[1:])
	}

	bad := coretest.NewAgents().Set("a", func(core.RepoAction, core.RepoAgentModelSpec) (string, error) {
		return filepath.Join(moved, "nope"), nil
	})
	srv2 := serveAgents(t, bad, coretest.NewProvider(), core.Options{}, agentsConfig("a"))
	if r := reason(srv2, "m"); srv2.Ready() || !strings.Contains(r, "which is not a directory") {
		t.Errorf("a location that is not a directory: ready %v, reason %q", srv2.Ready(), r)
	}
}

func TestRepoAgentsWithoutAProvider(t *testing.T) {
	srv := serveAgents(t, nil, coretest.NewProvider(), core.Options{}, agentsConfig("checksum"))
	if r := reason(srv, "m"); srv.Ready() || !strings.Contains(r, `names repository agent "checksum", but the server has none`) {
		t.Errorf("ready %v, reason %q", srv.Ready(), r)
	}
}

// TestRepoAgentCallsAreBounded: a LOAD that does not return within the
// backend call timeout fails the load; when it returns, the agent still
// gets LOAD_FAIL and is finalized.
func TestRepoAgentCallsAreBounded(t *testing.T) {
	gate := coretest.NewGate(t)
	agents := coretest.NewAgents().Hang("a", core.RepoActionLoad, gate)
	srv := serveAgents(t, agents, coretest.NewProvider(), core.Options{BackendCallTimeout: 50 * time.Millisecond}, agentsConfig("a"))
	if r := reason(srv, "m"); srv.Ready() || !strings.Contains(r, "did not return within 50ms") {
		t.Errorf("ready %v, reason %q; want the load given up on", srv.Ready(), r)
	}
	gate.Open()
	agents.WaitLog(t, "a m new", "a m LOAD waits", "a m LOAD", "a m LOAD_FAIL", "a m finalize")
}
