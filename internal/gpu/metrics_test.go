//go:build cgo

// go-nvml's mock is part of go-nvml's cgo package (see discover_test.go).

package gpu

import (
	"fmt"
	"strings"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/gpus"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// meter gives a mock GPU the figures a real one reports: utilization
// percent, memory, milliwatts and a running millijoule counter.
func meter(d *server.Device, util uint32, used uint64, mw, limit uint32, mj *uint64) {
	d.GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) {
		return nvml.Utilization{Gpu: util}, nvml.SUCCESS
	}
	d.GetMemoryInfoFunc = func() (nvml.Memory, nvml.Return) {
		return nvml.Memory{Total: d.Config.MemoryMB << 20, Used: used, Free: d.Config.MemoryMB<<20 - used}, nvml.SUCCESS
	}
	d.GetPowerUsageFunc = func() (uint32, nvml.Return) { return mw, nvml.SUCCESS }
	d.GetEnforcedPowerLimitFunc = func() (uint32, nvml.Return) { return limit, nvml.SUCCESS }
	d.GetTotalEnergyConsumptionFunc = func() (uint64, nvml.Return) { return *mj, nvml.SUCCESS }
}

func TestCollectorReportsTritonsGPUMetrics(t *testing.T) {
	s := dgxa100.NewWithGPUs(gpus.A100_SXM4_40GB, gpus.A100_SXM4_40GB, oldGPU)
	energy := []uint64{5_000_000, 1_000}
	meter(s.Devices[0].(*server.Device), 75, 1<<30, 250_500, 400_000, &energy[0])
	meter(s.Devices[1].(*server.Device), 0, 0, 60_000, 400_000, &energy[1])
	u := uuids(s)

	c := NewCollector(Discover(fromGoNVML(s), DiscoverOptions{}))
	energy[0] += 1_500 // 1.5 J since the server started
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	want := fmt.Sprintf(`
# HELP nv_energy_consumption GPU energy consumption in joules since the Triton Server started
# TYPE nv_energy_consumption counter
nv_energy_consumption{gpu_uuid="%[1]s"} 1.5
nv_energy_consumption{gpu_uuid="%[2]s"} 0
# HELP nv_gpu_memory_total_bytes GPU total memory, in bytes
# TYPE nv_gpu_memory_total_bytes gauge
nv_gpu_memory_total_bytes{gpu_uuid="%[1]s"} 4.294967296e+10
nv_gpu_memory_total_bytes{gpu_uuid="%[2]s"} 4.294967296e+10
# HELP nv_gpu_memory_used_bytes GPU used memory, in bytes
# TYPE nv_gpu_memory_used_bytes gauge
nv_gpu_memory_used_bytes{gpu_uuid="%[1]s"} 1.073741824e+09
nv_gpu_memory_used_bytes{gpu_uuid="%[2]s"} 0
# HELP nv_gpu_power_limit GPU power management limit in watts
# TYPE nv_gpu_power_limit gauge
nv_gpu_power_limit{gpu_uuid="%[1]s"} 400
nv_gpu_power_limit{gpu_uuid="%[2]s"} 400
# HELP nv_gpu_power_usage GPU power usage in watts
# TYPE nv_gpu_power_usage gauge
nv_gpu_power_usage{gpu_uuid="%[1]s"} 250.5
nv_gpu_power_usage{gpu_uuid="%[2]s"} 60
# HELP nv_gpu_utilization GPU utilization rate [0.0 - 1.0)
# TYPE nv_gpu_utilization gauge
nv_gpu_utilization{gpu_uuid="%[1]s"} 0.75
nv_gpu_utilization{gpu_uuid="%[2]s"} 0
`, u[0], u[1])
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
	if n := testutil.CollectAndCount(c); n != 12 {
		t.Errorf("%d series, want 12: the hidden GPU (compute capability 5.2) is not reported", n)
	}
}

func TestCollectorLeavesOutWhatNVMLCannotTell(t *testing.T) {
	// go-nvml's mock answers memory only, as a GPU without power
	// management or an old driver would.
	s := dgxa100.NewWithGPUs(gpus.A100_SXM4_40GB)
	d := s.Devices[0].(*server.Device)
	notSupported := func() (uint32, nvml.Return) { return 0, nvml.ERROR_NOT_SUPPORTED }
	d.GetPowerUsageFunc, d.GetEnforcedPowerLimitFunc = notSupported, notSupported
	d.GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) { return nvml.Utilization{}, nvml.ERROR_NOT_SUPPORTED }
	d.GetTotalEnergyConsumptionFunc = func() (uint64, nvml.Return) { return 0, nvml.ERROR_FUNCTION_NOT_FOUND }
	c := NewCollector(Discover(fromGoNVML(s), DiscoverOptions{}))
	if n := testutil.CollectAndCount(c); n != 2 {
		t.Errorf("%d series, want the two memory gauges", n)
	}
	if n := testutil.CollectAndCount(NewCollector(Discovery{Unavailable: "no driver"})); n != 0 {
		t.Errorf("without NVML: %d series", n)
	}
}
