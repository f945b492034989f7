package sharedmem

import (
	"github.com/tritonhost/tritonhost/core"
)

// Reading and writing a lease's span, for either kind of region. Inputs
// reach backends in host memory of the server's own (the core carries host
// buffers, and the backend API hands inputs over as CPU memory), so an
// input is copied once, when the request is decoded: from a system
// region's mapping, which a client could shrink under a backend, or from
// a CUDA region's device memory. An output is copied into its region as
// its response arrives.

// Size returns the leased span's size in bytes.
func (l *Lease) Size() uint64 { return l.size }

// Read returns a copy of the span's contents in host memory, for an
// input: copied from a system region's mapping (see fault.go: a client
// that shrinks the object meanwhile fails this read, not the server), or
// from a CUDA region's device memory. A span larger than the registry's
// MaxReadBytes (CUDAOptions.MaxReadBytes for a CUDA region) is refused
// before anything is allocated. Read is not to be called after Release.
func (l *Lease) Read() ([]byte, error) {
	m := l.rg.cuda
	limit := l.reg.maxRead
	if m != nil {
		limit = l.reg.cuda.MaxReadBytes
	}
	if l.size > limit {
		kind := ""
		if m != nil {
			kind = "CUDA "
		}
		return nil, core.Errorf(core.CodeInvalidArg, "shared memory region '%s': %d bytes of %smemory to copy to the host, more than the largest tensor the server holds, %d bytes",
			l.rg.name, l.size, kind, limit)
	}
	out := make([]byte, l.size)
	if m == nil {
		if err := l.rg.readInto(out, l.data); err != nil {
			return nil, err
		}
		return out, nil
	}
	if err := m.drv.CopyToHost(out, m.ptr+uintptr(l.offset), m.device); err != nil {
		return nil, core.Errorf(core.CodeInternal, "failed to read %d bytes of CUDA shared memory region '%s' on GPU %d: %v", l.size, l.rg.name, m.device, err)
	}
	return out, nil
}

// Write copies data to the start of the span, for an output: into a
// system region's mapping (see fault.go), or to a CUDA region's device
// memory. Data larger than the span is refused. Write is not to be called
// after Release.
func (l *Lease) Write(data []byte) error {
	if uint64(len(data)) > l.size {
		return core.Errorf(core.CodeInternal, "%d bytes do not fit the %d bytes leased of shared memory region '%s'", len(data), l.size, l.rg.name)
	}
	m := l.rg.cuda
	if m == nil {
		return l.rg.writeFrom(l.data, data)
	}
	if err := m.drv.CopyFromHost(m.ptr+uintptr(l.offset), data, m.device); err != nil {
		return core.Errorf(core.CodeInternal, "failed to write %d bytes to CUDA shared memory region '%s' on GPU %d: %v", len(data), l.rg.name, m.device, err)
	}
	return nil
}
