package backendtest

import (
	"bytes"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
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
		exports:   modelEntryPoints,
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
}

var modelEntryPoints = []string{
	"TRITONBACKEND_ModelFinalize",
	"TRITONBACKEND_ModelInitialize",
	"TRITONBACKEND_ModelInstanceExecute",
	"TRITONBACKEND_ModelInstanceFinalize",
	"TRITONBACKEND_ModelInstanceInitialize",
}

const stubName = "libtritonserver.so"

// repoRoot walks up from the test's directory to the one holding go.mod.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the test directory")
		}
		dir = parent
	}
}

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

// makeBuild is one `make -f mk/backends.mk` into a temporary directory,
// shared by the tests that only read its output.
var makeBuild struct {
	once        sync.Once
	dir         string // holds backends/ and build/
	output, err string
}

func TestMain(m *testing.M) {
	code := m.Run()
	if makeBuild.dir != "" {
		os.RemoveAll(makeBuild.dir)
	}
	os.Exit(code)
}

// builtWithMake returns the BACKENDS_DIR and BUILD_DIR of the shared build.
func builtWithMake(t *testing.T) (backendsDir, buildDir string) {
	t.Helper()
	requireTools(t, "make", "gcc", "g++")
	root := repoRoot(t)
	makeBuild.once.Do(func() {
		dir, err := os.MkdirTemp("", "tritonhost-backends-")
		if err != nil {
			makeBuild.err = err.Error()
			return
		}
		makeBuild.dir = dir
		cmd := exec.Command("make", "-f", "mk/backends.mk",
			"BACKENDS_DIR="+filepath.Join(dir, "backends"),
			"BUILD_DIR="+filepath.Join(dir, "build"))
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		makeBuild.output = string(out)
		if err != nil {
			makeBuild.err = err.Error()
		}
	})
	if makeBuild.err != "" {
		t.Fatalf("make -f mk/backends.mk: %s\n%s", makeBuild.err, makeBuild.output)
	}
	return filepath.Join(makeBuild.dir, "backends"), filepath.Join(makeBuild.dir, "build")
}

// declaredFunctions lists the TRITONSERVER_*/TRITONBACKEND_* functions the
// project's headers declare.
func declaredFunctions(t *testing.T) map[string]bool {
	t.Helper()
	decl := regexp.MustCompile(`\b(TRITON(?:SERVER|BACKEND)_[A-Za-z0-9_]+)\s*\(`)
	names := map[string]bool{}
	for _, h := range []string{"tritonserver.h", "tritonbackend.h"} {
		text, err := os.ReadFile(filepath.Join(repoRoot(t), "include", "triton", "core", h))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range decl.FindAllSubmatch(text, -1) {
			names[string(m[1])] = true
		}
	}
	if len(names) == 0 {
		t.Fatal("no functions found in include/triton/core/*.h")
	}
	return names
}

// dynamicSymbols splits a library's dynamic symbols into the ones it
// defines (exports) and the TRITON* ones it leaves undefined (imports),
// and lists its DT_NEEDED entries.
func dynamicSymbols(t *testing.T, path string) (exports, imports, needed []string) {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.DynamicSymbols()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range syms {
		bind := elf.ST_BIND(s.Info)
		switch {
		case s.Section == elf.SHN_UNDEF && strings.HasPrefix(s.Name, "TRITON"):
			imports = append(imports, s.Name)
		case s.Section != elf.SHN_UNDEF && (bind == elf.STB_GLOBAL || bind == elf.STB_WEAK):
			exports = append(exports, s.Name)
		}
	}
	if needed, err = f.ImportedLibraries(); err != nil {
		t.Fatal(err)
	}
	sort.Strings(exports)
	sort.Strings(imports)
	return exports, imports, needed
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

func TestMakeIsIncremental(t *testing.T) {
	backendsDir, buildDir := builtWithMake(t)
	root := repoRoot(t)

	// Nothing to do right after a build: `make -q` exits 0 when up to date.
	cmd := exec.Command("make", "-q", "-f", "mk/backends.mk",
		"BACKENDS_DIR="+backendsDir, "BUILD_DIR="+buildDir)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("make -q after a build: %v (something would be rebuilt)\n%s", err, out)
	}

	// Objects record the headers they include, so a header edit rebuilds them.
	tests := []struct {
		dep     string
		headers []string
	}{
		{"backends/repeat_backend/repeat.d", []string{"tritonbackend.h", "tritonserver.h", "model_config.hpp", "json_value.hpp"}},
		{"backends/square_backend/square.d", []string{"tritonbackend.h", "thread_tracker.hpp", "logging.hpp"}},
		{"backends/backends_cpp/addsub/addsub.d", []string{"tritonbackend.h", "backend_model.hpp", "request_batch.hpp"}},
		{"backends/backends_cpp/layer/request_batch.d", []string{"request_batch.hpp", "backend_model_instance.hpp", "backend_io.hpp"}},
		{"backends/backends_c/identity/identity_execute.d", []string{"tritonbackend.h", "identity.h"}},
		{"backends/backends_c/conformance/checks_config.d", []string{"tritonserver.h", "conformance.h", "json_int64.h"}},
		{"backends/backends_cpp/layer/json_value.d", []string{"json_value.hpp", "errors.hpp"}},
		{"backends/backends_cpp/layer/model_config.d", []string{"model_config.hpp", "json_value.hpp", "host_objects.hpp"}},
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

func TestCMakeBuildsTheSameBackends(t *testing.T) {
	requireTools(t, "cmake", "gcc", "g++")
	root := repoRoot(t)
	build := filepath.Join(t.TempDir(), "build")
	prefix := filepath.Join(t.TempDir(), "prefix")

	run(t, root, nil, "cmake", "-S", root, "-B", build)
	run(t, root, nil, "cmake", "--build", build, "--parallel")
	declared := declaredFunctions(t)
	for _, lib := range backendLibs {
		t.Run(lib.name, func(t *testing.T) {
			path := filepath.Join(build, "backends", lib.name, "libtriton_"+lib.name+".so")
			checkLibrary(t, path, lib.exports, lib.needsStub, declared)
		})
	}

	// A backend author's project finds the installed package.
	run(t, root, nil, "cmake", "--install", build, "--prefix", prefix)
	for _, f := range []string{
		"include/triton/core/tritonbackend.h",
		"include/triton/core/tritonserver.h",
		"include/tritonhost/backend_model.hpp",
		"include/tritonhost/errors.hpp",
		"include/tritonhost/json_value.hpp",
		"include/tritonhost/model_config.hpp",
		"include/tritonhost/third_party/rapidjson/document.h",
		"include/tritonhost/third_party/rapidjson/fwd.h",
		"lib/stubs/libtritonserver.so",
		"lib/cmake/tritonhost/tritonhostConfig.cmake",
		"lib/cmake/TritonCore/TritonCoreConfig.cmake",
		"backends/repeat/libtriton_repeat.so",
	} {
		if _, err := os.Stat(filepath.Join(prefix, f)); err != nil {
			t.Errorf("not installed: %v", err)
		}
	}
	consumer := filepath.Join(t.TempDir(), "consumer")
	src := filepath.Join(root, "backendtest", "testdata", "cmake_consumer")
	run(t, root, nil, "cmake", "-S", src, "-B", consumer, "-DCMAKE_PREFIX_PATH="+prefix)
	run(t, root, nil, "cmake", "--build", consumer)
	_, _, needed := dynamicSymbols(t, filepath.Join(consumer, "libtriton_echo.so"))
	if !slices.Contains(needed, stubName) {
		t.Errorf("consumer backend linked with TritonCore::triton-core-serverstub lacks DT_NEEDED %s: %v", stubName, needed)
	}
	checkLibrary(t, filepath.Join(consumer, "backends", "nop", "libtriton_nop.so"),
		[]string{"TRITONBACKEND_ModelInstanceExecute"}, false, declared)
}

// compile builds a test program, with the address and undefined-behaviour
// sanitizers where the toolchain has them, else without.
func compile(t *testing.T, compiler, out string, args ...string) {
	t.Helper()
	attempts := [][]string{
		append([]string{"-fsanitize=address,undefined", "-fno-sanitize-recover=all"}, args...),
		args,
	}
	for i, flags := range attempts {
		cmd := exec.Command(compiler, append(flags, "-o", out)...)
		cmd.Dir = repoRoot(t)
		output, err := cmd.CombinedOutput()
		if err == nil {
			return
		}
		if i == len(attempts)-1 {
			t.Fatalf("%s: %v\n%s", compiler, err, output)
		}
		t.Logf("building %s without sanitizers: %s", filepath.Base(out), strings.TrimSpace(string(output)))
	}
}

func TestLayerReadsJSONAsItAlwaysHas(t *testing.T) {
	requireTools(t, "g++")
	bin := filepath.Join(t.TempDir(), "json_value_test")
	compile(t, "g++", bin, "-std=c++17", "-g", "-O1", "-Wall", "-Wextra", "-Werror",
		"-Iinclude", "-Ibackends_cpp/layer", "-isystem", "third_party/rapidjson/include",
		"backendtest/testdata/json_value_test.cc",
		"backends_cpp/layer/json_value.cc", "backends_cpp/layer/model_config.cc")
	out := run(t, repoRoot(t), nil, bin)
	if strings.TrimSpace(out) != "ok" {
		t.Errorf("json_value_test: %s", out)
	}
}

func TestBackendsBehaveAsSpecifiedUnderAMockHost(t *testing.T) {
	backendsDir, buildDir := builtWithMake(t)
	bin := filepath.Join(t.TempDir(), "mock_host")
	compile(t, "g++", bin, "-std=c++17", "-g", "-O1", "-Wall", "-Wextra", "-Werror",
		"-rdynamic", "-Iinclude", "backendtest/testdata/mock_host.cc", "-ldl", "-pthread")
	// The C++ backends need a file named libtritonserver.so (DT_NEEDED); the
	// functions themselves come from the mock host's executable.
	env := []string{"LD_LIBRARY_PATH=" + filepath.Join(buildDir, "stub")}
	out := run(t, repoRoot(t), env, bin, backendsDir)
	if strings.TrimSpace(out) != "ok" {
		t.Errorf("mock host: %s", out)
	}
}
