package gpu

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/tritonhost/tritonhost/core"
)

// CUDA shared memory: a client exports a device allocation with
// cudaIpcGetMemHandle and registers the handle; the server maps it into
// the primary context of the GPU the client names, as Triton does
// (cudaSetDevice, then cudaIpcOpenMemHandle), and copies tensors between
// it and the host.

// ipcMemHandle is a CUipcMemHandle, which cuIpcOpenMemHandle takes by
// value (purego passes the struct as the C ABI does).
type ipcMemHandle struct {
	Reserved [ipcHandleSize]byte
}

// cuIpcMemLazyEnablePeerAccess is CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS, the
// flag Triton opens handles with (cudaIpcMemLazyEnablePeerAccess).
const cuIpcMemLazyEnablePeerAccess = 0x1

// OpenIPCHandle maps the device allocation that handle (a CUipcMemHandle
// from another process) exports into GPU id's primary context, and returns
// its address in this process and its size (cuMemGetAddressRange). The
// mapping stays until CloseIPCHandle. An error's message starts with the
// driver's description of its failure (cuGetErrorString), as Triton logs
// it.
func (d *Devices) OpenIPCHandle(id int64, handle [ipcHandleSize]byte) (uintptr, uint64, error) {
	dev := d.byID[int(id)]
	f := &d.drv.fn
	switch {
	case dev == nil:
		return 0, 0, errors.New("invalid device ordinal (not a GPU of this server)")
	case f.ipcOpen == nil || f.ipcClose == nil || f.addrRange == nil:
		return 0, 0, fmt.Errorf("operation not supported (the CUDA driver %s lacks CUDA IPC)", d.drv.path)
	}
	var p, size uintptr
	var call string
	r := d.drv.onContext(dev.ctx, func() cuResult {
		call = "cuIpcOpenMemHandle"
		if r := f.ipcOpen(&p, ipcMemHandle{handle}, cuIpcMemLazyEnablePeerAccess); r != 0 {
			return r
		}
		call = "cuMemGetAddressRange"
		r := f.addrRange(nil, &size, p)
		if r != 0 {
			f.ipcClose(p)
		}
		return r
	})
	if r != 0 {
		return 0, 0, d.described(call, r)
	}
	return p, uint64(size), nil
}

// CloseIPCHandle unmaps what OpenIPCHandle mapped at p on GPU id.
func (d *Devices) CloseIPCHandle(id int64, p uintptr) error {
	dev := d.byID[int(id)]
	if dev == nil || d.drv.fn.ipcClose == nil {
		return fmt.Errorf("invalid device ordinal (GPU %d has no CUDA IPC mapping at %#x)", id, p)
	}
	if r := d.drv.onContext(dev.ctx, func() cuResult { return d.drv.fn.ipcClose(p) }); r != 0 {
		return d.described("cuIpcCloseMemHandle", r)
	}
	return nil
}

// CopyFromHost copies src into GPU id's memory at dst.
func (d *Devices) CopyFromHost(dst uintptr, src []byte, id int64) error {
	dev := d.byID[int(id)]
	if dev == nil {
		return core.Errorf(core.CodeInternal, "copy to GPU %d: not a GPU of this server", id)
	}
	if len(src) == 0 {
		return nil
	}
	r := d.drv.onContext(dev.ctx, func() cuResult {
		return d.drv.fn.memcpyHtoD(dst, unsafe.Pointer(&src[0]), uintptr(len(src)))
	})
	if err := d.drv.check("cuMemcpyHtoD", r); err != nil {
		return core.Errorf(core.CodeInternal, "copy %d bytes from the host to GPU %d: %v", len(src), id, err)
	}
	return nil
}

// described is the error of a failed call, the driver's description of
// the failure first: "invalid argument (cuIpcOpenMemHandle: CUDA error 1)".
func (d *Devices) described(call string, r cuResult) error {
	return fmt.Errorf("%s (%s: CUDA error %d)", d.drv.describe(r), call, r)
}
