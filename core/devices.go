package core

// Devices are the server's GPUs as the CUDA driver opened them (package gpu
// implements it; core and abi reach GPUs only through it). The server
// places KIND_GPU and KIND_AUTO instance groups on IDs; the backend API
// (package abi) uses the rest: making an instance's GPU current on the
// thread that calls its backend, GPU and pinned memory for backends, and
// copying GPU outputs to the host.
//
// Threads: every method may be called from any goroutine or backend
// thread, at once.
type Devices interface {
	// IDs returns the CUDA device ids instances may use, ascending.
	IDs() []int
	// ContextHook returns a C function and its argument that make GPU id
	// current on the calling thread (fn(arg) returns a CUresult, 0 on
	// success), to be called from C right before a backend's entry point,
	// on the thread that calls it; ok is false for a GPU not in IDs.
	ContextHook(id int64) (fn, arg uintptr, ok bool)
	// Allocate returns size bytes of GPU memory of GPU id, or of pinned
	// host memory (id 0), from the server's pools, or an error with the
	// text Triton's memory managers give.
	Allocate(t MemoryType, id int64, size uint64) (uintptr, error)
	// Free returns memory Allocate handed out.
	Free(t MemoryType, id int64, p uintptr) error
	// CopyToHost copies len(dst) bytes of GPU id's memory at src to dst.
	CopyToHost(dst []byte, src uintptr, id int64) error
	// IPCHandle returns the CUDA IPC handle (CUipcMemHandle) of the device
	// allocation holding p on GPU id.
	IPCHandle(id int64, p uintptr) ([64]byte, error)
}
