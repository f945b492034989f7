package core_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/coretest"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// filesDirs returns the directories the server made for the files of load
// requests, under its own directory in the test's TMPDIR.
func filesDirs(t *testing.T) []string {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join(core.DefaultLoadFilesDirectory(), "server-*", "model-*"))
	if err != nil {
		t.Fatal(err)
	}
	return dirs
}

func explicitServer(t *testing.T, p *coretest.Provider, models ...coretest.ModelDir) *core.Server {
	t.Helper()
	t.Setenv("TMPDIR", t.TempDir())
	return coretest.Serve(t, core.Options{Backends: p, ExplicitModelControl: true}, models...)
}

func loadWith(t *testing.T, srv *core.Server, name string, opts core.LoadOptions) (err error) {
	t.Helper()
	coretest.Track(t, func() { err = srv.LoadModelWith(name, opts) })
	return err
}

// TestLoadWithConfigOverrideServesTheOverride: a load request's JSON
// configuration replaces the repository's config.pbtxt; requests are
// validated against it; a plain load goes back to the repository's.
func TestLoadWithConfigOverrideServesTheOverride(t *testing.T) {
	srv := explicitServer(t, coretest.NewProvider(), coretest.ModelDir{Name: "m", Config: vectorConfig()})
	override := `{"backend":"go","max_batch_size":0,
		"input":[{"name":"INPUT0","data_type":"TYPE_INT32","dims":[2]}],
		"output":[{"name":"OUTPUT0","data_type":"TYPE_INT32","dims":[2]}],
		"parameters":{"origin":{"string_value":"override"}}}`
	if err := loadWith(t, srv, "m", core.LoadOptions{Config: []byte(override)}); err != nil {
		t.Fatalf("LoadModelWith(config): %v", err)
	}
	m, err := srv.Model("m", 0)
	if err != nil {
		t.Fatal(err)
	}
	if cfg := m.Config(); !slices.Equal(cfg.GetInput()[0].GetDims(), []int64{2}) || cfg.GetParameters()["origin"].GetStringValue() != "override" {
		t.Errorf("config after the override: %v", cfg)
	}
	wantExactError(t, "3 values", srv.Infer(t.Context(), vector("x", 1, 2, 3), coretest.NewCollector().Receive), core.CodeInvalidArg,
		"[request id: x] unexpected shape for input 'INPUT0' for model 'm'. Expected [2], got [3]. ")
	coretest.Succeeded(t, coretest.Infer(t, srv, vector("y", 1, 2)))

	if err := loadWith(t, srv, "m", core.LoadOptions{}); err != nil {
		t.Fatalf("LoadModel: %v", err)
	}
	coretest.Succeeded(t, coretest.Infer(t, srv, vector("z", 1, 2, 3)))
	if err := srv.UnloadModel(t.Context(), "m"); err != nil {
		t.Fatal(err)
	}
}

// TestLoadWithFilesLoadsFromATemporaryDirectory: a model no repository
// holds loads from the files of the request, written with its
// configuration into a new directory that is removed on reload, unload and
// Stop.
func TestLoadWithFilesLoadsFromATemporaryDirectory(t *testing.T) {
	srv := explicitServer(t, coretest.NewProvider())
	cfg := []byte(`{"backend":"go","input":[{"name":"INPUT0","data_type":"TYPE_INT32","dims":[-1]}],
		"output":[{"name":"OUTPUT0","data_type":"TYPE_INT32","dims":[-1]}]}`)
	files := map[string][]byte{"1/weights.bin": []byte("one"), "2/weights.bin": []byte("two"), "/2/abs/data": []byte("abs")}
	if err := loadWith(t, srv, "m", core.LoadOptions{Config: cfg, Files: files}); err != nil {
		t.Fatalf("LoadModelWith(files): %v", err)
	}
	m, err := srv.Model("m", 0)
	if err != nil {
		t.Fatal(err)
	}
	dirs := filesDirs(t)
	if m.Version() != 2 || len(dirs) != 1 || m.Path() != dirs[0] {
		t.Fatalf("loaded version %d from %s; the request's directories: %v", m.Version(), m.Path(), dirs)
	}
	for name, want := range map[string]string{"2/weights.bin": "two", "2/abs/data": "abs"} {
		if got, err := os.ReadFile(filepath.Join(m.Path(), name)); err != nil || string(got) != want {
			t.Errorf("%s: %q, %v", name, got, err)
		}
	}
	if text, err := os.ReadFile(filepath.Join(m.Path(), core.ConfigFileName)); err != nil || !strings.Contains(string(text), `"INPUT0"`) {
		t.Errorf("config.pbtxt: %q, %v", text, err)
	}
	coretest.Succeeded(t, coretest.Infer(t, srv, vector("r", 1, 2, 3)))

	if err := loadWith(t, srv, "m", core.LoadOptions{Config: cfg, Files: files}); err != nil {
		t.Fatalf("reload: %v", err)
	}
	if now := filesDirs(t); len(now) != 1 || now[0] == dirs[0] {
		t.Errorf("after a reload the request directories are %v (the first was %s)", now, dirs[0])
	}
	if err := srv.UnloadModel(t.Context(), "m"); err != nil {
		t.Fatal(err)
	}
	if now := filesDirs(t); len(now) != 0 {
		t.Errorf("after the unload the request directories are %v", now)
	}
	wantExactError(t, "infer after unload", srv.Infer(t.Context(), vector("u", 1), coretest.NewCollector().Receive),
		core.CodeNotFound, "Request for unknown model: 'm' is not found")

	if err := loadWith(t, srv, "m", core.LoadOptions{Config: cfg, Files: files}); err != nil {
		t.Fatalf("load again: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Patience)
	defer cancel()
	if err := srv.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if now := filesDirs(t); len(now) != 0 {
		t.Errorf("after Stop the request directories are %v", now)
	}
}

// TestLoadWithRefusesWhatItCannotUse: Triton's errors for a load request
// it cannot use, with the reason after them; nothing is left on disk and
// the model loaded before still serves.
func TestLoadWithRefusesWhatItCannotUse(t *testing.T) {
	srv := explicitServer(t, coretest.NewProvider(), coretest.ModelDir{Name: "m", Config: vectorConfig()})
	if err := loadWith(t, srv, "m", core.LoadOptions{}); err != nil {
		t.Fatal(err)
	}
	cfg := []byte(`{"backend":"go","input":[{"name":"INPUT0","data_type":"TYPE_INT32","dims":[-1]}],
		"output":[{"name":"OUTPUT0","data_type":"TYPE_INT32","dims":[-1]}]}`)
	const poll = "failed to load 'm', failed to poll from model repository: "
	for _, tc := range []struct {
		name  string
		opts  core.LoadOptions
		code  core.Code
		parts []string
	}{
		{"files without a configuration", core.LoadOptions{Files: map[string][]byte{"1/x": nil}}, core.CodeInternal,
			[]string{poll + "Load parameter 'config' must be specified for model file override"}},
		{"a configuration that is not JSON", core.LoadOptions{Config: []byte("{")}, core.CodeInternal,
			[]string{poll + "Invalid config override: "}},
		{"an unknown field", core.LoadOptions{Config: []byte(`{"nope": 1}`)}, core.CodeInternal,
			[]string{poll + "Invalid config override: ", "nope"}},
		{"a file outside the model directory", core.LoadOptions{Config: cfg, Files: map[string][]byte{"1/../../x": nil}}, core.CodeInternal,
			[]string{poll + "Invalid file parameter 'file:1/../../x' with normalized path '", "' must stay within model directory."}},
		{"a file where a directory goes", core.LoadOptions{Config: cfg, Files: map[string][]byte{"1/a": nil, "1/a/b": nil}}, core.CodeInternal,
			[]string{poll + "Invalid file parameter 'file:1/a/b', directory has been created as a file"}},
		{"another model's name", core.LoadOptions{Config: []byte(`{"name":"other","backend":"go"}`)}, core.CodeInvalidArg,
			[]string{"load failed for model 'm': ", `"other"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := loadWith(t, srv, "m", tc.opts)
			coretest.WantError(t, "LoadModelWith", err, tc.code, tc.parts...)
			if !strings.HasPrefix(err.Error(), tc.parts[0]) {
				t.Errorf("error %q does not start with Triton's text %q", err, tc.parts[0])
			}
			if dirs := filesDirs(t); len(dirs) != 0 {
				t.Errorf("left behind: %v", dirs)
			}
		})
	}
	// The last failed load replaced the model: Triton keeps serving the
	// version loaded before a failed reload; this server reports the
	// failure and serves the newest version that loaded, here none.
	coretest.WantError(t, "infer after the failed loads", srv.Infer(t.Context(), vector("r", 1), coretest.NewCollector().Receive),
		core.CodeNotFound, "Request for unknown model: 'm' has no available versions")
}

// filesServer is explicitServer with limits on the files of load
// requests.
func filesServer(t *testing.T, p *coretest.Provider, lim core.LoadFilesLimits) *core.Server {
	t.Helper()
	t.Setenv("TMPDIR", t.TempDir())
	return coretest.Serve(t, core.Options{Backends: p, ExplicitModelControl: true, LoadFiles: lim})
}

// TestLoadWithFilesRefusesSharedLibraries: a file of a load request that
// the loader or a backend could open as a shared library (ELF contents
// under any name, the backend library's name, the runtime's, a .so name)
// is refused with an error naming the file and the setting that allows
// it; nothing is written and the backend is not asked to load. With
// AllowLibraries they load.
func TestLoadWithFilesRefusesSharedLibraries(t *testing.T) {
	elf := append([]byte("\x7fELF\x02\x01\x01"), make([]byte, 57)...)
	config := func(runtime string) []byte {
		return []byte(`{"backend":"go","runtime":"` + runtime + `","input":[{"name":"INPUT0","data_type":"TYPE_INT32","dims":[-1]}],
			"output":[{"name":"OUTPUT0","data_type":"TYPE_INT32","dims":[-1]}]}`)
	}
	cases := []struct {
		name    string
		runtime string
		files   map[string][]byte
		why     string
	}{
		{"an ELF object under any name", "", map[string][]byte{"1/weights.bin": []byte("w"), "1/model.bin": elf}, "'file:1/model.bin' is an ELF object"},
		{"the backend library's name", "", map[string][]byte{"1/libtriton_go.so": []byte("not ELF")}, "'file:1/libtriton_go.so' is named as the model's backend library"},
		{"the runtime's name", "model.plan", map[string][]byte{"1/model.plan": []byte("not ELF")}, "'file:1/model.plan' is named as the model's backend library"},
		{"a versioned library name", "", map[string][]byte{"1/libplugin.so.2": []byte("not ELF")}, "'file:1/libplugin.so.2' is named as a shared library"},
	}
	t.Run("refused", func(t *testing.T) {
		p := coretest.NewProvider()
		srv := filesServer(t, p, core.LoadFilesLimits{AllowLibrariesSetting: "--allow-model-file-libraries"})
		for _, tc := range cases {
			err := loadWith(t, srv, "m", core.LoadOptions{Config: config(tc.runtime), Files: tc.files})
			coretest.WantError(t, tc.name, err, core.CodeInvalidArg, "load model 'm'", tc.why, "never loaded as code", "--allow-model-file-libraries")
		}
		if dirs := filesDirs(t); len(dirs) != 0 {
			t.Errorf("left behind: %v", dirs)
		}
		if events := p.Events(); len(events) != 0 {
			t.Errorf("the backend was asked to %v", events)
		}
	})
	t.Run("allowed", func(t *testing.T) {
		srv := filesServer(t, coretest.NewProvider(), core.LoadFilesLimits{AllowLibraries: true})
		for _, tc := range cases {
			if err := loadWith(t, srv, "m", core.LoadOptions{Config: config(tc.runtime), Files: tc.files}); err != nil {
				t.Errorf("%s, allowed: %v", tc.name, err)
			}
		}
		if err := srv.UnloadModel(t.Context(), "m"); err != nil {
			t.Fatal(err)
		}
	})
}

// TestLoadFilesAreBoundedOnDisk: the files the loaded models' load
// requests sent may take LoadFiles.MaxBytes together; a load past it is
// refused (CodeUnavailable, naming the setting) and writes nothing; an
// unload, or a load that fails, gives its bytes back.
func TestLoadFilesAreBoundedOnDisk(t *testing.T) {
	srv := filesServer(t, coretest.NewProvider(), core.LoadFilesLimits{MaxBytes: 100, MaxBytesSetting: "--model-files-max-size"})
	cfg := []byte(`{"backend":"go","input":[{"name":"INPUT0","data_type":"TYPE_INT32","dims":[-1]}],
		"output":[{"name":"OUTPUT0","data_type":"TYPE_INT32","dims":[-1]}]}`)
	files := func(n int) map[string][]byte { return map[string][]byte{"1/weights": make([]byte, n)} }
	if err := loadWith(t, srv, "a", core.LoadOptions{Config: cfg, Files: files(60)}); err != nil {
		t.Fatal(err)
	}
	err := loadWith(t, srv, "b", core.LoadOptions{Config: cfg, Files: files(60)})
	coretest.WantError(t, "60 bytes more", err, core.CodeUnavailable, "load model 'b'", "60 bytes", "60 of the 100 bytes", "--model-files-max-size")
	if dirs := filesDirs(t); len(dirs) != 1 {
		t.Errorf("directories of load requests: %v, want a's alone", dirs)
	}
	if err := srv.UnloadModel(t.Context(), "a"); err != nil {
		t.Fatal(err)
	}
	if err := loadWith(t, srv, "b", core.LoadOptions{Config: cfg, Files: files(60)}); err != nil {
		t.Fatalf("load b after a was unloaded: %v", err)
	}
	bad := files(30)
	bad["../outside"] = nil
	if err := loadWith(t, srv, "c", core.LoadOptions{Config: cfg, Files: bad}); err == nil {
		t.Fatal("a load with a file outside the model directory succeeded")
	}
	if err := loadWith(t, srv, "d", core.LoadOptions{Config: cfg, Files: files(40)}); err != nil {
		t.Fatalf("load d with the 40 bytes left: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Patience)
	defer cancel()
	if err := srv.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if dirs := filesDirs(t); len(dirs) != 0 {
		t.Errorf("after Stop: %v", dirs)
	}
}

// TestModelLookupErrorsAreTritons: the errors of Server.Model for a version
// the server has a record of but cannot serve, and one it has none of.
func TestModelLookupErrorsAreTritons(t *testing.T) {
	srv := explicitServer(t, coretest.NewProvider(), coretest.ModelDir{Name: "m", Config: vectorConfig()})
	if err := loadWith(t, srv, "m", core.LoadOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := srv.UnloadModel(t.Context(), "m"); err != nil {
		t.Fatal(err)
	}
	_, err := srv.Model("m", 1)
	wantExactError(t, "Model(m, 1)", err, core.CodeUnavailable, "Request for unknown model: 'm' version 1 is not at ready state (UNAVAILABLE: unloaded)")
	_, err = srv.Model("m", 3)
	wantExactError(t, "Model(m, 3)", err, core.CodeNotFound, "Request for unknown model: 'm' version 3 is not found")
	_, err = srv.Model("m", 0)
	wantExactError(t, "Model(m, 0)", err, core.CodeNotFound, "Request for unknown model: 'm' has no available versions (no version is loaded)")
}

// TestFinishedRunsOnceAfterTheRequestIsDone: Submission.Finished runs
// once, after the final response and the release; a refused request never
// runs it.
func TestFinishedRunsOnceAfterTheRequestIsDone(t *testing.T) {
	t.Parallel()
	srv, _ := serveModel(t, vectorConfig(), coretest.Echo())
	finished := make(chan int, 2)
	req := vector("r", 1, 2)
	var calls atomic.Int32
	reply := coretest.NewCollector()
	req.Finished = func() {
		calls.Add(1)
		finished <- len(reply.Snapshot().Responses)
	}
	if err := srv.Infer(t.Context(), req, reply.Receive); err != nil {
		t.Fatal(err)
	}
	if n := <-finished; n != 1 {
		t.Errorf("Finished ran with %d response(s) delivered, want 1", n)
	}
	reply.Wait(t)
	bad := vector("bad")
	bad.Inputs[0].DataType = core.TypeFP32
	bad.Finished = func() { finished <- -1 }
	if err := srv.Infer(t.Context(), bad, coretest.NewCollector().Receive); err == nil {
		t.Fatal("a request of the wrong data type was accepted")
	}
	testenv.Eventually(func() bool { return srv.LiveRequests() == 0 })
	if len(finished) != 0 || calls.Load() != 1 {
		t.Errorf("Finished ran %d time(s) for the good request; %d more call(s)", calls.Load(), len(finished))
	}
}
