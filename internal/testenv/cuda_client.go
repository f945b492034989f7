package testenv

import (
	"runtime"
	"sync"
	"testing"
	"unsafe"

	"github.com/ebitengine/purego"
)

// CUDAClient is the client side of CUDA shared memory: what a CUDA
// application such as Triton's simple_grpc_cudashm_client does with the
// CUDA runtime (cudaMalloc, cudaMemcpy, cudaIpcGetMemHandle, cudaFree),
// through the driver API of a CUDA driver library, the fake one
// (FakeCUDADriver) or the machine's own (libcuda.so.1). Its memory can be
// opened by a server in this process or in another one. A failing call
// fails the test. Safe for concurrent use.
type CUDAClient struct {
	t   testing.TB
	lib uintptr
	fn  struct {
		init         func(flags uint32) int32
		retain       func(ctx *uintptr, dev int32) int32
		release      func(dev int32) int32
		setCurrent   func(ctx uintptr) int32
		alloc        func(p *uintptr, size uintptr) int32
		free         func(p uintptr) int32
		htod         func(dst uintptr, src unsafe.Pointer, n uintptr) int32
		dtoh         func(dst unsafe.Pointer, src uintptr, n uintptr) int32
		ipcGetHandle func(h *[64]byte, p uintptr) int32
	}

	mu     sync.Mutex
	ctx    map[int]uintptr // primary context retained, by device
	allocs map[uintptr]int // live allocations, by address: their device
}

// NewCUDAClient loads the CUDA driver library at path (FakeCUDADriver, or
// "libcuda.so.1" for the machine's own) for the test's client side. At
// cleanup it frees what it allocated and releases its contexts.
func NewCUDAClient(t testing.TB, path string) *CUDAClient {
	t.Helper()
	lib, err := purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		t.Fatalf("testenv: open CUDA driver: %v", err)
	}
	c := &CUDAClient{t: t, lib: lib, ctx: map[int]uintptr{}, allocs: map[uintptr]int{}}
	f := &c.fn
	for name, fptr := range map[string]any{
		"cuInit": &f.init, "cuDevicePrimaryCtxRetain": &f.retain, "cuDevicePrimaryCtxRelease_v2": &f.release,
		"cuCtxSetCurrent": &f.setCurrent, "cuMemAlloc_v2": &f.alloc, "cuMemFree_v2": &f.free,
		"cuMemcpyHtoD_v2": &f.htod, "cuMemcpyDtoH_v2": &f.dtoh, "cuIpcGetMemHandle": &f.ipcGetHandle,
	} {
		purego.RegisterLibFunc(fptr, lib, name)
	}
	c.check("cuInit", f.init(0))
	t.Cleanup(c.close)
	return c
}

func (c *CUDAClient) check(call string, r int32) {
	if r != 0 {
		c.t.Helper()
		c.t.Fatalf("testenv: CUDA client: %s: CUDA error %d", call, r)
	}
}

// on runs f on a thread with device dev's primary context current.
func (c *CUDAClient) on(dev int, f func() int32) int32 {
	c.mu.Lock()
	ctx, ok := c.ctx[dev]
	if !ok {
		if r := c.fn.retain(&ctx, int32(dev)); r != 0 {
			c.mu.Unlock()
			return r
		}
		c.ctx[dev] = ctx
	}
	c.mu.Unlock()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if r := c.fn.setCurrent(ctx); r != 0 {
		return r
	}
	defer c.fn.setCurrent(0)
	return f()
}

// Alloc returns size bytes of device memory on GPU dev (cudaMalloc).
func (c *CUDAClient) Alloc(dev, size int) uintptr {
	c.t.Helper()
	var p uintptr
	c.check("cuMemAlloc", c.on(dev, func() int32 { return c.fn.alloc(&p, uintptr(size)) }))
	c.mu.Lock()
	c.allocs[p] = dev
	c.mu.Unlock()
	return p
}

// Free frees memory Alloc returned (cudaFree).
func (c *CUDAClient) Free(p uintptr) {
	c.t.Helper()
	c.mu.Lock()
	dev, ok := c.allocs[p]
	delete(c.allocs, p)
	c.mu.Unlock()
	if !ok {
		c.t.Fatalf("testenv: CUDA client: %#x is not an allocation of the client", p)
	}
	c.check("cuMemFree", c.on(dev, func() int32 { return c.fn.free(p) }))
}

// Write copies data to device memory at dst on GPU dev (cudaMemcpy, host
// to device).
func (c *CUDAClient) Write(dev int, dst uintptr, data []byte) {
	c.t.Helper()
	if len(data) == 0 {
		return
	}
	c.check("cuMemcpyHtoD", c.on(dev, func() int32 { return c.fn.htod(dst, unsafe.Pointer(&data[0]), uintptr(len(data))) }))
}

// Read returns n bytes of device memory at src on GPU dev (cudaMemcpy,
// device to host).
func (c *CUDAClient) Read(dev int, src uintptr, n int) []byte {
	c.t.Helper()
	out := make([]byte, n)
	if n > 0 {
		c.check("cuMemcpyDtoH", c.on(dev, func() int32 { return c.fn.dtoh(unsafe.Pointer(&out[0]), src, uintptr(n)) }))
	}
	return out
}

// IPCHandle returns the CUDA IPC handle of the allocation holding p on GPU
// dev (cudaIpcGetMemHandle), the raw_handle a client registers.
func (c *CUDAClient) IPCHandle(dev int, p uintptr) []byte {
	c.t.Helper()
	var h [64]byte
	c.check("cuIpcGetMemHandle", c.on(dev, func() int32 { return c.fn.ipcGetHandle(&h, p) }))
	return h[:]
}

func (c *CUDAClient) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for p, dev := range c.allocs {
		ctx := c.ctx[dev]
		runtime.LockOSThread()
		c.fn.setCurrent(ctx)
		c.fn.free(p)
		c.fn.setCurrent(0)
		runtime.UnlockOSThread()
	}
	for dev := range c.ctx {
		c.fn.release(int32(dev))
	}
	c.allocs, c.ctx = nil, nil
	_ = purego.Dlclose(c.lib)
}
