package core_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/coretest"
)

// TestPollRefusesHostileConfigFilesAndGoesOn: a config.pbtxt that is a
// named pipe, a link to /dev/zero, a huge sparse file or a file over the
// cap fails its model's load at once, with a reason naming the file,
// while the version loaded before serves on, a new model loads, and the
// restored configuration loads again; an ensemble whose step's
// configuration is a named pipe is refused without blocking either.
func TestPollRefusesHostileConfigFilesAndGoesOn(t *testing.T) {
	t.Parallel()
	const limit = 4 << 10
	p := coretest.NewProvider()
	repo := coretest.WriteRepository(t, coretest.ModelDir{Name: "m", Config: vectorConfig()}, coretest.ModelDir{Name: "victim", Config: vectorConfig()})
	srv := coretest.Serve(t, core.Options{Backends: p, ModelRepositories: []string{repo}, PollModelControl: true, RepositoryPollInterval: time.Hour,
		RepositoryFiles: core.RepositoryFileLimits{MaxConfigBytes: limit, MaxConfigBytesSetting: "--the-cap"}})
	config := filepath.Join(repo, "victim", core.ConfigFileName)
	replace := func(make func(path string) error) {
		t.Helper()
		if err := os.Remove(config); err != nil {
			t.Fatal(err)
		}
		if err := make(config); err != nil {
			t.Fatal(err)
		}
	}
	sparse := func(size int64) func(string) error {
		return func(path string) error {
			f, err := os.Create(path)
			if err != nil {
				return err
			}
			defer f.Close()
			return f.Truncate(size)
		}
	}
	tests := []struct {
		name string
		make func(path string) error
		want []string
	}{
		{"a named pipe", func(path string) error { return syscall.Mkfifo(path, 0o644) }, []string{"a named pipe (FIFO)", "not a regular file"}},
		{"a link to /dev/zero", func(path string) error { return os.Symlink("/dev/zero", path) }, []string{"a character device", "/dev/zero"}},
		{"a huge sparse file", sparse(1 << 40), []string{"1099511627776 bytes", "--the-cap"}},
		{"a file over the cap", sparse(limit + 1), []string{fmt.Sprintf("%d bytes", limit+1), "--the-cap"}},
	}
	for i, tt := range tests {
		replace(tt.make)
		added := fmt.Sprintf("new%d", i)
		coretest.WriteModel(t, repo, coretest.ModelDir{Name: added, Config: vectorConfig()})
		poll(t, srv)
		st := index(srv)["victim:1"]
		if st.Readiness != core.ModelReady {
			t.Errorf("%s: victim is %v, want the version loaded before serving", tt.name, st.Readiness)
		}
		for _, want := range append([]string{config}, tt.want...) {
			if !strings.Contains(st.Reason, want) {
				t.Errorf("%s: reason %q does not mention %q", tt.name, st.Reason, want)
			}
		}
		t.Logf("%s: %s", tt.name, st.Reason)
		coretest.Succeeded(t, coretest.Infer(t, srv, coretest.Request(added, "n", coretest.Int32Input("INPUT0", []int64{1}, 1))))
		coretest.Succeeded(t, coretest.Infer(t, srv, coretest.Request("victim", "v", coretest.Int32Input("INPUT0", []int64{1}, 1))))
	}

	replace(func(path string) error { return os.WriteFile(path, []byte(vectorConfig()), 0o644) })
	poll(t, srv)
	if st := index(srv)["victim:1"]; st.Readiness != core.ModelReady || st.Reason != "" {
		t.Errorf("the restored configuration: %v %q, want it loaded", st.Readiness, st.Reason)
	}

	// A new model whose configuration is a pipe from the start, and an
	// ensemble that runs it: each fails alone, and nothing blocks.
	coretest.WriteModel(t, repo, coretest.ModelDir{Name: "piped", Config: "placeholder"})
	piped := filepath.Join(repo, "piped", core.ConfigFileName)
	if err := os.Remove(piped); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(piped, 0o644); err != nil {
		t.Fatal(err)
	}
	coretest.WriteModel(t, repo, coretest.ModelDir{Name: "ens", Config: `platform: "ensemble"
max_batch_size: 0
input [ { name: "IN" data_type: TYPE_INT32 dims: [ -1 ] } ]
output [ { name: "OUT" data_type: TYPE_INT32 dims: [ -1 ] } ]
ensemble_scheduling { step [ { model_name: "piped" model_version: -1
  input_map { key: "INPUT0" value: "IN" } output_map { key: "OUTPUT0" value: "OUT" } } ] }`})
	poll(t, srv)
	idx := index(srv)
	for _, st := range srv.RepositoryIndex() {
		if st.Name == "piped" && (st.Readiness == core.ModelReady || !strings.Contains(st.Reason, "named pipe")) {
			t.Errorf("piped: %v %q, want it unavailable for its named pipe", st.Readiness, st.Reason)
		}
		if st.Name == "ens" && st.Readiness == core.ModelReady {
			t.Errorf("the ensemble of a model that did not load is ready")
		}
	}
	if idx["m:1"].Readiness != core.ModelReady {
		t.Errorf("m: %+v", idx["m:1"])
	}
}

// TestModelsPastMaxModelsAreRefused: past MaxModels a first load is
// refused (UNAVAILABLE, naming the setting), from the repository or from
// files (which are then not written); a reload of a loaded model is not;
// an unload makes room.
func TestModelsPastMaxModelsAreRefused(t *testing.T) {
	t.Parallel()
	files := filepath.Join(t.TempDir(), "uploads")
	p := coretest.NewProvider()
	srv := coretest.Serve(t, core.Options{Backends: p, ExplicitModelControl: true, MaxModels: 2, MaxModelsSetting: "--the-count",
		LoadFiles: core.LoadFilesLimits{Directory: files}},
		coretest.ModelDir{Name: "a", Config: vectorConfig()}, coretest.ModelDir{Name: "b", Config: vectorConfig()}, coretest.ModelDir{Name: "c", Config: vectorConfig()})
	for _, name := range []string{"a", "b"} {
		if err := loadWith(t, srv, name, core.LoadOptions{}); err != nil {
			t.Fatalf("load %s: %v", name, err)
		}
	}
	err := loadWith(t, srv, "c", core.LoadOptions{})
	coretest.WantError(t, "a third model", err, core.CodeUnavailable, "load failed for model 'c'", "2 models are loaded or loading", "--the-count", "unload one first")
	upload := core.LoadOptions{Config: []byte(`{"backend":"go","input":[{"name":"INPUT0","data_type":"TYPE_INT32","dims":[-1]}],
		"output":[{"name":"OUTPUT0","data_type":"TYPE_INT32","dims":[-1]}]}`), Files: map[string][]byte{"1/weights.bin": []byte("w")}}
	err = loadWith(t, srv, "sent", upload)
	coretest.WantError(t, "a third model from files", err, core.CodeUnavailable, "--the-count")
	if left, _ := filepath.Glob(filepath.Join(files, "server-*", "model-*")); len(left) != 0 {
		t.Errorf("a refused load request wrote its files: %v", left)
	}
	if err := loadWith(t, srv, "a", core.LoadOptions{}); err != nil {
		t.Errorf("a reload at the bound: %v", err)
	}
	for _, st := range srv.RepositoryIndex() {
		if st.Name == "c" && !strings.Contains(st.Reason, "--the-count") {
			t.Errorf("c in the index: %+v, want the refusal as its reason", st)
		}
	}
	if err := srv.UnloadModel(t.Context(), "b"); err != nil {
		t.Fatal(err)
	}
	if err := loadWith(t, srv, "sent", upload); err != nil {
		t.Errorf("after an unload made room: %v", err)
	}
	coretest.WantError(t, "c, with a model sent in b's place", loadWith(t, srv, "c", core.LoadOptions{}), core.CodeUnavailable, "--the-count")
	for _, name := range []string{"a", "sent"} { // what loadWith loaded goes before its tracking ends
		if err := srv.UnloadModel(t.Context(), name); err != nil {
			t.Fatal(err)
		}
	}
}

// TestConfigsWithMoreDimensionsThanARequestCarriesDoNotLoad: an input,
// output, reshape or sequence state of more than MaxTensorDims
// dimensions, counting the batch dimension, fails its model's load with
// an error naming the tensor and the limit; 64 dimensions load.
func TestConfigsWithMoreDimensionsThanARequestCarriesDoNotLoad(t *testing.T) {
	t.Parallel()
	dims := func(n int) string { return "[ " + strings.TrimSuffix(strings.Repeat("1, ", n), ", ") + " ]" }
	model := func(maxBatch int, in, out, extra string) string {
		return fmt.Sprintf(`backend: "go"
max_batch_size: %d
input [ { name: "INPUT0" data_type: TYPE_INT32 dims: %s } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: %s } ]
%s`, maxBatch, in, out, extra)
	}
	max := core.MaxTensorDims
	tests := []struct {
		name   string
		config string
		want   string // "" when it loads
	}{
		{"64 dims", model(0, dims(max), dims(max), ""), ""},
		{"63 dims and a batch", model(4, dims(max-1), dims(max-1), ""), ""},
		{"65 input dims", model(0, dims(max+1), dims(1), ""), `input "INPUT0" has 65 dimensions`},
		{"64 input dims and a batch", model(4, dims(max), dims(1), ""), `input "INPUT0" has 65 dimensions, the batch dimension included`},
		{"65 output dims", model(0, dims(1), dims(max+1), ""), `output "OUTPUT0" has 65 dimensions`},
		{"a reshape of 65 dims", strings.Replace(model(0, "[ 1 ]", dims(1), ""), `dims: [ 1 ] }`, `dims: [ 1 ] reshape: { shape: `+dims(max+1)+` } }`, 1),
			`the reshape of input "INPUT0" has 65 dimensions`},
		{"a state of 65 dims", model(0, "[ 1 ]", "[ 1 ]", `sequence_batching { state [ { input_name: "STATE_IN" output_name: "STATE_OUT" data_type: TYPE_INT32 dims: `+dims(max+1)+` } ] }`),
			`sequence state "STATE_IN" has 65 dimensions`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := coretest.Serve(t, core.Options{Backends: coretest.NewProvider()}, coretest.ModelDir{Name: "m", Config: tt.config})
			st := index(srv)["m:1"]
			if tt.want == "" {
				if st.Readiness != core.ModelReady {
					t.Errorf("m: %v %q, want it loaded", st.Readiness, st.Reason)
				}
				return
			}
			for _, want := range []string{`model "m"`, tt.want, fmt.Sprintf("more than the %d a request's tensor may have", max)} {
				if st.Readiness == core.ModelReady || !strings.Contains(st.Reason, want) {
					t.Errorf("m: %v %q, want it unavailable, saying %q", st.Readiness, st.Reason, want)
				}
			}
		})
	}
}
