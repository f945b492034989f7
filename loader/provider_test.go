package loader_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/scheduling"
	"github.com/tritonhost/tritonhost/loader"
)

func TestLibraryFileIsRuntimeOrTritonsName(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ backend, runtime, want string }{
		{"square", "", "libtriton_square.so"},
		{"square", "libcustom.so", "libcustom.so"},
	} {
		if got := loader.LibraryFile(tc.backend, tc.runtime); got != tc.want {
			t.Errorf("LibraryFile(%q, %q) = %q, want %q", tc.backend, tc.runtime, got, tc.want)
		}
	}
}

func TestLibraryIsFoundInTritonsSearchOrder(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		files   []string // relative to the model directory
		backend bool     // put the library in <backend-directory>/fake/ too
		runtime string
		want    string // the file opened, "" when the model must not load
		reason  string // what the load error says then
	}{
		{name: "version directory first", files: []string{"1/libtriton_fake.so", "libtriton_fake.so"}, backend: true, want: "libtriton_fake.so"},
		{name: "model directory next", files: []string{"libtriton_fake.so"}, backend: true, want: "libtriton_fake.so"},
		{name: "backend directory last", backend: true, want: "libtriton_fake.so"},
		{name: "runtime names the file", files: []string{"libother.so"}, runtime: "libother.so", want: "libother.so"},
		{name: "nowhere", reason: "libtriton_fake.so not found"},
		{name: "runtime with a path", files: []string{"libother.so"}, runtime: "sub/libother.so", reason: "must be a file name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			extra := ""
			if tc.runtime != "" {
				extra = "runtime: \"" + tc.runtime + "\"\n"
			}
			repo := repository(t, model{name: "m", backend: "fake", extra: extra, files: tc.files})
			backends := ""
			if tc.backend {
				backends = backendDirectory(t, "fake")
			}
			o := newFakeOpener()
			srv := startServer(t, repo, o, func(opts *loader.Options) { opts.BackendDirectory = backends })
			calls := o.recorded()
			if tc.want == "" {
				if srv.Ready() || len(calls) > 0 {
					t.Fatalf("the model loaded (calls %v)", calls)
				}
				if reason := srv.RepositoryIndex()[0].Reason; !strings.Contains(reason, tc.reason) {
					t.Errorf("reason %q does not say %q", reason, tc.reason)
				}
				return
			}
			if len(calls) == 0 || calls[0] != "fake: Open "+tc.want {
				t.Fatalf("calls %v, want to open %s first", calls, tc.want)
			}
		})
	}
}

// TestBackendAndRuntimeAreNamesNotPaths: a backend or runtime that is a
// path is refused before any library is opened, even where the path leads
// to a library file (here the backend ".." reaches the backend directory's
// parent).
func TestBackendAndRuntimeAreNamesNotPaths(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, backend, runtime, reason string }{
		{"backend ..", "..", "", `backend ".." must be a name`},
		{"backend with a slash", "a/b", "", `backend "a/b" must be a name`},
		{"runtime ..", "fake", "..", `runtime ".." must be a file name`},
		{"runtime .", "fake", ".", `runtime "." must be a file name`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			parent := t.TempDir()
			backends := filepath.Join(parent, "backends")
			if err := os.MkdirAll(backends, 0o755); err != nil {
				t.Fatal(err)
			}
			if lib := loader.LibraryFile(tc.backend, ""); !strings.Contains(lib, "/") {
				if err := os.WriteFile(filepath.Join(parent, lib), nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			extra := ""
			if tc.runtime != "" {
				extra = "runtime: \"" + tc.runtime + "\"\n"
			}
			o := newFakeOpener()
			srv := startServer(t, repository(t, model{name: "m", backend: tc.backend, extra: extra}), o,
				func(opts *loader.Options) { opts.BackendDirectory = backends })
			if calls := o.recorded(); srv.Ready() || len(calls) > 0 {
				t.Fatalf("the model loaded (calls %v)", calls)
			}
			if reason := srv.RepositoryIndex()[0].Reason; !strings.Contains(reason, tc.reason) {
				t.Errorf("reason %q does not say %q", reason, tc.reason)
			}
		})
	}
}

func TestLibraryLifecycleRunsInOrderAndIsShared(t *testing.T) {
	t.Parallel()
	// Both models find the same file, in the backend directory.
	repo := repository(t, model{name: "a", backend: "fake"}, model{name: "b", backend: "fake"})
	backends := backendDirectory(t, "fake")
	o := newFakeOpener()
	srv := startServer(t, repo, o, func(opts *loader.Options) { opts.BackendDirectory = backends })
	if !srv.Ready() {
		t.Fatalf("models did not load: %+v", srv.RepositoryIndex())
	}
	if err := srv.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	calls := o.recorded()
	count := func(call string) int {
		n := 0
		for _, c := range calls {
			if strings.Fields(strings.TrimPrefix(c, "fake: "))[0] == call {
				n++
			}
		}
		return n
	}
	for call, want := range map[string]int{"Open": 1, "Initialize": 1, "Attributes": 1, "NewModel": 2,
		"ModelInitialize": 2, "NewInstance": 2, "InstanceInitialize": 2, "InstanceFinalize": 2,
		"InstanceRetire": 2, "ModelFinalize": 2, "ModelRetire": 2, "Finalize": 1, "Close": 1} {
		if got := count(call); got != want {
			t.Errorf("%s called %d times, want %d: %v", call, got, want, calls)
		}
	}
	order := []string{"fake: Open libtriton_fake.so", "fake: Initialize", "fake: Attributes"}
	if !slices.Equal(calls[:3], order) {
		t.Errorf("first calls %v, want %v", calls[:3], order)
	}
	if tail := calls[len(calls)-2:]; !slices.Equal(tail, []string{"fake: Finalize", "fake: Close"}) {
		t.Errorf("last calls %v, want Finalize then Close", tail)
	}
	// Per model: instances initialize after the model, finalize before it,
	// and each is retired right after its finalization.
	for _, m := range []string{"a/1", "b/1"} {
		idx := func(c string) int { return slices.Index(calls, "fake: "+c) }
		inst := strings.TrimSuffix(m, "/1") + "_0"
		seq := []int{idx("NewModel " + m + " auto=true"), idx("ModelInitialize " + m), idx("InstanceInitialize " + inst),
			idx("InstanceFinalize " + inst), idx("InstanceRetire " + inst), idx("ModelFinalize " + m), idx("ModelRetire " + m)}
		if slices.Contains(seq, -1) || !slices.IsSorted(seq) {
			t.Errorf("model %s: calls out of order (positions %v): %v", m, seq, calls)
		}
	}
}

func TestFailuresCloseWhatWasOpened(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		fail   string   // "<call>" of the fake backend that fails
		want   []string // the calls, in order
		reason string   // what the model's load error says
	}{
		{"Open", []string{"Open"}, "load backend library"},
		// A failed initialize is followed by its finalize, as in Triton.
		{"Initialize", []string{"Open", "Initialize", "Finalize", "Close"}, "TRITONBACKEND_Initialize failed"},
		{"Attributes", []string{"Open", "Initialize", "Attributes", "Finalize", "Close"}, "TRITONBACKEND_GetBackendAttribute failed"},
		{"ModelInitialize", []string{"Open", "Initialize", "Attributes", "NewModel", "ModelInitialize", "ModelFinalize", "ModelRetire", "Finalize", "Close"}, "TRITONBACKEND_ModelInitialize failed"},
		{"InstanceInitialize", []string{"Open", "Initialize", "Attributes", "NewModel", "ModelInitialize", "NewInstance",
			"InstanceInitialize", "InstanceFinalize", "InstanceRetire", "ModelFinalize", "ModelRetire", "Finalize", "Close"}, "TRITONBACKEND_ModelInstanceInitialize failed"},
	} {
		t.Run(tc.fail, func(t *testing.T) {
			t.Parallel()
			repo := repository(t, model{name: "m", backend: "fake", files: []string{"libtriton_fake.so"}})
			o := newFakeOpener()
			o.fail["fake."+tc.fail] = errFake
			srv := startServer(t, repo, o)
			if srv.Ready() {
				t.Fatal("the model loaded")
			}
			var got []string
			for _, c := range o.recorded() {
				got = append(got, strings.Fields(strings.TrimPrefix(c, "fake: "))[0])
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("calls %v, want %v", got, tc.want)
			}
			reason := srv.RepositoryIndex()[0].Reason
			for _, want := range []string{tc.reason, "the fake says no"} {
				if !strings.Contains(reason, want) {
					t.Errorf("reason %q does not say %q", reason, want)
				}
			}
		})
	}
}

func TestLibraryStaysLoadedWhileItsBackendHoldsRequests(t *testing.T) {
	t.Parallel()
	repo := repository(t, model{name: "m", backend: "fake", files: []string{"libtriton_fake.so"}})
	o := newFakeOpener()
	o.held = 1
	srv := startServer(t, repo, o)
	if err := srv.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	calls := o.recorded()
	if slices.Contains(calls, "fake: Close") || !slices.Contains(calls, "fake: Finalize") {
		t.Errorf("calls %v: want Finalize and no Close while the backend holds a request", calls)
	}
}

func TestPreferredGroupsAndBackendConfigReachTheModel(t *testing.T) {
	t.Parallel()
	repo := repository(t, model{name: "m", backend: "fake", files: []string{"libtriton_fake.so"}})
	o := newFakeOpener()
	o.attrs = loader.Attributes{PreferredGroups: []loader.PreferredGroup{{Kind: core.KindCPU, Count: 3}}}
	srv := startServer(t, repo, o, func(opts *loader.Options) {
		opts.DisableAutoComplete = true
		opts.BackendConfig = map[string]map[string]string{"": {"shared": "1"}, "fake": {"own": "2", "shared": "3"}}
	})
	m, err := srv.Model("m", 0)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(m.Instances()); n != 3 {
		t.Errorf("%d instances, want the 3 the backend prefers", n)
	}
	o.mu.Lock()
	cfg := o.configs["fake"]
	o.mu.Unlock()
	for k, want := range map[string]string{"shared": "3", "own": "2", "auto-complete-config": "false", "default-max-batch-size": "4"} {
		if cfg[k] != want {
			t.Errorf("backend config %q = %q, want %q (all: %v)", k, cfg[k], want, cfg)
		}
	}
	if !slices.Contains(o.recorded(), "fake: NewModel m/1 auto=false") {
		t.Errorf("auto-complete not disabled for the model: %v", o.recorded())
	}
}

func TestRequestsRunThroughTheLibraryInstance(t *testing.T) {
	t.Parallel()
	repo := repository(t, model{name: "m", backend: "fake", files: []string{"libtriton_fake.so"}})
	srv := startServer(t, repo, newFakeOpener())
	done := make(chan error, 1)
	err := srv.Infer(context.Background(), &core.Submission{Model: "m"}, func(resp *core.Response, final bool) {
		if final {
			if resp == nil {
				done <- nil
			} else {
				done <- resp.Err
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestCloseNamesLibrariesStillInUse(t *testing.T) {
	t.Parallel()
	repo := repository(t, model{name: "m", backend: "fake", files: []string{"libtriton_fake.so"}})
	o := newFakeOpener()
	p := loader.New(loader.Options{Opener: o})
	srv, err := core.NewServer(core.Options{ModelRepositories: []string{repo}, Backends: p, Schedulers: scheduling.New})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err == nil || !strings.Contains(err.Error(), `"fake"`) {
		t.Errorf("Close with a model loaded = %v, want an error naming the backend", err)
	}
	if err := srv.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Errorf("Close after every model unloaded = %v", err)
	}
}
