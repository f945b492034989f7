package gpu

import (
	"fmt"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
)

// NVMLLibrary is the NVML shared library the server loads by default.
const NVMLLibrary = "libnvidia-ml.so.1"

// nvmlLibrary is NVML on libnvidia-ml.so.1, loaded with purego when Init
// is first called.
type nvmlLibrary struct {
	path string
	mu   sync.Mutex
	lib  uintptr // dlopen handle while loaded
	fn   nvmlFuncs
}

// nvmlFuncs are the NVML functions, registered with purego. Those marked
// optional may be nil: they are missing from older drivers.
type nvmlFuncs struct {
	init          func() NVMLReturn
	shutdown      func() NVMLReturn
	driverVersion func(buf *byte, n uint32) NVMLReturn
	count         func(n *uint32) NVMLReturn
	handleByIndex func(i uint32, dev *uintptr) NVMLReturn
	uuid          func(dev uintptr, buf *byte, n uint32) NVMLReturn
	name          func(dev uintptr, buf *byte, n uint32) NVMLReturn
	memory        func(dev uintptr, m *NVMLMemory) NVMLReturn
	capability    func(dev uintptr, major, minor *int32) NVMLReturn
	utilization   func(dev uintptr, u *NVMLUtilization) NVMLReturn // optional
	powerUsage    func(dev uintptr, mw *uint32) NVMLReturn         // optional
	powerLimit    func(dev uintptr, mw *uint32) NVMLReturn         // optional
	energy        func(dev uintptr, mj *uint64) NVMLReturn         // optional
	errorString   func(r NVMLReturn) *byte                         // optional
}

// OpenNVML returns NVML on the library at path (a file
// name is searched as dlopen searches; "" is NVMLLibrary). Nothing is
// loaded until Init; an Init that cannot load the library or one of its
// required functions returns ERROR_LIBRARY_NOT_FOUND or
// ERROR_FUNCTION_NOT_FOUND.
func OpenNVML(path string) NVML {
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
func (l *nvmlLibrary) Init() NVMLReturn {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lib == 0 {
		if ret := l.load(); ret != NVMLSuccess {
			return ret
		}
	}
	return l.fn.init()
}

func (l *nvmlLibrary) load() NVMLReturn {
	lib, err := purego.Dlopen(l.path, purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		return NVMLErrorLibraryNotFound
	}
	for _, s := range l.symbols() {
		addr, err := purego.Dlsym(lib, s.name)
		if err != nil || addr == 0 {
			if s.optional {
				continue
			}
			l.fn = nvmlFuncs{}
			_ = purego.Dlclose(lib)
			return NVMLErrorFunctionNotFound
		}
		purego.RegisterFunc(s.fptr, addr)
	}
	l.lib = lib
	return NVMLSuccess
}

// loaded reports whether Init loaded the library; every other method
// returns ERROR_UNINITIALIZED until then.
func (l *nvmlLibrary) loaded() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lib != 0
}

// Shutdown shuts NVML down; the library stays loaded.
func (l *nvmlLibrary) Shutdown() NVMLReturn {
	if !l.loaded() {
		return NVMLErrorUninitialized
	}
	return l.fn.shutdown()
}

// ErrorString returns NVML's description of r.
func (l *nvmlLibrary) ErrorString(r NVMLReturn) string {
	if l.loaded() && l.fn.errorString != nil {
		if p := l.fn.errorString(r); p != nil {
			return cString(p)
		}
	}
	return r.Error()
}

// SystemGetDriverVersion returns the driver's version string.
func (l *nvmlLibrary) SystemGetDriverVersion() (string, NVMLReturn) {
	if !l.loaded() {
		return "", NVMLErrorUninitialized
	}
	return l.text(func(b *byte, n uint32) NVMLReturn { return l.fn.driverVersion(b, n) })
}

// DeviceGetCount returns how many GPUs NVML sees.
func (l *nvmlLibrary) DeviceGetCount() (int, NVMLReturn) {
	if !l.loaded() {
		return 0, NVMLErrorUninitialized
	}
	var n uint32
	ret := l.fn.count(&n)
	return int(n), ret
}

// DeviceGetHandleByIndex returns the GPU of NVML index i.
func (l *nvmlLibrary) DeviceGetHandleByIndex(i int) (NVMLDevice, NVMLReturn) {
	if !l.loaded() {
		return nil, NVMLErrorUninitialized
	}
	if i < 0 {
		return nil, NVMLErrorInvalidArgument
	}
	var h uintptr
	if ret := l.fn.handleByIndex(uint32(i), &h); ret != NVMLSuccess {
		return nil, ret
	}
	return &nvmlDevice{lib: l, h: h}, NVMLSuccess
}

// text calls an NVML function that fills a string buffer.
func (l *nvmlLibrary) text(get func(*byte, uint32) NVMLReturn) (string, NVMLReturn) {
	buf := make([]byte, 256)
	if ret := get(&buf[0], uint32(len(buf))); ret != NVMLSuccess {
		return "", ret
	}
	return cString(&buf[0]), NVMLSuccess
}

// cString copies a NUL-terminated C string.
func cString(p *byte) string {
	n := 0
	for *(*byte)(unsafe.Add(unsafe.Pointer(p), n)) != 0 {
		n++
	}
	return string(unsafe.Slice(p, n))
}

// nvmlDevice is one GPU's NVML handle.
type nvmlDevice struct {
	lib *nvmlLibrary
	h   uintptr
}

// GetUUID returns the GPU's UUID ("GPU-...").
func (d *nvmlDevice) GetUUID() (string, NVMLReturn) {
	return d.lib.text(func(b *byte, n uint32) NVMLReturn { return d.lib.fn.uuid(d.h, b, n) })
}

// GetName returns the GPU's product name.
func (d *nvmlDevice) GetName() (string, NVMLReturn) {
	return d.lib.text(func(b *byte, n uint32) NVMLReturn { return d.lib.fn.name(d.h, b, n) })
}

// GetMemoryInfo returns the GPU's total, free and used memory in bytes.
func (d *nvmlDevice) GetMemoryInfo() (NVMLMemory, NVMLReturn) {
	var m NVMLMemory
	ret := d.lib.fn.memory(d.h, &m)
	return m, ret
}

// GetCudaComputeCapability returns the GPU's compute capability.
func (d *nvmlDevice) GetCudaComputeCapability() (int, int, NVMLReturn) {
	var major, minor int32
	ret := d.lib.fn.capability(d.h, &major, &minor)
	return int(major), int(minor), ret
}

// GetUtilizationRates returns the percentages of time the GPU and its
// memory were busy over NVML's last sample period.
func (d *nvmlDevice) GetUtilizationRates() (NVMLUtilization, NVMLReturn) {
	var u NVMLUtilization
	if d.lib.fn.utilization == nil {
		return u, NVMLErrorFunctionNotFound
	}
	ret := d.lib.fn.utilization(d.h, &u)
	return u, ret
}

// GetPowerUsage returns the GPU's power draw in milliwatts.
func (d *nvmlDevice) GetPowerUsage() (uint32, NVMLReturn) {
	return d.milliwatts(d.lib.fn.powerUsage)
}

// GetEnforcedPowerLimit returns the GPU's power limit in milliwatts.
func (d *nvmlDevice) GetEnforcedPowerLimit() (uint32, NVMLReturn) {
	return d.milliwatts(d.lib.fn.powerLimit)
}

func (d *nvmlDevice) milliwatts(fn func(uintptr, *uint32) NVMLReturn) (uint32, NVMLReturn) {
	if fn == nil {
		return 0, NVMLErrorFunctionNotFound
	}
	var mw uint32
	ret := fn(d.h, &mw)
	return mw, ret
}

// GetTotalEnergyConsumption returns the energy the GPU used since the
// driver loaded, in millijoules.
func (d *nvmlDevice) GetTotalEnergyConsumption() (uint64, NVMLReturn) {
	if d.lib.fn.energy == nil {
		return 0, NVMLErrorFunctionNotFound
	}
	var mj uint64
	ret := d.lib.fn.energy(d.h, &mj)
	return mj, ret
}

var (
	_ NVML       = (*nvmlLibrary)(nil)
	_ NVMLDevice = (*nvmlDevice)(nil)
)

// String names the device in messages.
func (d *nvmlDevice) String() string { return fmt.Sprintf("nvml device %#x", d.h) }
