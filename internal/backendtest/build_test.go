package backendtest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tritonhost/tritonhost/include"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// The libraries mk/backends.mk and CMakeLists.txt build, and what each must
// look like from the outside.
var backendLibs = []struct {
	name string
	// exports is the exact set of dynamic symbols the library defines.
	exports []string
	// needsStub: linked against the libtritonserver.so stub (DT_NEEDED).
	needsStub bool
}{
	{
		name:      "repeat",
		exports:   modelEntryPoints,
		needsStub: true,
	},
	{
		name:      "square",
		exports:   modelEntryPoints,
		needsStub: true,
	},
	{
		name:      "addsub",
		exports:   append([]string{"TRITONBACKEND_GetBackendAttribute"}, modelEntryPoints...),
		needsStub: true,
	},
	{
		name:      "bls",
		exports:   modelEntryPoints,
		needsStub: true,
	},
	{
		name:      "sequence",
		exports:   append([]string{"TRITONBACKEND_GetBackendAttribute"}, modelEntryPoints...),
		needsStub: true,
	},
	{
		name: "identity",
		exports: append([]string{
			"TRITONBACKEND_Finalize",
			"TRITONBACKEND_GetBackendAttribute",
			"TRITONBACKEND_Initialize",
		}, modelEntryPoints...),
		needsStub: false,
	},
	{
		name: "conformance",
		exports: append([]string{
			"TRITONBACKEND_Finalize",
			"TRITONBACKEND_GetBackendAttribute",
			"TRITONBACKEND_Initialize",
		}, modelEntryPoints...),
		needsStub: false,
	},
	{
		name:      "modelcontrol",
		exports:   []string{"TRITONBACKEND_ModelFinalize", "TRITONBACKEND_ModelInitialize", "TRITONBACKEND_ModelInstanceExecute"},
		needsStub: true,
	},
}

var modelEntryPoints = []string{
	"TRITONBACKEND_ModelFinalize",
	"TRITONBACKEND_ModelInitialize",
	"TRITONBACKEND_ModelInstanceExecute",
	"TRITONBACKEND_ModelInstanceFinalize",
	"TRITONBACKEND_ModelInstanceInitialize",
}

const stubName = "libtritonserver.so"

// The layer's archive under a BUILD_DIR, as mk/backends.mk builds it (and
// CMake installs it, as lib/libtritonhost-backend-utils.a).
const layerArchive = "backends/backends_c/layer/libtritonhost-backend-utils.a"

func requireTools(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not on PATH: %v", tool, err)
		}
	}
}

// run runs a command in dir and fails the test with its output on error.
func run(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s (in %s): %v\n%s", name, strings.Join(args, " "), dir, err, out)
	}
	return string(out)
}

// builtWithMake returns the BACKENDS_DIR and BUILD_DIR of the root
// Makefile's build of the backends (`make backends`, which `make test`
// runs first, brought up to date under testenv's lock): the libraries the
// rest of the suite loads. Building them once more here, from scratch,
// would double the package's compiling for nothing the checks read;
// TestMakeBuildsAloneIntoOtherDirectories covers mk/backends.mk run alone.
func builtWithMake(t *testing.T) (backendsDir, buildDir string) {
	t.Helper()
	requireTools(t, "make", "gcc", "g++")
	return testenv.BackendDir(t), filepath.Join(testenv.RepoRoot(t), "build")
}

// declaredFunctions lists the TRITONSERVER_*/TRITONBACKEND_* functions the
// project's headers declare.
func declaredFunctions(t *testing.T) map[string]bool {
	t.Helper()
	fns, err := include.Functions()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, fn := range fns {
		names[fn.Name] = true
	}
	return names
}

// dynamicSymbols splits a library's dynamic symbols into the ones it
// defines (exports) and the TRITON* ones it leaves undefined (imports),
// and lists its DT_NEEDED entries.
func dynamicSymbols(t *testing.T, path string) (exports, imports, needed []string) {
	t.Helper()
	syms := testenv.ReadDynamicSymbols(t, path)
	for _, name := range syms.Undefined {
		if strings.HasPrefix(name, "TRITON") {
			imports = append(imports, name)
		}
	}
	return syms.DefinedNames(), imports, syms.Needed
}

// checkLibrary checks one built backend: exact exports, imports all
// declared in our headers, DT_NEEDED libtritonserver.so only if stubbed.
func checkLibrary(t *testing.T, path string, wantExports []string, needsStub bool, declared map[string]bool) {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("library not built: %v", err)
	}
	exports, imports, needed := dynamicSymbols(t, path)
	want := slices.Sorted(slices.Values(wantExports))
	if !slices.Equal(exports, want) {
		t.Errorf("%s exports\n  %v\nwant exactly\n  %v", filepath.Base(path), exports, want)
	}
	if len(imports) == 0 {
		t.Errorf("%s imports no TRITON* function; expected the host API to stay undefined", filepath.Base(path))
	}
	for _, name := range imports {
		if !declared[name] {
			t.Errorf("%s imports %s, which include/triton/core/*.h does not declare", filepath.Base(path), name)
		}
	}
	if got := slices.Contains(needed, stubName); got != needsStub {
		t.Errorf("%s: DT_NEEDED %s = %v, want %v (needed: %v)", filepath.Base(path), stubName, got, needsStub, needed)
	}
	t.Logf("%s imports %d TRITON* functions: %s", filepath.Base(path), len(imports), strings.Join(imports, " "))
}

func TestMakeBuildsEachBackendWithOnlyEntryPointsExported(t *testing.T) {
	backendsDir, _ := builtWithMake(t)
	declared := declaredFunctions(t)
	for _, lib := range backendLibs {
		t.Run(lib.name, func(t *testing.T) {
			path := filepath.Join(backendsDir, lib.name, "libtriton_"+lib.name+".so")
			checkLibrary(t, path, lib.exports, lib.needsStub, declared)
		})
	}
}

// TestMakeBuildsAloneIntoOtherDirectories: mk/backends.mk run alone, from
// outside the repository (sources named by absolute paths), builds into
// the BACKENDS_DIR and BUILD_DIR it is given. The C backends are built
// here, one linked against the libtritonserver.so stub and one without,
// with cJSON; the root Makefile's build, which the other tests check, has
// the C++ ones from the same rules.
func TestMakeBuildsAloneIntoOtherDirectories(t *testing.T) {
	requireTools(t, "make", "gcc")
	root := testenv.RepoRoot(t)
	dir := t.TempDir()
	backendsDir, buildDir := filepath.Join(dir, "backends"), filepath.Join(dir, "build")
	args := []string{"-j", strconv.Itoa(runtime.NumCPU()), "-f", filepath.Join(root, "mk", "backends.mk"),
		"BACKENDS_DIR=" + backendsDir, "BUILD_DIR=" + buildDir}
	alone := []string{"identity", "modelcontrol"}
	for _, name := range alone {
		args = append(args, filepath.Join(backendsDir, name, "libtriton_"+name+".so"))
	}
	run(t, dir, nil, "make", args...)
	declared := declaredFunctions(t)
	for _, lib := range backendLibs {
		if slices.Contains(alone, lib.name) {
			t.Run(lib.name, func(t *testing.T) {
				checkLibrary(t, filepath.Join(backendsDir, lib.name, "libtriton_"+lib.name+".so"), lib.exports, lib.needsStub, declared)
			})
		}
	}
	if _, err := os.Stat(filepath.Join(buildDir, "stub", stubName)); err != nil {
		t.Errorf("the stub is not in BUILD_DIR: %v", err)
	}
}

func TestMakeIsIncremental(t *testing.T) {
	_, buildDir := builtWithMake(t)

	// Nothing to do right after a build: `make -q` exits 0 when up to date
	// (run under testenv's lock, so that no other test process builds
	// meanwhile; it fails the test otherwise, something would be rebuilt).
	testenv.Make(t, "-q", "backends")

	// Objects record the headers they include, so a header edit rebuilds them.
	tests := []struct {
		dep     string
		headers []string
	}{
		{"backends/repeat_backend/repeat.d", []string{"tritonbackend.h", "tritonserver.h", "model_config.hpp", "json_value.hpp"}},
		{"backends/square_backend/square.d", []string{"tritonbackend.h", "thread_tracker.hpp", "logging.hpp"}},
		{"backends/backends_c/addsub/addsub.d", []string{"tritonbackend.h", "backend_model.hpp", "request_batch.hpp"}},
		{"backends/backends_c/sequence/sequence.d", []string{"tritonbackend.h", "backend_model.hpp", "json_value.hpp", "request_batch.hpp"}},
		{"backends/backends_c/layer/request_batch.d", []string{"request_batch.hpp", "backend_model_instance.hpp", "backend_io.hpp"}},
		{"backends/backends_c/identity/identity_execute.d", []string{"tritonbackend.h", "identity.h"}},
		{"backends/backends_c/conformance/checks_config.d", []string{"tritonserver.h", "conformance.h", "json_int64.h"}},
		{"backends/backends_c/layer/json_value.d", []string{"json_value.hpp", "errors.hpp"}},
		{"backends/backends_c/layer/model_config.d", []string{"model_config.hpp", "json_value.hpp", "host_objects.hpp"}},
	}
	for _, tc := range tests {
		text, err := os.ReadFile(filepath.Join(buildDir, tc.dep))
		if err != nil {
			t.Errorf("dependency file: %v", err)
			continue
		}
		for _, h := range tc.headers {
			if !bytes.Contains(text, []byte(h)) {
				t.Errorf("%s does not list %s", tc.dep, h)
			}
		}
	}
}
