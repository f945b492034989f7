package gpu

import (
	"bytes"
	"errors"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/serverlog"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// openFake loads a fresh fake CUDA driver (two devices) and returns it
// with its path, for testenv.ReadFakeCUDA.
func openFake(t *testing.T) (*Driver, string) {
	t.Helper()
	path := testenv.FakeCUDADriver(t)
	drv, err := OpenDriver(path)
	if err != nil {
		t.Fatal(err)
	}
	return drv, path
}

func newDevices(t *testing.T, opts MemoryOptions) (*Devices, string, *bytes.Buffer) {
	t.Helper()
	drv, path := openFake(t)
	var log bytes.Buffer
	d, err := NewDevices(drv, []int{0, 1}, opts, serverlog.New(&log))
	if err != nil {
		t.Fatal(err)
	}
	return d, path, &log
}

func TestPoolsAreRefusedPastTheirSizeWithTritonsErrors(t *testing.T) {
	d, path, log := newDevices(t, MemoryOptions{CUDAPoolBytes: map[int]uint64{1: 4096}, PinnedPoolBytes: 8192})
	for _, want := range []string{"CUDA memory pool is created on device 0 with size 67108864",
		"CUDA memory pool is created on device 1 with size 4096", "Pinned memory pool is created at"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
	a, err := d.Allocate(core.MemoryGPU, 1, 4096)
	if err != nil {
		t.Fatalf("the whole pool: %v", err)
	}
	_, err = d.Allocate(core.MemoryGPU, 1, 1)
	if want := "Failed to allocate CUDA memory with byte size 1 on GPU 1: CNMEM_STATUS_OUT_OF_MEMORY"; err == nil ||
		err.Error() != want || core.CodeOf(err) != core.CodeInternal {
		t.Errorf("past the pool: %v, want INTERNAL %q", err, want)
	}
	if err := d.Free(core.MemoryGPU, 1, a); err != nil {
		t.Fatal(err)
	}
	if err := d.Free(core.MemoryGPU, 1, a); err == nil || !strings.Contains(err.Error(), "Failed to deallocate CUDA memory at address") {
		t.Errorf("double free: %v", err)
	}
	if _, err := d.Allocate(core.MemoryGPU, 7, 1); err == nil || err.Error() != "Failed to set device: invalid device ordinal" {
		t.Errorf("unknown GPU: %v", err)
	}

	p1, err := d.Allocate(core.MemoryCPUPinned, 0, 5000)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Allocate(core.MemoryCPUPinned, 0, 4000); err == nil || err.Error() != "failed to allocate pinned system memory" {
		t.Errorf("past the pinned pool: %v", err)
	}
	// Pinned memory is host memory: the server may write it directly.
	copy(hostBytes(p1, 5000), bytes.Repeat([]byte{7}, 5000))
	if err := d.Free(core.MemoryCPUPinned, 0, p1); err != nil {
		t.Fatal(err)
	}
	if err := d.Free(core.MemoryCPUPinned, 0, p1); err == nil || !strings.Contains(err.Error(), "is not being managed") {
		t.Errorf("double free: %v", err)
	}

	if s := testenv.ReadFakeCUDA(t, path); s.LiveDevice != 2 || s.LiveHost != 1 || s.Contexts != 2 {
		t.Errorf("while open: %+v, want the two device pools, the pinned pool and two contexts", s)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if s := testenv.ReadFakeCUDA(t, path); s.LiveDevice != 0 || s.LiveHost != 0 || s.Contexts != 0 {
		t.Errorf("after Close: %+v", s)
	}
}

func TestPoolsDisabledAreUnavailable(t *testing.T) {
	d, _, log := newDevices(t, MemoryOptions{CUDAPoolBytes: map[int]uint64{0: 0, 1: 0}})
	defer d.Close()
	if !strings.Contains(log.String(), "CUDA memory pool disabled") || !strings.Contains(log.String(), "Pinned memory pool disabled") {
		t.Errorf("log:\n%s", log)
	}
	if _, err := d.Allocate(core.MemoryGPU, 0, 1); err == nil || core.CodeOf(err) != core.CodeUnavailable ||
		err.Error() != "CudaMemoryManager has no preallocated CUDA memory" {
		t.Errorf("GPU: %v", err)
	}
	if _, err := d.Allocate(core.MemoryCPUPinned, 0, 1); err == nil || err.Error() != "failed to allocate pinned system memory: no pinned memory pool" {
		t.Errorf("pinned: %v", err)
	}
}

func TestCopyToHostReadsDeviceMemory(t *testing.T) {
	d, path, _ := newDevices(t, MemoryOptions{})
	defer d.Close()
	p, err := d.Allocate(core.MemoryGPU, 1, 16)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Free(core.MemoryGPU, 1, p)
	// The fake driver's device memory is host memory: fill it as a kernel would.
	copy(hostBytes(p, 16), "0123456789abcdef")
	got := make([]byte, 16)
	// On a thread with GPU 0 current, as a backend's thread sending a
	// response may be: the copy leaves it current.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var currentDevice func() int32
	purego.RegisterLibFunc(&currentDevice, d.drv.lib, "fakecuda_current_device")
	d.drv.fn.ctxSetCurrent(d.byID[0].ctx)
	if err := d.CopyToHost(got, p, 1); err != nil {
		t.Fatal(err)
	}
	if dev := currentDevice(); dev != 0 {
		t.Errorf("after the copy the thread has GPU %d current, want its own GPU 0 back", dev)
	}
	if string(got) != "0123456789abcdef" {
		t.Errorf("copied %q", got)
	}
	if s := testenv.ReadFakeCUDA(t, path); s.DtoH != 1 || s.DeviceMismatches != 0 {
		t.Errorf("%+v: want one copy with GPU 1's context current", s)
	}
	h, err := d.IPCHandle(1, p)
	if err != nil {
		t.Fatal(err)
	}
	if string(h[:8]) != "fakecuda" || h[8] != 1 || *(*uintptr)(unsafe.Pointer(&h[16])) != d.PoolBase(1) {
		t.Errorf("IPC handle %x: want the handle of GPU 1's pool", h)
	}
}

func TestPoolCoalescesFreedBlocks(t *testing.T) {
	p := newPool(0x10000, 4*poolAlignment)
	var blocks []uintptr
	for range 4 {
		b, ok := p.alloc(poolAlignment)
		if !ok {
			t.Fatal("pool full too early")
		}
		blocks = append(blocks, b)
	}
	if _, ok := p.alloc(1); ok {
		t.Fatal("allocated past the pool")
	}
	for _, i := range []int{1, 3, 0, 2} {
		if err := p.release(blocks[i]); err != nil {
			t.Fatal(err)
		}
	}
	if n, b := p.stats(); n != 0 || b != 0 || len(p.free) != 1 {
		t.Fatalf("after freeing all: %d blocks, %d bytes, free list %v", n, b, p.free)
	}
	if b, ok := p.alloc(4 * poolAlignment); !ok || b != 0x10000 {
		t.Errorf("the whole pool again: %#x %v", b, ok)
	}
}

func TestOpenDriverWithoutLibraryFails(t *testing.T) {
	if _, err := OpenDriver("/nonexistent/libcuda.so.1"); err == nil {
		t.Fatal("no error")
	}
}

// hostBytes views n bytes of host memory at p (the fake driver's device
// memory is host memory).
func hostBytes(p uintptr, n int) []byte { return unsafe.Slice(*(**byte)(unsafe.Pointer(&p)), n) }

// BenchmarkSetCurrentFromGo is what making a GPU current from Go before
// each Execute would cost: a purego call to cuCtxSetCurrent on a locked
// thread. The server does it from C instead (abi's context hook), in the
// same C call that enters the backend.
func BenchmarkSetCurrentFromGo(b *testing.B) {
	path := testenv.FakeCUDADriver(b)
	drv, err := OpenDriver(path)
	if err != nil {
		b.Fatal(err)
	}
	d, err := NewDevices(drv, []int{0}, MemoryOptions{CUDAPoolBytes: map[int]uint64{0: 0}}, serverlog.Discard())
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	ctx := d.byID[0].ctx
	for b.Loop() {
		runtime.LockOSThread()
		d.drv.fn.ctxSetCurrent(ctx)
		runtime.UnlockOSThread()
	}
}

// TestDevicesOnTheRealDriver does what the fake-driver tests do on the
// machine's CUDA driver, GPU 0; skipped where there is none.
func TestDevicesOnTheRealDriver(t *testing.T) {
	drv, err := OpenDriver("")
	if err != nil {
		t.Skipf("no CUDA driver here: %v", err)
	}
	if n, err := drv.DeviceCount(); err != nil || n == 0 {
		t.Skipf("the CUDA driver sees no GPU (%d, %v)", n, err)
	}
	d, err := NewDevices(drv, []int{0}, MemoryOptions{CUDAPoolBytes: map[int]uint64{0: 1 << 20}, PinnedPoolBytes: 1 << 20}, serverlog.Discard())
	if err != nil {
		t.Fatal(err)
	}
	p, err := d.Allocate(core.MemoryGPU, 0, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Allocate(core.MemoryGPU, 0, 1); err == nil {
		t.Error("allocated past the pool")
	}
	if err := d.CopyToHost(make([]byte, 4096), p, 0); err != nil {
		t.Error(err)
	}
	if _, err := d.IPCHandle(0, p); err != nil {
		t.Error(err)
	}
	pinned, err := d.Allocate(core.MemoryCPUPinned, 0, 4096)
	if err != nil {
		t.Fatal(err)
	}
	copy(hostBytes(pinned, 4096), bytes.Repeat([]byte{1}, 4096))
	if err := errors.Join(d.Free(core.MemoryGPU, 0, p), d.Free(core.MemoryCPUPinned, 0, pinned), d.Close()); err != nil {
		t.Error(err)
	}
}
