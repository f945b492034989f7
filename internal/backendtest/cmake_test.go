package backendtest

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/tritonhost/tritonhost/internal/testenv"
)

// The plugins CMake has make build (TRITONHOST_BUILD_PLUGINS), at their
// paths under the build tree and the install prefix, with what each exports.
var cmakePlugins = []struct {
	path    string
	exports []string
}{
	{"caches/local/libtritoncache_local.so", []string{"TRITONCACHE_CacheFinalize",
		"TRITONCACHE_CacheInitialize", "TRITONCACHE_CacheInsert", "TRITONCACHE_CacheLookup"}},
	{"repoagents/checksum/libtritonrepoagent_checksum.so", []string{"TRITONREPOAGENT_Initialize",
		"TRITONREPOAGENT_ModelAction"}},
}

// TestCMakeBuildsTheSameBackends: CMake runs make (mk/backends.mk and
// mk/plugins.mk) for the backends, the plugins, the layer and the stub,
// into its own build tree; installs them with the package; and a backend
// author's project (testdata/cmake_consumer) builds against the installed
// package (find_package) and against the source tree (add_subdirectory),
// the latter reusing the first build's make outputs, as make dist does.
func TestCMakeBuildsTheSameBackends(t *testing.T) {
	requireTools(t, "cmake", "make", "gcc", "g++")
	root := testenv.RepoRoot(t)
	build := filepath.Join(t.TempDir(), "build")
	prefix := filepath.Join(t.TempDir(), "prefix")

	// A bare --parallel runs make -j, with no bound: dozens of compilers
	// at once on a machine of two cores.
	jobs := strconv.Itoa(runtime.NumCPU())
	run(t, root, nil, "cmake", "-S", root, "-B", build)
	run(t, root, nil, "cmake", "--build", build, "--parallel", jobs)
	declared := declaredFunctions(t)
	for _, lib := range backendLibs {
		t.Run(lib.name, func(t *testing.T) {
			path := filepath.Join(build, "backends", lib.name, "libtriton_"+lib.name+".so")
			checkLibrary(t, path, lib.exports, lib.needsStub, declared)
		})
	}
	for _, p := range cmakePlugins {
		t.Run(filepath.Base(p.path), func(t *testing.T) {
			checkLibrary(t, filepath.Join(build, p.path), p.exports, false, declared)
		})
	}
	// make's objects and the layer's archive are under <build>/make.
	layer := filepath.Join(build, "make", layerArchive)
	layerInfo, err := os.Stat(layer)
	if err != nil {
		t.Fatalf("the layer's archive is not where CMake has make build it: %v", err)
	}

	// A backend author's project finds the installed package.
	run(t, root, nil, "cmake", "--install", build, "--prefix", prefix)
	installed := []string{
		"include/triton/core/tritonbackend.h",
		"include/triton/core/tritonserver.h",
		"include/triton/core/tritoncache.h",
		"include/triton/core/tritonrepoagent.h",
		"include/tritonhost/backend_entry_points.hpp",
		"include/tritonhost/backend_model.hpp",
		"include/tritonhost/errors.hpp",
		"include/tritonhost/json_value.hpp",
		"include/tritonhost/model_config.hpp",
		"include/tritonhost/third_party/rapidjson/document.h",
		"include/tritonhost/third_party/rapidjson/fwd.h",
		"share/doc/tritonhost/third_party/rapidjson/LICENSE",
		"lib/libtritonhost-backend-utils.a",
		"lib/stubs/libtritonserver.so",
		"lib/cmake/tritonhost/tritonhostConfig.cmake",
		"lib/cmake/tritonhost/tritonhostConfigVersion.cmake",
		"lib/cmake/tritonhost/tritonhostTargets.cmake",
		"lib/cmake/tritonhost/tritonhostBackend.cmake",
		"lib/cmake/tritonhost/exports.map",
		"lib/cmake/TritonCore/TritonCoreConfig.cmake",
	}
	for _, lib := range backendLibs {
		installed = append(installed, "backends/"+lib.name+"/libtriton_"+lib.name+".so")
	}
	for _, p := range cmakePlugins {
		installed = append(installed, p.path)
	}
	for _, f := range installed {
		if _, err := os.Stat(filepath.Join(prefix, f)); err != nil {
			t.Errorf("not installed: %v", err)
		}
	}
	src := filepath.Join(root, "internal", "backendtest", "testdata", "cmake_consumer")
	consumer := filepath.Join(t.TempDir(), "consumer")
	run(t, root, nil, "cmake", "-S", src, "-B", consumer, "-DCMAKE_PREFIX_PATH="+prefix)
	run(t, root, nil, "cmake", "--build", consumer, "--parallel", jobs)
	checkConsumer(t, consumer, declared)

	// The same project with this repository as its subdirectory, make's
	// BUILD_DIR the first build's: make finds the layer up to date.
	sub := filepath.Join(t.TempDir(), "subdirectory")
	run(t, root, nil, "cmake", "-S", src, "-B", sub, "-DTRITONHOST_SOURCE_DIR="+root,
		"-DTRITONHOST_MAKE_BUILD_DIR="+filepath.Join(build, "make"))
	run(t, root, nil, "cmake", "--build", sub, "--parallel", jobs)
	checkConsumer(t, sub, declared)
	if info, err := os.Stat(layer); err != nil {
		t.Error(err)
	} else if !info.ModTime().Equal(layerInfo.ModTime()) {
		t.Errorf("the second build rebuilt the layer's archive: modified %v, then %v",
			layerInfo.ModTime().Format(time.RFC3339Nano), info.ModTime().Format(time.RFC3339Nano))
	}
	for _, lib := range backendLibs { // TRITONHOST_BUILD_BACKENDS is off in a subdirectory
		if _, err := os.Stat(filepath.Join(sub, "backends", lib.name)); err == nil {
			t.Errorf("the subdirectory build built backend %s", lib.name)
		}
	}
}

// checkConsumer checks testdata/cmake_consumer's two backends, built in dir.
func checkConsumer(t *testing.T, dir string, declared map[string]bool) {
	t.Helper()
	echoExports, _, needed := dynamicSymbols(t, filepath.Join(dir, "libtriton_echo.so"))
	if !slices.Contains(needed, stubName) {
		t.Errorf("consumer backend linked with TritonCore::triton-core-serverstub lacks DT_NEEDED %s: %v", stubName, needed)
	}
	for _, name := range modelEntryPoints { // from THOST_BACKEND_ENTRY_POINTS
		if !slices.Contains(echoExports, name) {
			t.Errorf("consumer backend libtriton_echo.so does not define %s", name)
		}
	}
	checkLibrary(t, filepath.Join(dir, "backends", "nop", "libtriton_nop.so"),
		[]string{"TRITONBACKEND_ModelInstanceExecute"}, false, declared)
}
