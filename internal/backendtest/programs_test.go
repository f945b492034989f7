package backendtest

// Tests that build a C++ program from testdata/ and run it: it prints "ok"
// and exits 0, or lists what failed.

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tritonhost/tritonhost/internal/testenv"
)

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
		cmd.Dir = testenv.RepoRoot(t)
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
		"-Iinclude", "-Ibackends_c/layer", "-isystem", "third_party/rapidjson/include",
		"internal/backendtest/testdata/json_value_test.cc",
		"backends_c/layer/json_value.cc", "backends_c/layer/model_config.cc")
	out := run(t, testenv.RepoRoot(t), nil, bin)
	if strings.TrimSpace(out) != "ok" {
		t.Errorf("json_value_test: %s", out)
	}
}

func TestBackendsBehaveAsSpecifiedUnderAMockHost(t *testing.T) {
	backendsDir, buildDir := builtWithMake(t)
	bin := filepath.Join(t.TempDir(), "mock_host")
	compile(t, "g++", bin, "-std=c++17", "-g", "-O1", "-Wall", "-Wextra", "-Werror",
		"-rdynamic", "-Iinclude", "internal/backendtest/testdata/mock_host.cc", "-ldl", "-pthread")
	// The C++ backends need a file named libtritonserver.so (DT_NEEDED); the
	// functions themselves come from the mock host's executable.
	env := []string{"LD_LIBRARY_PATH=" + filepath.Join(buildDir, "stub")}
	out := run(t, testenv.RepoRoot(t), env, bin, backendsDir)
	if strings.TrimSpace(out) != "ok" {
		t.Errorf("mock host: %s", out)
	}
}
