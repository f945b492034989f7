package embedded_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/tritonhost/tritonhost/abi"
	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/coretest"
	"github.com/tritonhost/tritonhost/internal/embedded"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// pluginModels copies the models of the binary's plugin tests (a model
// with response_cache enabled, one checked by the checksum agent) into a
// repository of the test's own.
func pluginModels(t *testing.T) string {
	t.Helper()
	repo := t.TempDir()
	testenv.CopyTree(t, filepath.Join("..", "..", "cmd", "tritonhost", "testdata", "plugins"), repo)
	return repo
}

// TestOptionsOpenTheResponseCacheAndTheAgents: an embedded server made
// with TRITONSERVER_ServerOptionsSetCacheConfig's and
// SetRepoAgentDirectory's settings answers a repeated request from the
// local cache (a hit in the statistics) and runs the checksum agent of a
// model that names it.
func TestOptionsOpenTheResponseCacheAndTheAgents(t *testing.T) {
	caches, agents := testenv.PluginDirs(t)
	o := abi.NewServerOptions()
	o.ModelRepositories = []string{pluginModels(t)}
	o.BackendDirectory = testenv.BackendDir(t)
	o.CacheDirectory, o.RepoAgentDirectory = caches, agents
	o.CacheConfigs = map[string]string{"local": `{"size":"1048576"}`}
	o.Metrics = false
	_, srv := start(t, o)
	if got := strings.Join(ready(srv), ","); got != "cached,checked" {
		t.Fatalf("ready models %s, want cached,checked (the checksum agent passes the untouched model)", got)
	}
	// The first request misses; its response is inserted on the server's
	// own goroutine, after the reply, so the same request repeated hits
	// once the insert is done.
	testenv.WaitUntil(t, "a repeated request to hit the cache", func() bool {
		coretest.Succeeded(t, coretest.Infer(t, srv, coretest.Request("cached", "", coretest.Int32Input("INPUT0", []int64{2}, 4, 5))))
		return coretest.Statistics(t, srv, "cached").Inference.CacheHit.Count > 0
	})
	// identity reports a miss's execution after its response, which the
	// client may have read before: wait for every executed request.
	testenv.Eventually(func() bool {
		st := coretest.Statistics(t, srv, "cached")
		return st.Inference.Success.Count >= st.Inference.CacheHit.Count+st.Inference.CacheMiss.Count
	})
	st := coretest.Statistics(t, srv, "cached")
	inf := st.Inference
	if inf.CacheHit.Count != 1 || inf.CacheMiss.Count == 0 || inf.Success.Count != inf.CacheHit.Count+inf.CacheMiss.Count || st.InferenceCount != inf.CacheMiss.Count {
		t.Errorf("statistics %+v: want one hit, and the misses alone executed", st)
	}
}

// TestOptionsRefuseACacheThatCannotOpen: a cache the server cannot find,
// or two caches, fail TRITONSERVER_ServerNew with a message naming it.
func TestOptionsRefuseACacheThatCannotOpen(t *testing.T) {
	for _, tt := range []struct {
		name    string
		configs map[string]string
		want    string
	}{
		{"missing", map[string]string{"nowhere": "{}"}, `response cache "nowhere": unable to find 'libtritoncache_nowhere.so'`},
		{"two", map[string]string{"local": "{}", "other": "{}"}, "2 caches are configured; a server has one"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := abi.NewServerOptions()
			o.ModelRepositories = []string{t.TempDir()}
			o.CacheDirectory = t.TempDir()
			o.CacheConfigs = tt.configs
			o.Metrics = false
			h, err := embedded.New(o)
			if err == nil {
				h.ServerInfo().Close()
				h.Close()
				t.Fatal("New succeeded")
			}
			if core.CodeOf(err) != core.CodeInvalidArg || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("New: %v (%v), want INVALID_ARG with %q", err, core.CodeOf(err), tt.want)
			}
		})
	}
}
