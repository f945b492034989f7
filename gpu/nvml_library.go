package gpu

import (
	"fmt"
	"sync"
	"unsafe"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/ebitengine/purego"
)

// NVMLLibrary is the NVML shared library the server loads by default.
const NVMLLibrary = "libnvidia-ml.so.1"

// nvmlLibrary is the part of nvml.Interface tritonhost uses, on
// libnvidia-ml.so.1 loaded with purego. Methods it does not implement come
// from the embedded nil interface: calling one panics, and nothing in this
// package does.
type nvmlLibrary struct {
	nvml.Interface

	path string
	mu   sync.Mutex
	lib  uintptr // dlopen handle while loaded
	fn   nvmlFuncs
}

// nvmlFuncs are the NVML functions, registered with purego. Those marked
// optional may be nil: they are missing from older drivers.
type nvmlFuncs struct {
	init          func() nvml.Return
	shutdown      func() nvml.Return
	driverVersion func(buf *byte, n uint32) nvml.Return
	count         func(n *uint32) nvml.Return
	handleByIndex func(i uint32, dev *uintptr) nvml.Return
	uuid          func(dev uintptr, buf *byte, n uint32) nvml.Return
	name          func(dev uintptr, buf *byte, n uint32) nvml.Return
	memory        func(dev uintptr, m *nvml.Memory) nvml.Return
	capability    func(dev uintptr, major, minor *int32) nvml.Return
	utilization   func(dev uintptr, u *nvml.Utilization) nvml.Return // optional
	powerUsage    func(dev uintptr, mw *uint32) nvml.Return          // optional
	powerLimit    func(dev uintptr, mw *uint32) nvml.Return          // optional
	energy        func(dev uintptr, mj *uint64) nvml.Return          // optional
	errorString   func(r nvml.Return) *byte                          // optional
}

// OpenNVML returns an nvml.Interface on the NVML library at path (a file
// name is searched as dlopen searches; "" is NVMLLibrary). Nothing is
// loaded until Init; an Init that cannot load the library or one of its
// required functions returns ERROR_LIBRARY_NOT_FOUND or
// ERROR_FUNCTION_NOT_FOUND.
func OpenNVML(path string) nvml.Interface {
	if path == "" {
		path = NVMLLibrary
	}
	return &nvmlLibrary{path: path}
}

// symbol is one function to look up: its name, where to register it, and
// whether its absence fails Init.
type symbol struct {
	name     string
	fptr     any
	optional bool
}

func (l *nvmlLibrary) symbols() []symbol {
	f := &l.fn
	return []symbol{
		{"nvmlInit_v2", &f.init, false},
		{"nvmlShutdown", &f.shutdown, false},
		{"nvmlSystemGetDriverVersion", &f.driverVersion, false},
		{"nvmlDeviceGetCount_v2", &f.count, false},
		{"nvmlDeviceGetHandleByIndex_v2", &f.handleByIndex, false},
		{"nvmlDeviceGetUUID", &f.uuid, false},
		{"nvmlDeviceGetName", &f.name, false},
		{"nvmlDeviceGetMemoryInfo", &f.memory, false},
		{"nvmlDeviceGetCudaComputeCapability", &f.capability, false},
		{"nvmlDeviceGetUtilizationRates", &f.utilization, true},
		{"nvmlDeviceGetPowerUsage", &f.powerUsage, true},
		{"nvmlDeviceGetEnforcedPowerLimit", &f.powerLimit, true},
		{"nvmlDeviceGetTotalEnergyConsumption", &f.energy, true},
		{"nvmlErrorString", &f.errorString, true},
	}
}

// Init loads the library (once) and initializes NVML.
func (l *nvmlLibrary) Init() nvml.Return {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lib == 0 {
		if ret := l.load(); ret != nvml.SUCCESS {
			return ret
		}
	}
	return l.fn.init()
}

func (l *nvmlLibrary) load() nvml.Return {
	lib, err := purego.Dlopen(l.path, purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		return nvml.ERROR_LIBRARY_NOT_FOUND
	}
	for _, s := range l.symbols() {
		addr, err := purego.Dlsym(lib, s.name)
		if err != nil || addr == 0 {
			if s.optional {
				continue
			}
			l.fn = nvmlFuncs{}
			_ = purego.Dlclose(lib)
			return nvml.ERROR_FUNCTION_NOT_FOUND
		}
		purego.RegisterFunc(s.fptr, addr)
	}
	l.lib = lib
	return nvml.SUCCESS
}

// loaded reports whether Init loaded the library; every other method
// returns ERROR_UNINITIALIZED until then.
func (l *nvmlLibrary) loaded() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lib != 0
}

// Shutdown shuts NVML down; the library stays loaded.
func (l *nvmlLibrary) Shutdown() nvml.Return {
	if !l.loaded() {
		return nvml.ERROR_UNINITIALIZED
	}
	return l.fn.shutdown()
}

// ErrorString returns NVML's description of r.
func (l *nvmlLibrary) ErrorString(r nvml.Return) string {
	if l.loaded() && l.fn.errorString != nil {
		if p := l.fn.errorString(r); p != nil {
			return cString(p)
		}
	}
	return r.Error()
}

// SystemGetDriverVersion returns the driver's version string.
func (l *nvmlLibrary) SystemGetDriverVersion() (string, nvml.Return) {
	if !l.loaded() {
		return "", nvml.ERROR_UNINITIALIZED
	}
	return l.text(func(b *byte, n uint32) nvml.Return { return l.fn.driverVersion(b, n) })
}

// DeviceGetCount returns how many GPUs NVML sees.
func (l *nvmlLibrary) DeviceGetCount() (int, nvml.Return) {
	if !l.loaded() {
		return 0, nvml.ERROR_UNINITIALIZED
	}
	var n uint32
	ret := l.fn.count(&n)
	return int(n), ret
}

// DeviceGetHandleByIndex returns the GPU of NVML index i.
func (l *nvmlLibrary) DeviceGetHandleByIndex(i int) (nvml.Device, nvml.Return) {
	if !l.loaded() {
		return nil, nvml.ERROR_UNINITIALIZED
	}
	if i < 0 {
		return nil, nvml.ERROR_INVALID_ARGUMENT
	}
	var h uintptr
	if ret := l.fn.handleByIndex(uint32(i), &h); ret != nvml.SUCCESS {
		return nil, ret
	}
	return &nvmlDevice{lib: l, h: h}, nvml.SUCCESS
}

// text calls an NVML function that fills a string buffer.
func (l *nvmlLibrary) text(get func(*byte, uint32) nvml.Return) (string, nvml.Return) {
	buf := make([]byte, 256)
	if ret := get(&buf[0], uint32(len(buf))); ret != nvml.SUCCESS {
		return "", ret
	}
	return cString(&buf[0]), nvml.SUCCESS
}

// cString copies a NUL-terminated C string.
func cString(p *byte) string {
	n := 0
	for *(*byte)(unsafe.Add(unsafe.Pointer(p), n)) != 0 {
		n++
	}
	return string(unsafe.Slice(p, n))
}

// nvmlDevice is one GPU's NVML handle. Like nvmlLibrary, it implements
// only the methods tritonhost uses.
type nvmlDevice struct {
	nvml.Device
	lib *nvmlLibrary
	h   uintptr
}

// GetUUID returns the GPU's UUID ("GPU-...").
func (d *nvmlDevice) GetUUID() (string, nvml.Return) {
	return d.lib.text(func(b *byte, n uint32) nvml.Return { return d.lib.fn.uuid(d.h, b, n) })
}

// GetName returns the GPU's product name.
func (d *nvmlDevice) GetName() (string, nvml.Return) {
	return d.lib.text(func(b *byte, n uint32) nvml.Return { return d.lib.fn.name(d.h, b, n) })
}

// GetMemoryInfo returns the GPU's total, free and used memory in bytes.
func (d *nvmlDevice) GetMemoryInfo() (nvml.Memory, nvml.Return) {
	var m nvml.Memory
	ret := d.lib.fn.memory(d.h, &m)
	return m, ret
}

// GetCudaComputeCapability returns the GPU's compute capability.
func (d *nvmlDevice) GetCudaComputeCapability() (int, int, nvml.Return) {
	var major, minor int32
	ret := d.lib.fn.capability(d.h, &major, &minor)
	return int(major), int(minor), ret
}

// GetUtilizationRates returns the percentages of time the GPU and its
// memory were busy over NVML's last sample period.
func (d *nvmlDevice) GetUtilizationRates() (nvml.Utilization, nvml.Return) {
	var u nvml.Utilization
	if d.lib.fn.utilization == nil {
		return u, nvml.ERROR_FUNCTION_NOT_FOUND
	}
	ret := d.lib.fn.utilization(d.h, &u)
	return u, ret
}

// GetPowerUsage returns the GPU's power draw in milliwatts.
func (d *nvmlDevice) GetPowerUsage() (uint32, nvml.Return) {
	return d.milliwatts(d.lib.fn.powerUsage)
}

// GetEnforcedPowerLimit returns the GPU's power limit in milliwatts.
func (d *nvmlDevice) GetEnforcedPowerLimit() (uint32, nvml.Return) {
	return d.milliwatts(d.lib.fn.powerLimit)
}

func (d *nvmlDevice) milliwatts(fn func(uintptr, *uint32) nvml.Return) (uint32, nvml.Return) {
	if fn == nil {
		return 0, nvml.ERROR_FUNCTION_NOT_FOUND
	}
	var mw uint32
	ret := fn(d.h, &mw)
	return mw, ret
}

// GetTotalEnergyConsumption returns the energy the GPU used since the
// driver loaded, in millijoules.
func (d *nvmlDevice) GetTotalEnergyConsumption() (uint64, nvml.Return) {
	if d.lib.fn.energy == nil {
		return 0, nvml.ERROR_FUNCTION_NOT_FOUND
	}
	var mj uint64
	ret := d.lib.fn.energy(d.h, &mj)
	return mj, ret
}

// String names the device in messages.
func (d *nvmlDevice) String() string { return fmt.Sprintf("nvml device %#x", d.h) }
