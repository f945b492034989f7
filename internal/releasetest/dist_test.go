package releasetest

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// shippedBackends are the backends a release carries (mk/release.mk's
// DIST_BACKENDS); every example model runs on one of them.
var shippedBackends = []string{"addsub", "bls", "identity", "repeat", "sequence", "square"}

// In the tarball, under its top directory.
var tarballFiles = []string{
	"bin/tritonhost",
	"include/triton/core/tritonbackend.h",
	"include/triton/core/tritonserver.h",
	"include/tritonhost/backend_model.hpp",
	"include/tritonhost/third_party/rapidjson/document.h",
	"lib/cmake/tritonhost/tritonhostConfig.cmake",
	"lib/cmake/tritonhost/tritonhostConfigVersion.cmake",
	"lib/cmake/tritonhost/tritonhostBackend.cmake",
	"lib/cmake/TritonCore/TritonCoreConfig.cmake",
	"lib/stubs/libtritonserver.so",
	"lib/libtritonserver.so",
	"lib/libtritonhost-backend-utils.a",
	"include/triton/core/tritoncache.h",
	"include/triton/core/tritonrepoagent.h",
	"caches/local/libtritoncache_local.so",
	"repoagents/checksum/libtritonrepoagent_checksum.so",
	"examples/models/simple/config.pbtxt",
	"share/doc/tritonhost/third_party/cjson/LICENSE",
	"share/doc/tritonhost/third_party/rapidjson/LICENSE",
	"LICENSE",
	"README.md",
	"CHANGELOG.md",
	"docs/serving.md", // the README links into docs/
}

// TestDistPackageInstallsAndBuildsABackend runs make dist, unpacks the
// Debian package into a scratch root with dpkg -x, runs the installed
// server, and builds a backend author's CMake project against the installed
// package with find_package.
func TestDistPackageInstallsAndBuildsABackend(t *testing.T) {
	requireTools(t, "git", "cmake", "gcc", "g++", "tar", "dpkg", "dpkg-deb")
	root := testenv.RepoRoot(t)
	dist := t.TempDir()
	testenv.Make(t, "dist", "DIST_DIR="+dist)
	version := strings.TrimSpace(testenv.Make(t, "-s", "version"))

	tarballs, _ := filepath.Glob(filepath.Join(dist, "tritonhost-*.tar.gz"))
	debs, _ := filepath.Glob(filepath.Join(dist, "tritonhost_*.deb"))
	if len(tarballs) != 1 || len(debs) != 1 {
		t.Fatalf("make dist made tarballs %v and packages %v, want one each", tarballs, debs)
	}
	// The staged examples hold Go files; go test ./... must not find them.
	for _, pkg := range strings.Fields(run(t, root, nil, "go", "list", "./...")) {
		if strings.HasPrefix(pkg, "github.com/tritonhost/tritonhost/build/") {
			t.Errorf("make dist left a Go package where ./... finds it: %s", pkg)
		}
	}

	t.Run("tarball", func(t *testing.T) {
		top := "tritonhost-" + version + "-linux-" + goArch(t)
		if got := filepath.Base(tarballs[0]); got != top+".tar.gz" {
			t.Errorf("tarball %s, want %s.tar.gz", got, top)
		}
		listed := strings.Split(run(t, "", nil, "tar", "-tzf", tarballs[0]), "\n")
		want := slices.Clone(tarballFiles)
		for _, b := range shippedBackends {
			want = append(want, "backends/"+b+"/libtriton_"+b+".so")
		}
		for _, f := range want {
			if !slices.Contains(listed, top+"/"+f) {
				t.Errorf("tarball lacks %s/%s", top, f)
			}
		}
		if slices.Contains(listed, top+"/backends/conformance/libtriton_conformance.so") {
			t.Errorf("tarball ships the conformance test probe")
		}
		unpacked := t.TempDir()
		run(t, "", nil, "tar", "-xzf", tarballs[0], "-C", unpacked)
		bin := filepath.Join(unpacked, top, "bin", "tritonhost")
		if got := versionInfo(t, bin)["tritonhost"]; got != version {
			t.Errorf("the tarball's tritonhost version: %q, want %q", got, version)
		}
		// No --backend-directory: the server finds backends/ next to bin/.
		expectExamplesReady(t, serve(t, bin, filepath.Join(unpacked, top, "examples", "models"), ""),
			filepath.Join(unpacked, top, "examples", "models"))
	})

	t.Run("deb", func(t *testing.T) {
		control := run(t, "", nil, "dpkg-deb", "--field", debs[0], "Package", "Version", "Architecture", "Depends")
		debVersion := strings.TrimSpace(run(t, root, nil, "bash", "mk/debversion.sh", version)) + "-1"
		for _, want := range []string{"Package: tritonhost", "Version: " + debVersion, "Architecture: " + goArch(t), "Depends: libc6"} {
			if !strings.Contains(control, want) {
				t.Errorf("package control lacks %q:\n%s", want, control)
			}
		}

		dest := filepath.Join(t.TempDir(), "root")
		run(t, "", nil, "dpkg", "-x", debs[0], dest)
		checkInstalled(t, dest, version)
		serveInstalled(t, dest)
		buildAgainstInstalled(t, root, dest)
	})
}

func goArch(t *testing.T) string {
	return strings.TrimSpace(run(t, "", nil, "go", "env", "GOARCH"))
}

// checkInstalled checks the package's files are where Triton and CMake look
// for them, and that the installed server prints the release's version.
func checkInstalled(t *testing.T, dest, version string) {
	t.Helper()
	files := []string{
		"usr/bin/tritonhost",
		"usr/include/triton/core/tritonbackend.h",
		"usr/include/triton/core/tritonserver.h",
		"usr/lib/cmake/tritonhost/tritonhostConfig.cmake",
		"usr/lib/cmake/TritonCore/TritonCoreConfig.cmake",
		"usr/lib/stubs/libtritonserver.so",
		"opt/tritonserver/lib/libtritonserver.so",
		"usr/include/triton/core/tritoncache.h",
		"opt/tritonserver/caches/local/libtritoncache_local.so",
		"opt/tritonserver/repoagents/checksum/libtritonrepoagent_checksum.so",
		"usr/share/doc/tritonhost/copyright",
		"usr/share/doc/tritonhost/docs/serving.md",
		"usr/share/doc/tritonhost/examples/models/simple/config.pbtxt",
	}
	for _, b := range shippedBackends {
		files = append(files, "opt/tritonserver/backends/"+b+"/libtriton_"+b+".so")
	}
	for _, f := range files {
		if _, err := os.Stat(filepath.Join(dest, f)); err != nil {
			t.Errorf("not installed: %v", err)
		}
	}
	if got := versionInfo(t, filepath.Join(dest, "usr", "bin", "tritonhost"))["tritonhost"]; got != version {
		t.Errorf("installed tritonhost version: %q, want %q", got, version)
	}
}

// serveInstalled serves the installed examples with the installed backends
// and expects every example model to be ready.
func serveInstalled(t *testing.T, dest string) {
	t.Helper()
	models := filepath.Join(dest, "usr", "share", "doc", "tritonhost", "examples", "models")
	c := serve(t, filepath.Join(dest, "usr", "bin", "tritonhost"), models, filepath.Join(dest, "opt", "tritonserver", "backends"))
	expectExamplesReady(t, c, models)
}

// expectExamplesReady expects the server to list every model of the
// examples directory as ready.
func expectExamplesReady(t *testing.T, c pb.GRPCInferenceServiceClient, models string) {
	t.Helper()
	index, err := c.RepositoryIndex(ctxFor(t), &pb.RepositoryIndexRequest{})
	if err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(models)
	if len(index.GetModels()) != len(entries) || len(entries) == 0 {
		t.Errorf("RepositoryIndex lists %d models, the installed examples are %d", len(index.GetModels()), len(entries))
	}
	for _, m := range index.GetModels() {
		if m.GetState() != "READY" {
			t.Errorf("installed example %s: %s %s", m.GetName(), m.GetState(), m.GetReason())
		}
	}
}

// buildAgainstInstalled builds backendtest/testdata/cmake_consumer with
// CMAKE_PREFIX_PATH pointing into the scratch root, and checks that CMake
// found the package there.
func buildAgainstInstalled(t *testing.T, root, dest string) {
	t.Helper()
	build := t.TempDir()
	src := filepath.Join(root, "internal", "backendtest", "testdata", "cmake_consumer")
	prefix := filepath.Join(dest, "usr")
	run(t, "", nil, "cmake", "-S", src, "-B", build, "-DCMAKE_PREFIX_PATH="+prefix)
	run(t, "", nil, "cmake", "--build", build)
	cache, err := os.ReadFile(filepath.Join(build, "CMakeCache.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, pkg := range []string{"tritonhost", "TritonCore"} {
		want := pkg + "_DIR:PATH=" + filepath.Join(prefix, "lib", "cmake", pkg)
		if !strings.Contains(string(cache), want+"\n") {
			t.Errorf("CMake did not find %s in the scratch root: no %q in CMakeCache.txt", pkg, want)
		}
	}
	for _, lib := range []string{"libtriton_echo.so", "backends/nop/libtriton_nop.so"} {
		if _, err := os.Stat(filepath.Join(build, lib)); err != nil {
			t.Errorf("backend not built against the installed package: %v", err)
		}
	}
}
