package gpu

import (
	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/gpus"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"
)

// NewMockNVML returns go-nvml's mock of a DGX A100 with count GPUs, for
// tests only (the server uses it when TRITONHOST_TEST_MOCK_NVML_GPUS is
// set). Besides what go-nvml's mock answers, each GPU reports the figures
// Collector reads, fixed: 50% busy, 1 GiB used, 100 W of a 400 W limit,
// and no energy used.
func NewMockNVML(count int) nvml.Interface {
	s := dgxa100.NewWithGPUs(gpus.Multiple(count, gpus.A100_SXM4_40GB)...)
	for _, d := range s.Devices {
		dev := d.(*server.Device)
		total := dev.Config.MemoryMB << 20
		dev.GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) {
			return nvml.Utilization{Gpu: 50, Memory: 10}, nvml.SUCCESS
		}
		dev.GetMemoryInfoFunc = func() (nvml.Memory, nvml.Return) {
			return nvml.Memory{Total: total, Used: 1 << 30, Free: total - 1<<30}, nvml.SUCCESS
		}
		dev.GetPowerUsageFunc = func() (uint32, nvml.Return) { return 100_000, nvml.SUCCESS }
		dev.GetEnforcedPowerLimitFunc = func() (uint32, nvml.Return) { return 400_000, nvml.SUCCESS }
		dev.GetTotalEnergyConsumptionFunc = func() (uint64, nvml.Return) { return 0, nvml.SUCCESS }
	}
	return s
}
