package abi

import (
	"unsafe"

	"github.com/tritonhost/tritonhost/core"
)

// Devices are the server's GPUs as the backend API needs them (see
// core.Devices). A Host without Devices has no GPU memory (GPU allocations
// are UNAVAILABLE, pinned memory is ordinary host memory) and makes no
// device current for GPU instances.
type Devices = core.Devices

// pointer turns an address that C or the CUDA driver handed out (never
// Go memory) into a pointer for C.
func pointer(p uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&p)) }
