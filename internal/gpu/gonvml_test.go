//go:build cgo

// go-nvml's mock is part of go-nvml's cgo package (see discover_test.go).

package gpu

import "github.com/NVIDIA/go-nvml/pkg/nvml"

// goNVML is NVML on an implementation of go-nvml's nvml.Interface (in
// these tests, go-nvml's mock of a DGX A100): the methods correspond one
// to one, and so do the statuses.
type goNVML struct{ lib nvml.Interface }

func fromGoNVML(lib nvml.Interface) NVML { return goNVML{lib} }

func (g goNVML) Init() NVMLReturn                { return NVMLReturn(g.lib.Init()) }
func (g goNVML) Shutdown() NVMLReturn            { return NVMLReturn(g.lib.Shutdown()) }
func (g goNVML) ErrorString(r NVMLReturn) string { return g.lib.ErrorString(nvml.Return(r)) }

func (g goNVML) SystemGetDriverVersion() (string, NVMLReturn) {
	v, r := g.lib.SystemGetDriverVersion()
	return v, NVMLReturn(r)
}

func (g goNVML) DeviceGetCount() (int, NVMLReturn) {
	n, r := g.lib.DeviceGetCount()
	return n, NVMLReturn(r)
}

func (g goNVML) DeviceGetHandleByIndex(i int) (NVMLDevice, NVMLReturn) {
	d, r := g.lib.DeviceGetHandleByIndex(i)
	if r != nvml.SUCCESS {
		return nil, NVMLReturn(r)
	}
	return goDevice{d}, NVMLSuccess
}

// goDevice is NVMLDevice on a go-nvml nvml.Device.
type goDevice struct{ dev nvml.Device }

func (d goDevice) GetUUID() (string, NVMLReturn) {
	s, r := d.dev.GetUUID()
	return s, NVMLReturn(r)
}

func (d goDevice) GetName() (string, NVMLReturn) {
	s, r := d.dev.GetName()
	return s, NVMLReturn(r)
}

func (d goDevice) GetMemoryInfo() (NVMLMemory, NVMLReturn) {
	m, r := d.dev.GetMemoryInfo()
	return NVMLMemory{Total: m.Total, Free: m.Free, Used: m.Used}, NVMLReturn(r)
}

func (d goDevice) GetCudaComputeCapability() (int, int, NVMLReturn) {
	major, minor, r := d.dev.GetCudaComputeCapability()
	return major, minor, NVMLReturn(r)
}

func (d goDevice) GetUtilizationRates() (NVMLUtilization, NVMLReturn) {
	u, r := d.dev.GetUtilizationRates()
	return NVMLUtilization{GPU: u.Gpu, Memory: u.Memory}, NVMLReturn(r)
}

func (d goDevice) GetPowerUsage() (uint32, NVMLReturn) {
	mw, r := d.dev.GetPowerUsage()
	return mw, NVMLReturn(r)
}

func (d goDevice) GetEnforcedPowerLimit() (uint32, NVMLReturn) {
	mw, r := d.dev.GetEnforcedPowerLimit()
	return mw, NVMLReturn(r)
}

func (d goDevice) GetTotalEnergyConsumption() (uint64, NVMLReturn) {
	mj, r := d.dev.GetTotalEnergyConsumption()
	return mj, NVMLReturn(r)
}

var (
	_ NVML       = goNVML{}
	_ NVMLDevice = goDevice{}
)
