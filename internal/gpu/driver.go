package gpu

import (
	"fmt"
	"runtime"
	"unsafe"

	"github.com/ebitengine/purego"
)

// CUDALibrary is the CUDA driver library the server loads by default.
const CUDALibrary = "libcuda.so.1"

// cuResult is a CUresult.
type cuResult int32

// ipcHandleSize is the size of a CUipcMemHandle.
const ipcHandleSize = 64

// cuMemHostAllocPortable is CU_MEMHOSTALLOC_PORTABLE: the memory is pinned
// for every context, as Triton's pinned pool is (cudaHostAllocPortable).
const cuMemHostAllocPortable = 0x01

// Driver is the CUDA driver API, loaded at run time with purego: there is
// no link-time dependency on CUDA, and a missing library is an error from
// OpenDriver. Its methods may be called from any goroutine.
type Driver struct {
	path string
	lib  uintptr
	fn   driverFuncs
	// setCurrent is cuCtxSetCurrent's address, which package abi calls
	// from C right before a backend's entry point (see ContextHook).
	setCurrent uintptr
}

type driverFuncs struct {
	init           func(flags uint32) cuResult
	driverVersion  func(v *int32) cuResult
	deviceCount    func(n *int32) cuResult
	deviceGet      func(dev *int32, ordinal int32) cuResult
	ctxRetain      func(ctx *uintptr, dev int32) cuResult
	ctxRelease     func(dev int32) cuResult
	ctxSetCurrent  func(ctx uintptr) cuResult
	ctxGetCurrent  func(ctx *uintptr) cuResult
	memAlloc       func(p *uintptr, size uintptr) cuResult
	memFree        func(p uintptr) cuResult
	memHostAlloc   func(p *uintptr, size uintptr, flags uint32) cuResult
	memFreeHost    func(p uintptr) cuResult
	memcpyDtoH     func(dst unsafe.Pointer, src uintptr, n uintptr) cuResult
	memcpyHtoD     func(dst uintptr, src unsafe.Pointer, n uintptr) cuResult
	ipcGetHandle   func(handle *[ipcHandleSize]byte, p uintptr) cuResult // optional
	getErrorString func(r cuResult, s **byte) cuResult                   // optional

	// CUDA shared memory (ipc.go); optional.
	ipcOpen   func(p *uintptr, handle ipcMemHandle, flags uint32) cuResult
	ipcClose  func(p uintptr) cuResult
	addrRange func(base *uintptr, size *uintptr, p uintptr) cuResult
}

// OpenDriver loads the CUDA driver library at path ("" is CUDALibrary,
// searched as dlopen searches) and initializes it (cuInit).
func OpenDriver(path string) (*Driver, error) {
	if path == "" {
		path = CUDALibrary
	}
	lib, err := purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		return nil, fmt.Errorf("load the CUDA driver: %w", err)
	}
	d := &Driver{path: path, lib: lib}
	f := &d.fn
	for _, s := range []symbol{
		{"cuInit", &f.init, false},
		{"cuDriverGetVersion", &f.driverVersion, false},
		{"cuDeviceGetCount", &f.deviceCount, false},
		{"cuDeviceGet", &f.deviceGet, false},
		{"cuDevicePrimaryCtxRetain", &f.ctxRetain, false},
		{"cuDevicePrimaryCtxRelease_v2", &f.ctxRelease, false},
		{"cuCtxSetCurrent", &f.ctxSetCurrent, false},
		{"cuCtxGetCurrent", &f.ctxGetCurrent, false},
		{"cuMemAlloc_v2", &f.memAlloc, false},
		{"cuMemFree_v2", &f.memFree, false},
		{"cuMemHostAlloc", &f.memHostAlloc, false},
		{"cuMemFreeHost", &f.memFreeHost, false},
		{"cuMemcpyDtoH_v2", &f.memcpyDtoH, false},
		{"cuMemcpyHtoD_v2", &f.memcpyHtoD, false},
		{"cuIpcGetMemHandle", &f.ipcGetHandle, true},
		{"cuIpcOpenMemHandle", &f.ipcOpen, true},
		{"cuIpcOpenMemHandle_v2", &f.ipcOpen, true}, // the current one, where present
		{"cuIpcCloseMemHandle", &f.ipcClose, true},
		{"cuMemGetAddressRange_v2", &f.addrRange, true},
		{"cuGetErrorString", &f.getErrorString, true},
	} {
		addr, err := purego.Dlsym(lib, s.name)
		if err != nil || addr == 0 {
			if s.optional {
				continue
			}
			_ = purego.Dlclose(lib)
			return nil, fmt.Errorf("CUDA driver %s lacks %s", path, s.name)
		}
		purego.RegisterFunc(s.fptr, addr)
		if s.name == "cuCtxSetCurrent" {
			d.setCurrent = addr
		}
	}
	if err := d.check("cuInit", f.init(0)); err != nil {
		_ = purego.Dlclose(lib)
		return nil, err
	}
	return d, nil
}

// Path returns the library the driver was loaded from.
func (d *Driver) Path() string { return d.path }

// Version returns the driver's CUDA version as "12.4".
func (d *Driver) Version() string {
	var v int32
	if d.fn.driverVersion(&v) != 0 {
		return "unknown"
	}
	return fmt.Sprintf("%d.%d", v/1000, v%1000/10)
}

// DeviceCount returns how many devices the driver sees (after
// CUDA_VISIBLE_DEVICES, which the driver applies itself).
func (d *Driver) DeviceCount() (int, error) {
	var n int32
	if err := d.check("cuDeviceGetCount", d.fn.deviceCount(&n)); err != nil {
		return 0, err
	}
	return int(n), nil
}

// retainPrimary retains the primary context of device ordinal id.
func (d *Driver) retainPrimary(id int) (uintptr, error) {
	var dev int32
	if err := d.check("cuDeviceGet", d.fn.deviceGet(&dev, int32(id))); err != nil {
		return 0, fmt.Errorf("GPU %d: %w", id, err)
	}
	var ctx uintptr
	if err := d.check("cuDevicePrimaryCtxRetain", d.fn.ctxRetain(&ctx, dev)); err != nil {
		return 0, fmt.Errorf("GPU %d: %w", id, err)
	}
	return ctx, nil
}

func (d *Driver) releasePrimary(id int) error {
	return d.check("cuDevicePrimaryCtxRelease", d.fn.ctxRelease(int32(id)))
}

// onContext runs f on a thread with ctx current: the goroutine keeps its
// thread from setting the context to f's return, so no other goroutine's
// CUDA call runs in between on it. The thread's context is restored
// afterwards: it may be a backend's thread (a response sent from it is
// copied to the host here), whose CUDA state is the backend's.
func (d *Driver) onContext(ctx uintptr, f func() cuResult) cuResult {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var prev uintptr
	if r := d.fn.ctxGetCurrent(&prev); r != 0 {
		return r
	}
	if prev != ctx {
		if r := d.fn.ctxSetCurrent(ctx); r != 0 {
			return r
		}
		defer d.fn.ctxSetCurrent(prev)
	}
	return f()
}

// check turns a CUresult into an error naming the call.
func (d *Driver) check(call string, r cuResult) error {
	if r == 0 {
		return nil
	}
	return fmt.Errorf("%s: CUDA error %d (%s)", call, r, d.describe(r))
}

func (d *Driver) describe(r cuResult) string {
	if d.fn.getErrorString != nil {
		var s *byte
		if d.fn.getErrorString(r, &s) == 0 && s != nil {
			return cString(s)
		}
	}
	return "unknown error"
}
