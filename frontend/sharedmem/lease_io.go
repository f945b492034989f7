package sharedmem

import (
	"tritonhost/core"
)

// Reading and writing a lease's span, for either kind of region. Inputs
// reach backends in host memory (the core carries host buffers, and the
// backend API hands inputs over as CPU memory), so an input in a CUDA
// region is copied from the device once, when the request is decoded; an
// output is copied to the device as its response arrives.

// Size returns the leased span's size in bytes.
func (l *Lease) Size() uint64 { return l.size }

// Read returns the span's contents, for an input: a system region's
// memory itself (no copy; valid until Release), or a copy in host memory
// of a CUDA region's device memory. A CUDA span larger than
// CUDAOptions.MaxReadBytes is refused before anything is copied. Read is
// not to be called after Release.
func (l *Lease) Read() ([]byte, error) {
	m := l.rg.cuda
	if m == nil {
		return l.data, nil
	}
	if limit := l.reg.cuda.MaxReadBytes; l.size > limit {
		return nil, core.Errorf(core.CodeInvalidArg, "shared memory region '%s': %d bytes of CUDA memory to copy to the host, more than the largest tensor the server holds, %d bytes",
			l.rg.name, l.size, limit)
	}
	out := make([]byte, l.size)
	if err := m.drv.CopyToHost(out, m.ptr+uintptr(l.offset), m.device); err != nil {
		return nil, core.Errorf(core.CodeInternal, "failed to read %d bytes of CUDA shared memory region '%s' on GPU %d: %v", l.size, l.rg.name, m.device, err)
	}
	return out, nil
}

// Write copies data to the start of the span, for an output: into a
// system region's memory, or to a CUDA region's device memory. Data
// larger than the span is refused. Write is not to be called after
// Release.
func (l *Lease) Write(data []byte) error {
	if uint64(len(data)) > l.size {
		return core.Errorf(core.CodeInternal, "%d bytes do not fit the %d bytes leased of shared memory region '%s'", len(data), l.size, l.rg.name)
	}
	m := l.rg.cuda
	if m == nil {
		copy(l.data, data)
		return nil
	}
	if err := m.drv.CopyFromHost(m.ptr+uintptr(l.offset), data, m.device); err != nil {
		return core.Errorf(core.CodeInternal, "failed to write %d bytes to CUDA shared memory region '%s' on GPU %d: %v", len(data), l.rg.name, m.device, err)
	}
	return nil
}
