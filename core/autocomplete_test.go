package core_test

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/configpb"
	"github.com/tritonhost/tritonhost/core/coretest"
)

// completing is a backend provider that completes each model's
// configuration as it loads (an input and an output), as a python model's
// auto_complete_config does through TRITONBACKEND_ModelSetConfig, and
// records the backend each configuration named before it did.
type completing struct {
	*coretest.Provider
	mu       sync.Mutex // models load concurrently
	backends map[string]string
}

func (c *completing) LoadModel(m *core.Model) (core.BackendModel, error) {
	cfg := proto.Clone(m.Config()).(*configpb.ModelConfig)
	c.mu.Lock()
	c.backends[m.Name()] = cfg.GetBackend()
	c.mu.Unlock()
	cfg.Input = []*configpb.ModelInput{{Name: "IN", DataType: configpb.DataType_TYPE_INT32, Dims: []int64{1}}}
	cfg.Output = []*configpb.ModelOutput{{Name: "OUT", DataType: configpb.DataType_TYPE_INT32, Dims: []int64{1}}}
	if err := m.SetConfig(cfg); err != nil {
		return nil, err
	}
	return c.Provider.LoadModel(m)
}

// TestModelDirectoryWithoutConfigLoads: as in Triton with auto-complete on
// (its default), a model directory without config.pbtxt loads: its backend
// comes from the model file in its first version directory, and the
// backend completes the rest; with --disable-auto-complete-config it fails
// for want of the file.
func TestModelDirectoryWithoutConfigLoads(t *testing.T) {
	t.Parallel()
	repo := t.TempDir()
	for model, file := range map[string]string{"pymodel": "model.py", "onnxmodel": "model.onnx", "torchmodel": "model.pt"} {
		if err := os.MkdirAll(filepath.Join(repo, model, "1"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(repo, model, "1", file), []byte("weights"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("auto-complete", func(t *testing.T) {
		p := &completing{Provider: coretest.NewProvider(), backends: map[string]string{}}
		srv := coretest.Serve(t, core.Options{Backends: p, ModelRepositories: []string{repo}})
		if !srv.Ready() {
			t.Fatalf("not every model loaded: %+v", srv.RepositoryIndex())
		}
		for model, backend := range map[string]string{"pymodel": "python", "onnxmodel": "onnxruntime", "torchmodel": "pytorch"} {
			if p.backends[model] != backend {
				t.Errorf("%s: backend %q, want %q", model, p.backends[model], backend)
			}
			m, err := srv.Model(model, 0)
			if err != nil {
				t.Fatal(err)
			}
			if cfg := m.Config(); cfg.GetName() != model || len(cfg.GetInput()) != 1 {
				t.Errorf("%s: configuration %v, want its name and what the backend completed", model, cfg)
			}
		}
	})
	t.Run("disabled", func(t *testing.T) {
		p := &completing{Provider: coretest.NewProvider(), backends: map[string]string{}}
		srv := coretest.Serve(t, core.Options{Backends: p, ModelRepositories: []string{repo}, DisableAutoCompleteConfig: true})
		for _, st := range srv.RepositoryIndex() {
			if st.Readiness == core.ModelReady || !strings.Contains(st.Reason, "config.pbtxt") {
				t.Errorf("%s: %v %q, want a failure naming config.pbtxt", st.Name, st.Readiness, st.Reason)
			}
		}
	})
}
