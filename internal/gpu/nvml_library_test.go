package gpu

import (
	"testing"

	"github.com/tritonhost/tritonhost/internal/testenv"
)

func TestOpenNVMLWithoutLibraryIsZeroGPUs(t *testing.T) {
	d := Discover(OpenNVML("/nonexistent/libnvidia-ml.so.1"), DiscoverOptions{})
	if len(d.GPUs) != 0 || d.Unavailable != "NVML: /nonexistent/libnvidia-ml.so.1 could not be loaded (no NVIDIA driver)" {
		t.Fatalf("%+v", d)
	}
}

// TestOpenNVMLReadsTheLibrary runs discovery and the metrics on a fake
// libnvidia-ml.so.1 through the purego loader the server uses, built
// without an optional function (the energy counter).
func TestOpenNVMLReadsTheLibrary(t *testing.T) {
	lib := OpenNVML(testenv.FakeNVML(t, "FAKENVML_NO_ENERGY"))
	if _, ret := lib.DeviceGetCount(); ret != NVMLErrorUninitialized {
		t.Errorf("before Init: %v", ret)
	}
	d := Discover(lib, DiscoverOptions{MinComputeCapability: 8.5})
	defer lib.Shutdown()
	if d.Unavailable != "" || d.Driver != testenv.FakeNVMLDriver || len(d.GPUs) != 2 {
		t.Fatalf("%+v", d)
	}
	h100, a100 := d.GPUs[0], d.GPUs[1]
	if h100.UUID != testenv.FakeNVMLGPU0 || h100.Name != "Fake H100" ||
		h100.MemoryBytes != 80<<30 || h100.Capability() != "9.0" || h100.Hidden != "" {
		t.Errorf("GPU 0: %+v", h100)
	}
	if a100.UUID != testenv.FakeNVMLGPU1 || a100.Capability() != "8.0" || a100.Hidden == "" {
		t.Errorf("GPU 1 should be hidden below compute capability 8.5: %+v", a100)
	}
	f := NewCollector(d).Snapshot()
	if len(f) != 1 || !f[0].HasUtilization || f[0].Utilization != 0.42 || f[0].MemoryUsed != 3<<30 ||
		f[0].PowerUsage != 123.456 || f[0].PowerLimit != 700 || f[0].HasEnergy {
		t.Errorf("figures %+v", f)
	}
	if ret := lib.Shutdown(); ret != NVMLSuccess {
		t.Errorf("Shutdown: %v", ret)
	}
	if _, ret := lib.DeviceGetCount(); ret != NVMLErrorUninitialized {
		t.Errorf("after Shutdown: %v, want %v", ret, NVMLErrorUninitialized)
	}
}

// TestOpenNVMLReadsTheEnergyCounter: with the energy counter, the
// collector reports the energy used since it was made.
func TestOpenNVMLReadsTheEnergyCounter(t *testing.T) {
	lib := OpenNVML(testenv.FakeNVML(t))
	d := Discover(lib, DiscoverOptions{})
	defer lib.Shutdown()
	f := NewCollector(d).Snapshot()
	if len(f) != 2 || !f[0].HasEnergy || f[0].Energy != 0 || !f[1].HasEnergy || f[1].Utilization != 0.5 || f[1].PowerLimit != 400 {
		t.Errorf("figures %+v", f)
	}
}
