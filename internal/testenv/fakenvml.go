package testenv

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The fake NVML's two GPUs (testdata/fake_nvml.c), as NVML reports them.
const (
	FakeNVMLDriver = "999.1.2"
	FakeNVMLGPU0   = "GPU-11111111-2222-3333-4444-555555555555" // Fake H100: 9.0, 80 GiB, 3 GiB used, 42% busy, 123.456 W of 700 W
	FakeNVMLGPU1   = "GPU-66666666-7777-8888-9999-000000000000" // Fake A100: 8.0, 40 GiB, 1 GiB used, 50% busy, 100 W of 400 W
)

// FakeNVML compiles the fake NVML library into a temporary directory as
// libnvidia-ml.so.1 and returns its path: load it in place of the real one
// (gpu.OpenNVML, serve's hidden --nvml-library). Each define (a macro
// name) is passed to the compiler: FAKENVML_NO_ENERGY leaves out
// nvmlDeviceGetTotalEnergyConsumption, as drivers older than Volta's do.
// Tests that need a C compiler are skipped without one.
func FakeNVML(t testing.TB, defines ...string) string {
	t.Helper()
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "gcc"
	}
	if _, err := exec.LookPath(cc); err != nil {
		t.Skipf("testenv: no C compiler (%s) to build the fake NVML", cc)
	}
	out := filepath.Join(t.TempDir(), "libnvidia-ml.so.1")
	src := filepath.Join(RepoRoot(t), "internal", "testenv", "testdata", "fake_nvml.c")
	args := []string{"-shared", "-fPIC", "-std=c11", "-Wall", "-Wextra", "-Werror", "-Wl,-soname,libnvidia-ml.so.1", "-o", out}
	for _, d := range defines {
		args = append(args, "-D"+d)
	}
	cmd := exec.Command(cc, append(args, src)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("testenv: %s %s: %v\n%s", cc, strings.Join(args, " "), err, stderr.String())
	}
	return out
}
