package backendtest

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"testing"

	"github.com/tritonhost/tritonhost/internal/testenv"
)

func TestCMakeBuildsTheSameBackends(t *testing.T) {
	requireTools(t, "cmake", "gcc", "g++")
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

	// A backend author's project finds the installed package.
	run(t, root, nil, "cmake", "--install", build, "--prefix", prefix)
	for _, f := range []string{
		"include/triton/core/tritonbackend.h",
		"include/triton/core/tritonserver.h",
		"include/tritonhost/backend_entry_points.hpp",
		"include/tritonhost/backend_model.hpp",
		"include/tritonhost/errors.hpp",
		"include/tritonhost/json_value.hpp",
		"include/tritonhost/model_config.hpp",
		"include/tritonhost/third_party/rapidjson/document.h",
		"include/tritonhost/third_party/rapidjson/fwd.h",
		"share/doc/tritonhost/third_party/rapidjson/LICENSE",
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
	src := filepath.Join(root, "internal", "backendtest", "testdata", "cmake_consumer")
	run(t, root, nil, "cmake", "-S", src, "-B", consumer, "-DCMAKE_PREFIX_PATH="+prefix)
	run(t, root, nil, "cmake", "--build", consumer, "--parallel", jobs)
	echoExports, _, needed := dynamicSymbols(t, filepath.Join(consumer, "libtriton_echo.so"))
	if !slices.Contains(needed, stubName) {
		t.Errorf("consumer backend linked with TritonCore::triton-core-serverstub lacks DT_NEEDED %s: %v", stubName, needed)
	}
	for _, name := range modelEntryPoints { // from THOST_BACKEND_ENTRY_POINTS
		if !slices.Contains(echoExports, name) {
			t.Errorf("consumer backend libtriton_echo.so does not define %s", name)
		}
	}
	checkLibrary(t, filepath.Join(consumer, "backends", "nop", "libtriton_nop.so"),
		[]string{"TRITONBACKEND_ModelInstanceExecute"}, false, declared)
}
