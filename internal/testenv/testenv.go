// Package testenv gives tests the real artifacts they run against: the
// backends built by the Makefile, model repositories laid out in temporary
// directories, shared libraries compiled from C test fixtures, what an ELF
// file exports and imports, the tritonhost binary serving as a child
// process (StartServer; StartProcess for other programs), certificates,
// and fake NVML and CUDA drivers. It also holds what tests of every
// package share: waiting for a condition (Patience, WaitUntil,
// Eventually) and a log that one goroutine reads while others write it
// (LogBuffer). Tests of core use it through core/coretest too.
package testenv

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// RepoRoot returns the repository root (the directory holding go.mod).
func RepoRoot(t testing.TB) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("testenv: cannot locate the repository")
	}
	dir := filepath.Dir(file)
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("testenv: go.mod not found above " + file)
		}
		dir = parent
	}
}

var (
	buildOnce sync.Once
	buildErr  error
)

// BackendDir builds the project's backends with `make backends` (once per
// test binary, serialized across test processes with a file lock) and
// returns the backend directory, laid out as <dir>/<name>/libtriton_<name>.so.
func BackendDir(t testing.TB) string {
	t.Helper()
	root := RepoRoot(t)
	buildOnce.Do(func() { buildErr = makeBackends(root) })
	if buildErr != nil {
		t.Fatalf("testenv: building the backends failed: %v", buildErr)
	}
	return filepath.Join(root, "backends")
}

func makeBackends(root string) error {
	_, err := makeLocked(root, "backends")
	return err
}

// Make runs make with args in the repository root, holding the lock that
// BackendDir's build holds, so that test processes never run make on the
// same outputs at once. It fails the test if make fails, and returns what
// make printed.
func Make(t testing.TB, args ...string) string {
	t.Helper()
	out, err := makeLocked(RepoRoot(t), args...)
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	return out
}

func makeLocked(root string, args ...string) (string, error) {
	if err := os.MkdirAll(filepath.Join(root, "build"), 0o755); err != nil {
		return "", err
	}
	lock, err := os.OpenFile(filepath.Join(root, "build", ".testenv.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return "", err
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	cmd := exec.Command("make", append([]string{"--no-print-directory"}, args...)...)
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("make %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// Model is one model directory for a test repository.
type Model struct {
	Name     string
	Config   string   // config.pbtxt text
	Versions []int    // version directories to create (default: 1)
	Files    []string // extra files to copy into version 1 (absolute paths)
}

// Repository writes a model repository into a temporary directory and
// returns its path.
func Repository(t testing.TB, models ...Model) string {
	t.Helper()
	repo := t.TempDir()
	for _, m := range models {
		dir := filepath.Join(repo, m.Name)
		versions := m.Versions
		if versions == nil {
			versions = []int{1}
		}
		for _, v := range versions {
			if err := os.MkdirAll(filepath.Join(dir, fmt.Sprint(v)), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(dir, "config.pbtxt"), []byte(m.Config), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, f := range m.Files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "1", filepath.Base(f)), data, 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	return repo
}

// ExampleModels returns the path of the project's examples/models repository.
func ExampleModels(t testing.TB) string {
	return filepath.Join(RepoRoot(t), "examples", "models")
}

// ExampleConfig returns the config.pbtxt of one of examples/models.
func ExampleConfig(t testing.TB, model string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(ExampleModels(t), model, "config.pbtxt"))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// SharedLibrary compiles C source files into a shared library named
// lib<name>.so in a temporary directory, against the project's headers, and
// returns its path.
func SharedLibrary(t testing.TB, name string, sources ...string) string {
	t.Helper()
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "gcc"
	}
	if _, err := exec.LookPath(cc); err != nil {
		t.Skipf("testenv: no C compiler (%s) to build %s", cc, name)
	}
	out := filepath.Join(t.TempDir(), "lib"+name+".so")
	args := []string{"-shared", "-fPIC", "-std=c11", "-Wall", "-Wextra", "-Werror", "-I", filepath.Join(RepoRoot(t), "include"), "-o", out}
	args = append(args, sources...)
	cmd := exec.Command(cc, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("testenv: %s %s: %v\n%s", cc, strings.Join(args, " "), err, stderr.String())
	}
	return out
}

// CopyFile copies src to dst, creating dst's directory.
func CopyFile(t testing.TB, src, dst string) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, data, 0o755); err != nil {
		t.Fatal(err)
	}
}

// ModelControlRepository lays out the repository the tests of the
// modelcontrol backend (backends_c/modelcontrol) serve: models "control"
// and "probe" of that backend, and the example models its commands load,
// unload, describe and call (identity_fp32, identity_int32, square_int32,
// square_pipeline).
func ModelControlRepository(t testing.TB) string {
	t.Helper()
	control := func(name string) string {
		return fmt.Sprintf(`name: "%s"
backend: "modelcontrol"
max_batch_size: 0
input [ { name: "COMMAND" data_type: TYPE_STRING dims: [ 1 ] } ]
output [ { name: "REPORT" data_type: TYPE_STRING dims: [ 1 ] } ]
`, name)
	}
	models := []Model{{Name: "control", Config: control("control")}, {Name: "probe", Config: control("probe")}}
	for _, name := range []string{"identity_fp32", "identity_int32", "square_int32", "square_pipeline"} {
		models = append(models, Model{Name: name, Config: ExampleConfig(t, name)})
	}
	return Repository(t, models...)
}
