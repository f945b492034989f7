package abi

// GPU and pinned memory for the backend API (backend_api.c, output_api.c,
// response_api.c): the C side crosses into Go only for memory of those
// types, and only on a host that has Devices (thost_host.has_devices).

/*
#include "objects.h"
*/
import "C"

import (
	"unsafe"

	"github.com/tritonhost/tritonhost/core"
)

// deviceHost returns the Go host of h and its Devices, or an error for C.
func deviceHost(h *C.struct_thost_host, fn string) (Devices, *C.TRITONSERVER_Error) {
	host := hostOf(h)
	if host == nil || host.devices == nil {
		return nil, cErrorf(core.CodeUnavailable, "%s: the server has no GPU memory", fn)
	}
	return host.devices, nil
}

// thostDeviceAlloc allocates GPU or pinned memory for a backend: the
// memory manager's, or an output buffer. *out is set on success; the
// memory is the backend's until thostDeviceFree.
//
//export thostDeviceAlloc
func thostDeviceAlloc(h *C.struct_thost_host, memType C.int, id C.int64_t, size C.uint64_t, out *unsafe.Pointer) (ret *C.TRITONSERVER_Error) {
	const fn = "TRITONBACKEND_MemoryManagerAllocate"
	defer recoverError(fn, &ret)
	dev, cerr := deviceHost(h, fn)
	if cerr != nil {
		return cerr
	}
	p, err := dev.Allocate(core.MemoryType(memType), int64(id), uint64(size))
	if err != nil {
		return cError(err)
	}
	*out = pointer(p)
	return nil
}

// thostDeviceFree returns memory thostDeviceAlloc handed out.
//
//export thostDeviceFree
func thostDeviceFree(h *C.struct_thost_host, memType C.int, id C.int64_t, p unsafe.Pointer) (ret *C.TRITONSERVER_Error) {
	const fn = "TRITONBACKEND_MemoryManagerFree"
	defer recoverError(fn, &ret)
	dev, cerr := deviceHost(h, fn)
	if cerr != nil {
		return cerr
	}
	return cError(dev.Free(core.MemoryType(memType), int64(id), uintptr(p)))
}

// thostDeviceIPCHandle writes the CUDA IPC handle of the device buffer p on
// GPU id into out (64 bytes, C memory the caller owns).
//
//export thostDeviceIPCHandle
func thostDeviceIPCHandle(h *C.struct_thost_host, id C.int64_t, p unsafe.Pointer, out *C.uchar) (ret *C.TRITONSERVER_Error) {
	const fn = "TRITONBACKEND_OutputBufferAttributes"
	defer recoverError(fn, &ret)
	dev, cerr := deviceHost(h, fn)
	if cerr != nil {
		return cerr
	}
	handle, err := dev.IPCHandle(int64(id), uintptr(p))
	if err != nil {
		return cError(err)
	}
	copy(unsafe.Slice((*byte)(unsafe.Pointer(out)), len(handle)), handle[:])
	return nil
}
