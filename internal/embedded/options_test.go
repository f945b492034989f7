package embedded_test

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tritonhost/tritonhost/abi"
	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/internal/embedded"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// identityConfig is a model of the identity backend, batching.
const identityConfig = `backend: "identity"
max_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
`

// start creates a server with embedded.New, and deletes it at cleanup as
// TRITONSERVER_ServerDelete does, checking that nothing of the backend API
// was left.
func start(t *testing.T, o abi.ServerOptions) (*abi.Host, *core.Server) {
	t.Helper()
	h, err := embedded.New(o)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() {
		info := h.ServerInfo()
		if err := info.Stop(); err != nil {
			t.Errorf("stop: %v", err)
		}
		if live := h.Live(); !live.Zero() {
			t.Errorf("objects still live: %v", live)
		}
		info.Close()
		h.Close()
	})
	return h, h.Server()
}

func ready(srv *core.Server) []string {
	var out []string
	for _, st := range srv.RepositoryIndex() {
		if st.Readiness == core.ModelReady {
			out = append(out, st.Name)
		}
	}
	return out
}

// TestOptionsSetWhatServeFlagsSet: each option reaches the part of the
// server the serve flag of the same meaning reaches.
func TestOptionsSetWhatServeFlagsSet(t *testing.T) {
	backends := testenv.BackendDir(t)
	repo := testenv.Repository(t,
		testenv.Model{Name: "identity", Config: identityConfig},
		testenv.Model{Name: "other", Config: identityConfig})
	logFile := filepath.Join(t.TempDir(), "server.log")

	o := abi.NewServerOptions()
	o.ID = "mine"
	o.ModelRepositories = []string{repo}
	o.BackendDirectory = backends
	o.ModelControl = abi.ModelControlExplicit // --model-control-mode=explicit
	o.StartupModels = []string{"identity"}    // --load-model identity
	o.LogFile, o.LogVerbose, o.LogInfo = logFile, 1, true
	o.Metrics = false // --allow-metrics=false
	o.ExitTimeout = 7 * time.Second
	h, srv := start(t, o)

	info := h.ServerInfo()
	if info.Name != "mine" || !info.StrictReadiness || info.Metrics != nil || info.Version != embedded.Version {
		t.Errorf("server info %+v", info)
	}
	if got := ready(srv); !slices.Equal(got, []string{"identity"}) {
		t.Errorf("ready %v, want only the startup model", got)
	}
	if err := srv.LoadModel("other"); err != nil {
		t.Errorf("explicit load: %v", err)
	}
	log, err := os.ReadFile(logFile)
	if err != nil || !bytes.Contains(log, []byte("successfully loaded 'identity' version 1")) {
		t.Errorf("the log file: %v\n%s", err, log)
	}
}

// TestOptionDefaultsAreTritons: an embedded server polls its repository,
// keeps metrics and readiness is strict; with exit-on-error a model that
// fails makes New fail and leaves nothing running.
func TestOptionDefaultsAreTritons(t *testing.T) {
	backends := testenv.BackendDir(t)
	repo := testenv.Repository(t, testenv.Model{Name: "identity", Config: identityConfig})
	o := abi.NewServerOptions()
	o.ModelRepositories, o.BackendDirectory, o.LogInfo = []string{repo}, backends, false
	h, srv := start(t, o)
	if got := ready(srv); !slices.Equal(got, []string{"identity"}) {
		t.Errorf("ready %v", got)
	}
	if err := srv.Poll(); err != nil {
		t.Errorf("poll: %v", err)
	}
	var text strings.Builder
	if m := h.ServerInfo().Metrics; m == nil || m(&text) != nil || !strings.Contains(text.String(), `nv_inference_request_success{model="identity",version="1"} 0`) {
		t.Errorf("metrics: %q", text.String())
	}

	broken := testenv.Repository(t, testenv.Model{Name: "broken", Config: `backend: "no_such_backend"`})
	o.ModelRepositories = []string{broken}
	before := abi.LiveHandles()
	if _, err := embedded.New(o); err == nil || core.CodeOf(err) != core.CodeInternal || err.Error() != "failed to load all models" {
		t.Errorf("New with a model that fails: %v", err)
	}
	if after := abi.LiveHandles(); after != before {
		t.Errorf("live handles %d after a failed New, %d before", after, before)
	}
}
