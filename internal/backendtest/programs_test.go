package backendtest

// A C++ program from testdata/ on the layer: it prints "ok" and exits 0, or
// lists what failed.

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/tritonhost/tritonhost/internal/testenv"
)

// TestLayerReadsJSONAsItAlwaysHas links testdata/json_value_test.cc with the
// layer as make builds it: under the address and undefined-behaviour
// sanitizers (make backends-sanitized) where gcc has them, else the plain
// build's archive. The layer's sources and flags are mk/backends.mk's.
func TestLayerReadsJSONAsItAlwaysHas(t *testing.T) {
	requireTools(t, "g++")
	args := []string{"-std=c++17", "-g", "-O1", "-Wall", "-Wextra", "-Werror",
		"-Iinclude", "-Ibackends_c/layer", "-isystem", "third_party/rapidjson/include",
		"internal/backendtest/testdata/json_value_test.cc"}
	if ok, why := haveSanitizers(t); ok {
		_, buildDir := sanitizedBuild(t)
		args = append([]string{"-fsanitize=address,undefined", "-fno-sanitize-recover=all"}, args...)
		args = append(args, filepath.Join(buildDir, layerArchive))
	} else {
		t.Logf("without sanitizers: %s", why)
		_, buildDir := builtWithMake(t)
		args = append(args, filepath.Join(buildDir, layerArchive))
	}
	bin := filepath.Join(t.TempDir(), "json_value_test")
	root := testenv.RepoRoot(t)
	run(t, root, nil, "g++", append(args, "-o", bin)...)
	if out := run(t, root, nil, bin); strings.TrimSpace(out) != "ok" {
		t.Errorf("json_value_test: %s", out)
	}
}
