package sharedmem

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/tritonhost/tritonhost/core"
)

// CUDA regions (Triton's cuda_shared_memory extension). A client allocates
// device memory, exports it with cudaIpcGetMemHandle and registers the
// handle with a GPU and a size; the registry opens the handle in that GPU's
// primary context through a CUDA driver (package gpu's Devices) and closes
// it when the region is unregistered and no lease holds it, or at Close.
// CUDA regions share the registry's namespace, leases and bounds checks
// with system regions, as Triton's one SharedMemoryManager keeps both;
// Status, Unregister and their CUDA twins each see their own kind.

// IPCHandleSize is the size of a cudaIpcMemHandle_t, a region's raw_handle.
const IPCHandleSize = 64

// DefaultMaxCUDAReadBytes is CUDAOptions.MaxReadBytes unless told
// otherwise.
const DefaultMaxCUDAReadBytes = 256 << 20

// CUDA is what CUDA regions need of the CUDA driver; package gpu's
// Devices implements it. Its methods may be called from any goroutine at
// once.
type CUDA interface {
	// OpenIPCHandle maps the device allocation that handle exports into
	// GPU id's primary context and returns its address in this process
	// and its size. An error's message starts with the driver's own
	// description of the failure.
	OpenIPCHandle(id int64, handle [IPCHandleSize]byte) (ptr uintptr, size uint64, err error)
	// CloseIPCHandle unmaps what OpenIPCHandle mapped at ptr on GPU id.
	CloseIPCHandle(id int64, ptr uintptr) error
	// CopyToHost copies len(dst) bytes of GPU id's memory at src to dst.
	CopyToHost(dst []byte, src uintptr, id int64) error
	// CopyFromHost copies src to GPU id's memory at dst.
	CopyFromHost(dst uintptr, src []byte, id int64) error
}

// CUDAOptions configure CUDA regions.
type CUDAOptions struct {
	// Driver opens the handles and copies the tensors; nil: the server
	// has no GPU, and registering a CUDA region is refused with Triton's
	// words for a server built without GPU support.
	Driver CUDA
	// MaxRegions bounds the CUDA regions registered at once (default
	// DefaultMaxRegions): each holds a mapping of a client's device
	// memory.
	MaxRegions int
	// MaxReadBytes bounds the span of a CUDA region that one input may
	// copy into host memory (default DefaultMaxCUDAReadBytes); the server
	// sets it to the largest tensor it holds.
	MaxReadBytes uint64
}

func (o CUDAOptions) withDefaults() CUDAOptions {
	if o.MaxRegions <= 0 {
		o.MaxRegions = DefaultMaxRegions
	}
	if o.MaxReadBytes == 0 {
		o.MaxReadBytes = DefaultMaxCUDAReadBytes
	}
	return o
}

// CUDARegionStatus describes a registered CUDA region, as
// CudaSharedMemoryStatus reports it.
type CUDARegionStatus struct {
	Name     string
	DeviceID uint64
	ByteSize uint64
}

// cudaMemory is where a CUDA region lives: a client's device memory,
// opened from its IPC handle on one GPU.
type cudaMemory struct {
	drv    CUDA
	device int64
	ptr    uintptr
}

func (m *cudaMemory) close() error {
	if err := m.drv.CloseIPCHandle(m.device, m.ptr); err != nil {
		return core.Errorf(core.CodeInternal, "failed to close CUDA IPC handle: %v", err)
	}
	return nil
}

// CUDASupported reports whether CUDA regions can be registered: the
// registry has a CUDA driver.
func (r *Registry) CUDASupported() bool { return r.cuda.Driver != nil }

// RegisterCUDA opens rawHandle, a cudaIpcMemHandle_t, on GPU deviceID as
// the CUDA region name of byteSize bytes. Errors, in Triton's words:
// CodeInvalidArg without a CUDA driver, for a handle that does not open on
// that GPU, or when the allocation is smaller than byteSize;
// CodeAlreadyExists if the name is taken by a region of either kind;
// CodeUnavailable at MaxRegions or once the registry is closed.
func (r *Registry) RegisterCUDA(name string, rawHandle []byte, deviceID int64, byteSize uint64) error {
	drv := r.cuda.Driver
	if drv == nil {
		return core.Errorf(core.CodeInvalidArg, "failed to register CUDA shared memory region: '%s', GPUs not supported", name)
	}
	r.mu.Lock()
	err := r.checkRoomLocked(name, true)
	r.mu.Unlock()
	if err != nil {
		return err
	}
	if len(rawHandle) != IPCHandleSize {
		return core.Errorf(core.CodeInvalidArg, "failed to register shared memory region: invalid args (raw_handle of %d bytes; a cudaIpcMemHandle_t has %d)",
			len(rawHandle), IPCHandleSize)
	}
	ptr, size, err := drv.OpenIPCHandle(deviceID, [IPCHandleSize]byte(rawHandle))
	if err != nil {
		return core.Errorf(core.CodeInvalidArg, "failed to register shared memory region: invalid args (GPU %d: %v)", deviceID, err)
	}
	mem := &cudaMemory{drv: drv, device: deviceID, ptr: ptr}
	if byteSize > size {
		_ = mem.close()
		return core.Errorf(core.CodeInvalidArg, "failed to register shared memory region '%s': invalid args (byte size %d; the allocation holds %d bytes)",
			name, byteSize, size)
	}
	r.mu.Lock()
	err = r.checkRoomLocked(name, true) // registered meanwhile, or closed
	if err == nil {
		r.regions[name] = &region{name: name, size: byteSize, cuda: mem}
		r.mapped++
	}
	r.mu.Unlock()
	if err != nil {
		_ = mem.close()
	}
	return err
}

// CUDAStatus returns the CUDA region name, or every CUDA region when name
// is "", sorted by name. An unknown name, or a system region's, is
// CodeNotFound with Triton's words.
func (r *Registry) CUDAStatus(name string) ([]CUDARegionStatus, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if name != "" {
		rg := r.regions[name]
		switch {
		case rg == nil:
			return nil, core.Errorf(core.CodeNotFound, "Unable to find cuda shared memory region: '%s'", name)
		case rg.cuda == nil:
			return nil, core.Errorf(core.CodeNotFound, "The region named '%s' is registered as system shared memory, not CUDA shared memory", name)
		}
		return []CUDARegionStatus{rg.cudaStatus()}, nil
	}
	var out []CUDARegionStatus
	for _, rg := range r.regions {
		if rg.cuda != nil {
			out = append(out, rg.cudaStatus())
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func (rg *region) cudaStatus() CUDARegionStatus {
	return CUDARegionStatus{Name: rg.name, DeviceID: uint64(rg.cuda.device), ByteSize: rg.size}
}

// UnregisterCUDA removes the CUDA region name, or every CUDA region when
// name is "". An unknown name, or a system region's, is no error (as in
// Triton). A region that a lease holds keeps its handle open until the
// lease is released; its name is free at once. A handle the driver fails
// to close is reported with Triton's words (CodeInternal), and the region
// is gone all the same.
func (r *Registry) UnregisterCUDA(name string) error {
	var failed []string
	var last error
	for _, rg := range r.remove(name, true) {
		if err := rg.unmap(); err != nil {
			failed, last = append(failed, rg.name), err
		}
	}
	switch {
	case len(failed) == 0:
		return nil
	case name != "":
		return last
	}
	slices.Sort(failed)
	var msg strings.Builder
	msg.WriteString("Failed to unregister the following cuda shared memory regions: ")
	for _, n := range failed {
		fmt.Fprintf(&msg, "%s ,", n)
	}
	return core.Errorf(core.CodeInternal, "%s", msg.String())
}
