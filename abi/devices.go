package abi

import (
	"unsafe"

	"tritonhost/core"
)

// Devices are the server's GPUs as the backend API needs them; package gpu
// implements it over the CUDA driver. A Host without Devices has no GPU
// memory (GPU allocations are UNAVAILABLE, pinned memory is ordinary host
// memory) and makes no device current for GPU instances.
//
// Threads: every method may be called from any backend thread, at once.
type Devices interface {
	// ContextHook returns a C function and its argument that make GPU id
	// current on the calling thread (fn(arg) returns a CUresult, 0 on
	// success); ok is false for a GPU the server does not use. The hook is
	// called from C right before every entry point of an instance on that
	// GPU (ModelInstanceInitialize, Execute, Ready, Finalize), on the
	// thread that then calls the backend.
	ContextHook(id int64) (fn, arg uintptr, ok bool)
	// Allocate returns size bytes of GPU memory of GPU id, or of pinned
	// host memory (id 0), from the server's pools, or an error with the
	// text Triton's memory managers give.
	Allocate(t core.MemoryType, id int64, size uint64) (uintptr, error)
	// Free returns memory Allocate handed out.
	Free(t core.MemoryType, id int64, p uintptr) error
	// CopyToHost copies len(dst) bytes of GPU id's memory at src to dst.
	CopyToHost(dst []byte, src uintptr, id int64) error
	// IPCHandle returns the CUDA IPC handle (CUipcMemHandle) of the
	// device allocation holding p on GPU id.
	IPCHandle(id int64, p uintptr) ([64]byte, error)
}

// pointer turns an address that C or the CUDA driver handed out (never
// Go memory) into a pointer for C.
func pointer(p uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&p)) }
