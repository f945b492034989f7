package core_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/coretest"
)

// TestModelConfigNamePicksTheAlternativeConfiguration: with
// Options.ModelConfigName (--model-config-name) a model that has
// configs/<name>.pbtxt loads from it, and one that has not loads from its
// config.pbtxt, as Triton's GetModelConfigFullPath picks.
func TestModelConfigNamePicksTheAlternativeConfiguration(t *testing.T) {
	t.Parallel()
	twoInstances := coretest.VectorConfig(`instance_group [ { count: 2 kind: KIND_CPU } ]`)
	for _, tc := range []struct {
		name      string
		setting   string
		files     map[string][]byte
		instances int
	}{
		{"no name: config.pbtxt", "", map[string][]byte{"configs/h100.pbtxt": []byte(twoInstances)}, 1},
		{"the named alternative", "h100", map[string][]byte{"configs/h100.pbtxt": []byte(twoInstances)}, 2},
		{"another name: config.pbtxt", "a100", map[string][]byte{"configs/h100.pbtxt": []byte(twoInstances)}, 1},
		{"no configs directory", "h100", nil, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := coretest.Serve(t, core.Options{Backends: coretest.NewProvider(), ModelConfigName: tc.setting},
				coretest.ModelDir{Name: "m", Config: coretest.VectorConfig(""), Files: tc.files})
			if !srv.Ready() {
				t.Fatalf("not ready: %+v", srv.RepositoryIndex())
			}
			m, err := srv.Model("m", 0)
			if err != nil {
				t.Fatal(err)
			}
			if got := m.Config().GetInstanceGroup()[0].GetCount(); int(got) != tc.instances {
				t.Errorf("--model-config-name %q: %d instances, want %d", tc.setting, got, tc.instances)
			}
		})
	}
}

// TestModelConfigNameErrorsNameTheFileRead: a bad alternative
// configuration fails its model with the path of the file read.
func TestModelConfigNameErrorsNameTheFileRead(t *testing.T) {
	t.Parallel()
	srv := coretest.Serve(t, core.Options{Backends: coretest.NewProvider(), ModelConfigName: "h100"},
		coretest.ModelDir{Name: "m", Config: coretest.VectorConfig(""), Files: map[string][]byte{"configs/h100.pbtxt": []byte("max_batch_size: -3\n" + coretest.VectorConfig(""))}})
	if srv.Ready() {
		t.Fatal("ready with a bad configs/h100.pbtxt")
	}
	idx := srv.RepositoryIndex()
	if len(idx) != 1 || !strings.Contains(idx[0].Reason, "configs/h100.pbtxt") {
		t.Errorf("index %+v: want the reason to name configs/h100.pbtxt", idx)
	}
}

// flakyProvider fails the first fails loads of every model, then loads as
// its Provider does.
type flakyProvider struct {
	*coretest.Provider
	mu    sync.Mutex
	fails int
	loads int
}

func (p *flakyProvider) LoadModel(m *core.Model) (core.BackendModel, error) {
	p.mu.Lock()
	p.loads++
	fail := p.loads <= p.fails
	p.mu.Unlock()
	if fail {
		return nil, core.Errorf(core.CodeInternal, "flaky load %d", p.loads)
	}
	return p.Provider.LoadModel(m)
}

// TestLoadRetriesTryAFailedVersionAgain: with Options.LoadRetries
// (--model-load-retry-count) n, a version whose load fails is tried up to n
// more times; it loads if one of them succeeds, and fails with the last
// error otherwise.
func TestLoadRetriesTryAFailedVersionAgain(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name           string
		retries, fails int
		loads          int
		ready          bool
	}{
		{"no retries, no failure", 0, 0, 1, true},
		{"no retries, one failure", 0, 1, 1, false},
		{"two retries, one failure", 2, 1, 2, true},
		{"two retries, two failures", 2, 2, 3, true},
		{"two retries, three failures", 2, 3, 3, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := &flakyProvider{Provider: coretest.NewProvider(), fails: tc.fails}
			srv := coretest.Serve(t, core.Options{Backends: p, LoadRetries: tc.retries}, coretest.ModelDir{Name: "m", Config: coretest.VectorConfig("")})
			if srv.Ready() != tc.ready {
				t.Errorf("ready %v, want %v: %+v", srv.Ready(), tc.ready, srv.RepositoryIndex())
			}
			p.mu.Lock()
			loads := p.loads
			p.mu.Unlock()
			if loads != tc.loads {
				t.Errorf("%d loads, want %d", loads, tc.loads)
			}
			if !tc.ready {
				idx := srv.RepositoryIndex()
				if len(idx) != 1 || !strings.Contains(idx[0].Reason, "flaky load") {
					t.Errorf("index %+v: want the last failure as the reason", idx)
				}
			}
		})
	}
}
