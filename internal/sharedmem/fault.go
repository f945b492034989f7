package sharedmem

import (
	"runtime/debug"
	"unsafe"

	"github.com/tritonhost/tritonhost/core"
)

// A client may shrink the object under a registered region at any time
// (ftruncate): the pages past its new end are then gone, and touching them
// faults (SIGBUS), which ends the process unless the faulting code is Go
// running with debug.SetPanicOnFault. So only Go code ever touches a
// mapping, and only here: an input is copied out of its region when the
// request is decoded (Lease.Read), an output into it when the response is
// placed (Lease.Write); no pointer into a mapping reaches the core or a
// backend, whose C code could not survive the fault. Each copy first
// checks the object's size (fstat), which refuses a shrink that already
// happened with a clear message, then copies with faults turned into a
// panic that becomes the request's error. What is left: a shrink during
// the copy fails that request, not the server; the bytes copied before the
// fault may be partial, and the request fails, so they are never used.

// faultError is the error of a copy that faulted on the mapping.
func (rg *region) faultError(doing string, cause any) error {
	return core.Errorf(core.CodeInternal, "Invalid shared memory region: '%s' (the object shrank under region '%s' while %s it: %v)", rg.key, rg.name, doing, cause)
}

// readInto copies the mapped span src into dst (Go memory).
func (rg *region) readInto(dst, src []byte) error {
	if err := rg.checkObject(); err != nil {
		return err
	}
	return rg.copyGuarded(dst, src, "reading")
}

// writeFrom copies src (Go memory) into the mapped span dst.
func (rg *region) writeFrom(dst, src []byte) error {
	if err := rg.checkObject(); err != nil {
		return err
	}
	return rg.copyGuarded(dst, src, "writing")
}

// copyGuarded copies src to dst, one of them in the mapping, and returns
// a fault on the mapping as an error. Faults anywhere else are not this
// copy's to recover: they are raised again.
func (rg *region) copyGuarded(dst, src []byte, doing string) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		if f, ok := r.(interface{ Addr() uintptr }); !ok || !rg.holds(f.Addr()) {
			panic(r)
		}
		err = rg.faultError(doing, r)
	}()
	copy(dst, src)
	return nil
}

// holds reports whether addr lies in the region's mapping.
func (rg *region) holds(addr uintptr) bool {
	if len(rg.mapping) == 0 {
		return false
	}
	start := uintptr(unsafe.Pointer(unsafe.SliceData(rg.mapping)))
	return addr >= start && addr-start < uintptr(len(rg.mapping))
}
