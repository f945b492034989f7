package sharedmem

import (
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"syscall"

	"github.com/tritonhost/tritonhost/core"
)

// shmDir is where Linux keeps POSIX shared-memory objects (shm_open).
const shmDir = "/dev/shm"

// region is one registered region and its mapping.
type region struct {
	name   string
	key    string
	offset uint64 // in the object
	size   uint64 // bytes registered
	file   *os.File
	// mapping is what mmap returned (from offset rounded down to a page);
	// data is the registered span of it.
	mapping []byte
	data    []byte

	// cuda is the device memory of a CUDA region (cuda.go); the fields
	// above but name and size are then unset.
	cuda *cudaMemory

	// Guarded by the registry's mutex.
	leases  int  // leases not yet released
	removed bool // unregistered: unmapped once leases drops to 0
}

// objectPath returns the file of a POSIX shared-memory key as glibc's
// shm_open names it: leading slashes dropped, no other slash allowed.
func objectPath(key string) (string, error) {
	name := strings.TrimLeft(key, "/")
	if name == "" || strings.Contains(name, "/") || name == "." || name == ".." {
		return "", errors.New("a key is one name, with an optional leading '/'")
	}
	return shmDir + "/" + name, nil
}

// mapRegion opens the object of key and maps byteSize bytes of it from
// offset, checking that they lie inside the object.
func mapRegion(name, key string, offset, byteSize uint64) (*region, error) {
	path, err := objectPath(key)
	if err != nil {
		return nil, core.Errorf(core.CodeInternal, "Unable to open shared memory region: '%s' (%v)", key, err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, core.Errorf(core.CodeInternal, "Unable to open shared memory region: '%s' (%v)", key, err)
	}
	r := &region{name: name, key: key, offset: offset, size: byteSize, file: f}
	if err := r.mmap(); err != nil {
		f.Close()
		return nil, err
	}
	return r, nil
}

func (r *region) mmap() error {
	objSize, err := r.objectSize()
	if err != nil {
		return err
	}
	if r.size == 0 || r.offset > objSize || r.size > objSize-r.offset {
		return core.Errorf(core.CodeInvalidArg, "failed to register shared memory region '%s': invalid args (offset %d and byte size %d in an object of %d bytes)",
			r.name, r.offset, r.size, objSize)
	}
	page := uint64(os.Getpagesize())
	start := r.offset - r.offset%page
	length := r.size + (r.offset - start)
	if start > math.MaxInt64 || length > math.MaxInt {
		return core.Errorf(core.CodeInvalidArg, "failed to register shared memory region '%s': invalid args (too large to map)", r.name)
	}
	m, err := syscall.Mmap(int(r.file.Fd()), int64(start), int(length), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		return core.Errorf(core.CodeInvalidArg, "failed to register shared memory region '%s': unable to process address space%v", r.name, err)
	}
	r.mapping = m
	r.data = m[r.offset-start : r.offset-start+r.size : r.offset-start+r.size]
	return nil
}

// objectSize returns the object's current size. The object must be a
// regular file: a device or a pipe under /dev/shm is refused.
func (r *region) objectSize() (uint64, error) {
	st, err := r.file.Stat()
	if err != nil || !st.Mode().IsRegular() || st.Size() < 0 {
		why := "not a shared-memory object"
		if err != nil {
			why = err.Error()
		}
		return 0, core.Errorf(core.CodeInternal, "Invalid shared memory region: '%s' (%s)", r.key, why)
	}
	return uint64(st.Size()), nil
}

// checkObject checks that the object still covers the region: a client
// may have shrunk it since it registered the region.
func (r *region) checkObject() error {
	if r.cuda != nil {
		return nil
	}
	objSize, err := r.objectSize()
	if err != nil {
		return err
	}
	if r.offset+r.size > objSize {
		return core.Errorf(core.CodeInternal, "Invalid shared memory region: '%s' (the object is now %d bytes; region '%s' ends at byte %d)",
			r.key, objSize, r.name, r.offset+r.size)
	}
	return nil
}

// unmap releases the mapping and the object's descriptor, or closes a
// CUDA region's IPC handle.
func (r *region) unmap() error {
	if r.cuda != nil {
		return r.cuda.close()
	}
	var errs []error
	if r.mapping != nil {
		if err := syscall.Munmap(r.mapping); err != nil {
			errs = append(errs, fmt.Errorf("unable to munmap shared memory region '%s': %w", r.name, err))
		}
		r.mapping, r.data = nil, nil
	}
	if err := r.file.Close(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
