package testenv

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ebitengine/purego"
)

// FakeCUDAStats are the fake CUDA driver's counters (testdata/fake_cuda.c,
// struct fakecuda_stats: same layout).
type FakeCUDAStats struct {
	LiveDevice       int64 // device allocations not freed
	LiveHost         int64 // page-locked host allocations not freed
	LiveBytes        int64
	Contexts         int64 // primary context references held
	HtoD, DtoH       int64 // copies
	SetCurrent       int64 // cuCtxSetCurrent calls
	DeviceMismatches int64 // copies while another device's context was current
}

// FakeCUDADriver compiles the fake CUDA driver into a temporary directory
// as libcuda.so.1 (with that soname) and returns its path: load it in place
// of the real driver. Tests that need a C compiler are skipped without one.
func FakeCUDADriver(t testing.TB) string {
	t.Helper()
	return buildFakeCUDA(t, t.TempDir())
}

var shared struct {
	once sync.Once
	dir  string
	path string
	err  error
}

// SharedFakeCUDADriver builds the fake CUDA driver once per test process
// and returns its path, for tests whose backends open "libcuda.so.1"
// themselves: the dynamic loader finds a loaded library by its soname, so
// one process should load one fake driver. RemoveSharedFakeCUDADriver
// deletes it at the end (TestMain).
func SharedFakeCUDADriver(t testing.TB) string {
	t.Helper()
	shared.once.Do(func() {
		if shared.dir, shared.err = os.MkdirTemp("", "tritonhost-fakecuda-"); shared.err == nil {
			shared.path = buildFakeCUDA(t, shared.dir)
		}
	})
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.path
}

// RemoveSharedFakeCUDADriver deletes what SharedFakeCUDADriver built.
func RemoveSharedFakeCUDADriver() {
	if shared.dir != "" {
		_ = os.RemoveAll(shared.dir)
	}
}

func buildFakeCUDA(t testing.TB, dir string) string {
	t.Helper()
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "gcc"
	}
	if _, err := exec.LookPath(cc); err != nil {
		t.Skipf("testenv: no C compiler (%s) to build the fake CUDA driver", cc)
	}
	out := filepath.Join(dir, "libcuda.so.1")
	src := filepath.Join(RepoRoot(t), "internal", "testenv", "testdata", "fake_cuda.c")
	args := []string{"-shared", "-fPIC", "-std=c11", "-Wall", "-Wextra", "-Werror", "-pthread",
		"-Wl,-soname,libcuda.so.1", "-o", out, src}
	cmd := exec.Command(cc, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("testenv: %s %s: %v\n%s", cc, strings.Join(args, " "), err, stderr.String())
	}
	return out
}

// ReadFakeCUDA returns the counters of the fake driver at path as loaded in
// this process (the server in the test's process must have loaded it).
func ReadFakeCUDA(t testing.TB, path string) FakeCUDAStats {
	t.Helper()
	lib, err := purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		t.Fatalf("testenv: open fake CUDA driver: %v", err)
	}
	defer purego.Dlclose(lib)
	var stats func(*FakeCUDAStats)
	purego.RegisterLibFunc(&stats, lib, "fakecuda_stats")
	var s FakeCUDAStats
	stats(&s)
	return s
}

// ReadFakeCUDAReport parses the counters the fake driver of another
// process wrote to its FAKECUDA_REPORT file.
func ReadFakeCUDAReport(t testing.TB, file string) FakeCUDAStats {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("testenv: fake CUDA report: %v", err)
	}
	var s FakeCUDAStats
	_, err = fmt.Sscanf(strings.TrimSpace(string(data)),
		"live_device=%d live_host=%d live_bytes=%d contexts=%d htod=%d dtoh=%d set_current=%d device_mismatches=%d",
		&s.LiveDevice, &s.LiveHost, &s.LiveBytes, &s.Contexts, &s.HtoD, &s.DtoH, &s.SetCurrent, &s.DeviceMismatches)
	if err != nil {
		t.Fatalf("testenv: fake CUDA report %q: %v", data, err)
	}
	return s
}
