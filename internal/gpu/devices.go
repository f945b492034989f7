package gpu

import (
	"errors"
	"fmt"
	"sort"
	"unsafe"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/serverlog"
)

// Pool sizes, as Triton's --cuda-memory-pool-byte-size and
// --pinned-memory-pool-byte-size default them.
const (
	DefaultCUDAPoolBytes   = 64 << 20
	DefaultPinnedPoolBytes = 256 << 20
)

// MemoryOptions size the memory pools.
type MemoryOptions struct {
	// CUDAPoolBytes is the device memory pool of each GPU, by CUDA id; a
	// GPU not listed gets DefaultCUDAPoolBytes, 0 disables its pool.
	CUDAPoolBytes map[int]uint64
	// PinnedPoolBytes is the page-locked host memory pool (0: none).
	PinnedPoolBytes uint64
}

// Devices are the GPUs the server uses through the CUDA driver: a primary
// context for each, its device memory pool, and the pinned host memory
// pool. It implements core.Devices, what the server needs of GPUs. All
// methods are safe for concurrent use; Close releases everything.
type Devices struct {
	drv    *Driver
	log    *serverlog.Logger
	byID   map[int]*device
	ids    []int
	pinned *pool // nil: no pinned pool
	// pinnedCtx is the context the pinned pool was allocated in.
	pinnedCtx uintptr
}

var _ core.Devices = (*Devices)(nil)

type device struct {
	id   int
	ctx  uintptr
	pool *pool // size 0: no pool
}

// NewDevices retains the primary context of each GPU in ids on drv and
// creates the memory pools, logging each as Triton does. A GPU the driver
// does not have is left out with a warning; a pool that cannot be
// allocated is disabled with a warning. It fails only when a context
// cannot be retained.
func NewDevices(drv *Driver, ids []int, opts MemoryOptions, log *serverlog.Logger) (*Devices, error) {
	d := &Devices{drv: drv, log: log, byID: map[int]*device{}}
	count, err := drv.DeviceCount()
	if err != nil {
		return nil, err
	}
	for _, id := range ids {
		if id >= count {
			log.Warnf("GPU %d: the CUDA driver sees only %d device(s); not using it", id, count)
			continue
		}
		ctx, err := drv.retainPrimary(id)
		if err != nil {
			_ = d.Close()
			return nil, err
		}
		dev := &device{id: id, ctx: ctx, pool: newPool(0, 0)}
		d.byID[id] = dev
		d.ids = append(d.ids, id)
		d.createDevicePool(dev, poolSize(opts.CUDAPoolBytes, id))
	}
	sort.Ints(d.ids)
	if len(d.ids) > 0 && !d.hasDevicePools() {
		log.Infof("CUDA memory pool disabled")
	}
	d.createPinnedPool(opts.PinnedPoolBytes)
	return d, nil
}

func poolSize(sizes map[int]uint64, id int) uint64 {
	if n, ok := sizes[id]; ok {
		return n
	}
	return DefaultCUDAPoolBytes
}

func (d *Devices) createDevicePool(dev *device, size uint64) {
	if size == 0 {
		return
	}
	var base uintptr
	r := d.drv.onContext(dev.ctx, func() cuResult { return d.drv.fn.memAlloc(&base, uintptr(size)) })
	if err := d.drv.check("cuMemAlloc", r); err != nil {
		d.log.Warnf("CUDA memory pool of %d bytes could not be created on device %d: %v", size, dev.id, err)
		return
	}
	dev.pool = newPool(base, uintptr(size))
	d.log.Infof("CUDA memory pool is created on device %d with size %d", dev.id, size)
}

func (d *Devices) createPinnedPool(size uint64) {
	if size == 0 || len(d.ids) == 0 {
		d.log.Infof("Pinned memory pool disabled")
		return
	}
	ctx := d.byID[d.ids[0]].ctx
	var base uintptr
	r := d.drv.onContext(ctx, func() cuResult {
		return d.drv.fn.memHostAlloc(&base, uintptr(size), cuMemHostAllocPortable)
	})
	if err := d.drv.check("cuMemHostAlloc", r); err != nil {
		d.log.Warnf("Unable to allocate pinned system memory, pinned memory pool will not be available: %v", err)
		return
	}
	d.pinned, d.pinnedCtx = newPool(base, uintptr(size)), ctx
	d.log.Infof("Pinned memory pool is created at '%#x' with size %d", base, size)
}

func (d *Devices) hasDevicePools() bool {
	for _, dev := range d.byID {
		if dev.pool.size > 0 {
			return true
		}
	}
	return false
}

// IDs returns the CUDA ids of the GPUs in use, ascending.
func (d *Devices) IDs() []int { return append([]int(nil), d.ids...) }

// ContextHook returns what makes GPU id current on a thread: the address
// of cuCtxSetCurrent and the GPU's primary context, for package abi to
// call (fn(ctx), a CUresult) from C right before a backend's entry point,
// on the thread that runs it. ok is false for a GPU not in use.
func (d *Devices) ContextHook(id int64) (fn, ctx uintptr, ok bool) {
	dev := d.byID[int(id)]
	if dev == nil {
		return 0, 0, false
	}
	return d.drv.setCurrent, dev.ctx, true
}

// Allocate returns size bytes of GPU memory on GPU id from its pool, or of
// pinned host memory from the pinned pool, with Triton's error when the
// pool cannot hold them. Other memory types are the caller's business.
func (d *Devices) Allocate(t core.MemoryType, id int64, size uint64) (uintptr, error) {
	switch t {
	case core.MemoryGPU:
		dev := d.byID[int(id)]
		if !d.hasDevicePools() {
			return 0, core.Errorf(core.CodeUnavailable, "CudaMemoryManager has no preallocated CUDA memory")
		}
		if dev == nil {
			return 0, core.Errorf(core.CodeInternal, "Failed to set device: invalid device ordinal")
		}
		p, ok := dev.pool.alloc(size)
		if !ok {
			return 0, core.Errorf(core.CodeInternal, "Failed to allocate CUDA memory with byte size %d on GPU %d: CNMEM_STATUS_OUT_OF_MEMORY", size, id)
		}
		return p, nil
	case core.MemoryCPUPinned:
		if d.pinned == nil {
			return 0, core.Errorf(core.CodeInternal, "failed to allocate pinned system memory: no pinned memory pool")
		}
		p, ok := d.pinned.alloc(size)
		if !ok {
			return 0, core.Errorf(core.CodeInternal, "failed to allocate pinned system memory")
		}
		return p, nil
	}
	return 0, core.Errorf(core.CodeInvalidArg, "memory type %s is not device memory", t)
}

// Free returns memory that Allocate handed out.
func (d *Devices) Free(t core.MemoryType, id int64, p uintptr) error {
	switch t {
	case core.MemoryGPU:
		dev := d.byID[int(id)]
		if dev == nil || dev.pool.release(p) != nil {
			return core.Errorf(core.CodeInternal, "Failed to deallocate CUDA memory at address %#x on GPU %d: CNMEM_STATUS_INVALID_ARGUMENT", p, id)
		}
		return nil
	case core.MemoryCPUPinned:
		if d.pinned == nil || d.pinned.release(p) != nil {
			return core.Errorf(core.CodeInternal, "unexpected memory address '%#x' is not being managed", p)
		}
		return nil
	}
	return core.Errorf(core.CodeInvalidArg, "memory type %s is not device memory", t)
}

// CopyToHost copies len(dst) bytes of GPU id's memory at src into dst.
func (d *Devices) CopyToHost(dst []byte, src uintptr, id int64) error {
	dev := d.byID[int(id)]
	if dev == nil {
		return core.Errorf(core.CodeInternal, "copy from GPU %d: not a GPU of this server", id)
	}
	if len(dst) == 0 {
		return nil
	}
	r := d.drv.onContext(dev.ctx, func() cuResult {
		return d.drv.fn.memcpyDtoH(unsafe.Pointer(&dst[0]), src, uintptr(len(dst)))
	})
	if err := d.drv.check("cuMemcpyDtoH", r); err != nil {
		return core.Errorf(core.CodeInternal, "copy %d bytes from GPU %d to the host: %v", len(dst), id, err)
	}
	return nil
}

// IPCHandle returns the CUDA IPC handle (a CUipcMemHandle) of the device
// allocation holding p on GPU id. A pool block shares its pool's
// allocation, so the handle opens the whole pool: the block lies at
// p - PoolBase(id) from the start of what it maps.
func (d *Devices) IPCHandle(id int64, p uintptr) ([ipcHandleSize]byte, error) {
	var h [ipcHandleSize]byte
	dev := d.byID[int(id)]
	if dev == nil || d.drv.fn.ipcGetHandle == nil {
		return h, core.Errorf(core.CodeUnsupported, "no CUDA IPC handle for GPU %d", id)
	}
	r := d.drv.onContext(dev.ctx, func() cuResult { return d.drv.fn.ipcGetHandle(&h, p) })
	if err := d.drv.check("cuIpcGetMemHandle", r); err != nil {
		return h, core.Errorf(core.CodeInternal, "GPU %d: %v", id, err)
	}
	return h, nil
}

// PoolBase returns the start of GPU id's memory pool (0 without one).
func (d *Devices) PoolBase(id int64) uintptr {
	if dev := d.byID[int(id)]; dev != nil {
		return dev.pool.base
	}
	return 0
}

// PoolUsage is what one pool has handed out and not got back.
type PoolUsage struct {
	Type   core.MemoryType
	ID     int
	Blocks int
	Bytes  uint64
	Size   uint64
}

// Usage returns the use of every pool: the device pools by id, then the
// pinned pool.
func (d *Devices) Usage() []PoolUsage {
	var out []PoolUsage
	for _, id := range d.ids {
		p := d.byID[id].pool
		n, b := p.stats()
		out = append(out, PoolUsage{Type: core.MemoryGPU, ID: id, Blocks: n, Bytes: b, Size: uint64(p.size)})
	}
	if d.pinned != nil {
		n, b := d.pinned.stats()
		out = append(out, PoolUsage{Type: core.MemoryCPUPinned, Blocks: n, Bytes: b, Size: uint64(d.pinned.size)})
	}
	return out
}

// Close frees the pools and releases the contexts. Blocks still handed
// out are freed with their pool, and reported in the returned error.
func (d *Devices) Close() error {
	var errs []error
	for _, u := range d.Usage() {
		if u.Blocks > 0 {
			errs = append(errs, fmt.Errorf("%s pool %d: %d block(s), %d bytes, still allocated at close", u.Type, u.ID, u.Blocks, u.Bytes))
		}
	}
	if d.pinned != nil {
		base := d.pinned.base
		r := d.drv.onContext(d.pinnedCtx, func() cuResult { return d.drv.fn.memFreeHost(base) })
		errs = append(errs, d.drv.check("cuMemFreeHost", r))
		d.pinned = nil
	}
	for _, id := range d.ids {
		dev := d.byID[id]
		if dev.pool.size > 0 {
			base := dev.pool.base
			r := d.drv.onContext(dev.ctx, func() cuResult { return d.drv.fn.memFree(base) })
			errs = append(errs, d.drv.check("cuMemFree", r))
		}
		errs = append(errs, d.drv.releasePrimary(id))
		delete(d.byID, id)
	}
	d.ids = nil
	return errors.Join(errs...)
}
