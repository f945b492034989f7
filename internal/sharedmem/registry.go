package sharedmem

import (
	"errors"
	"math"
	"sort"
	"sync"

	"github.com/tritonhost/tritonhost/core"
)

// DefaultMaxRegions is how many regions a Registry holds at once unless
// told otherwise.
const DefaultMaxRegions = 1024

// DefaultMaxReadBytes is Options.MaxReadBytes unless told otherwise.
const DefaultMaxReadBytes = 256 << 20

// Options configure a Registry.
type Options struct {
	// MaxRegions bounds the regions registered at once (default
	// DefaultMaxRegions): each holds a mapping and a file descriptor.
	MaxRegions int
	// MaxReadBytes bounds the span of a system region that one input may
	// copy into host memory (default DefaultMaxReadBytes); the server sets
	// it to the largest tensor it holds.
	MaxReadBytes uint64
	// CUDA enables CUDA regions (cuda.go); without a driver they are
	// refused as Triton built without GPU support refuses them.
	CUDA CUDAOptions
}

// Registry is the set of registered shared-memory regions, system and
// CUDA (cuda.go), by name. It is safe for concurrent use.
type Registry struct {
	max     int
	maxRead uint64
	cuda    CUDAOptions

	mu      sync.Mutex
	regions map[string]*region
	mapped  int  // regions mapped, registered or not (leased after Unregister)
	closed  bool // Close was called
}

// New returns an empty registry.
func New(opts Options) *Registry {
	if opts.MaxRegions <= 0 {
		opts.MaxRegions = DefaultMaxRegions
	}
	if opts.MaxReadBytes == 0 {
		opts.MaxReadBytes = DefaultMaxReadBytes
	}
	return &Registry{max: opts.MaxRegions, maxRead: opts.MaxReadBytes, cuda: opts.CUDA.withDefaults(), regions: map[string]*region{}}
}

// RegionStatus describes a registered region, as
// SystemSharedMemoryStatus reports it.
type RegionStatus struct {
	Name     string
	Key      string
	Offset   uint64
	ByteSize uint64
}

// Register maps byteSize bytes from offset of the POSIX shared-memory
// object key as the region name. Errors: CodeAlreadyExists if the name is
// taken, CodeInternal if the object cannot be opened, CodeInvalidArg if
// the span does not lie inside it (Triton's words), CodeUnavailable when
// MaxRegions are registered or the registry is closed.
func (r *Registry) Register(name, key string, offset, byteSize uint64) error {
	r.mu.Lock()
	err := r.checkRoomLocked(name, false)
	r.mu.Unlock()
	if err != nil {
		return err
	}
	rg, err := mapRegion(name, key, offset, byteSize)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.checkRoomLocked(name, false); err != nil { // registered meanwhile
		rg.unmap()
		return err
	}
	r.regions[name] = rg
	r.mapped++
	return nil
}

// checkRoomLocked checks that a region of the name and kind may be
// registered: system and CUDA regions share one namespace, as in Triton,
// and each kind has its bound.
func (r *Registry) checkRoomLocked(name string, cuda bool) error {
	switch {
	case r.closed:
		return core.Errorf(core.CodeUnavailable, "failed to register shared memory region '%s': the server is shutting down", name)
	case r.regions[name] != nil:
		return core.Errorf(core.CodeAlreadyExists, "shared memory region '%s' already in manager", name)
	case !cuda && r.countLocked(false) >= r.max:
		return core.Errorf(core.CodeUnavailable, "failed to register shared memory region '%s': the server holds at most %d regions (--system-shm-max-regions); unregister one first", name, r.max)
	case cuda && r.countLocked(true) >= r.cuda.MaxRegions:
		return core.Errorf(core.CodeUnavailable, "failed to register shared memory region '%s': the server holds at most %d CUDA regions (--cuda-shm-max-regions); unregister one first", name, r.cuda.MaxRegions)
	}
	return nil
}

// countLocked counts the registered regions of one kind.
func (r *Registry) countLocked(cuda bool) int {
	n := 0
	for _, rg := range r.regions {
		if (rg.cuda != nil) == cuda {
			n++
		}
	}
	return n
}

// Status returns the system region name, or every system region when name
// is "", sorted by name. An unknown name, or a CUDA region's, is
// CodeNotFound.
func (r *Registry) Status(name string) ([]RegionStatus, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if name != "" {
		rg := r.regions[name]
		if rg == nil {
			return nil, core.Errorf(core.CodeNotFound, "Unable to find system shared memory region: '%s'", name)
		}
		if rg.cuda != nil {
			return nil, core.Errorf(core.CodeNotFound, "The region named '%s' is registered as CUDA shared memory, not system shared memory", name)
		}
		return []RegionStatus{rg.status()}, nil
	}
	out := make([]RegionStatus, 0, len(r.regions))
	for _, rg := range r.regions {
		if rg.cuda == nil {
			out = append(out, rg.status())
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func (rg *region) status() RegionStatus {
	return RegionStatus{Name: rg.name, Key: rg.key, Offset: rg.offset, ByteSize: rg.size}
}

// Unregister removes the system region name, or every system region when
// name is "". An unknown name, or a CUDA region's, is no error (as in
// Triton). A region that a lease holds stays mapped until the lease is
// released; its name is free at once.
func (r *Registry) Unregister(name string) error {
	var errs []error
	for _, rg := range r.remove(name, false) {
		errs = append(errs, rg.unmap())
	}
	return errors.Join(errs...)
}

// remove takes the regions of one kind named name (all of them for "")
// out of the registry, and returns those that no lease holds, to be
// unmapped now; the others are unmapped by their last lease.
func (r *Registry) remove(name string, cuda bool) []*region {
	r.mu.Lock()
	defer r.mu.Unlock()
	var gone []*region
	for n, rg := range r.regions {
		if (name == "" || n == name) && (rg.cuda != nil) == cuda {
			delete(r.regions, n)
			rg.removed = true
			if rg.leases == 0 {
				gone = append(gone, rg)
			}
		}
	}
	r.mapped -= len(gone)
	return gone
}

// Close unregisters every region and refuses new ones. Regions that
// leases hold are unmapped as the leases are released; Close returns how
// many are still mapped.
func (r *Registry) Close() (stillLeased int, err error) {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	err = errors.Join(r.Unregister(""), r.UnregisterCUDA(""))
	return r.Mapped(), err
}

// Mapped returns how many regions are mapped: those registered, and those
// unregistered that a lease still holds.
func (r *Registry) Mapped() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.mapped
}

// Lease is the use of byteSize bytes of a region by one request. Its
// memory stays mapped until Release.
type Lease struct {
	reg          *Registry
	rg           *region
	offset, size uint64 // the span, in the region
	data         []byte // the span, in a system region
	once         sync.Once
}

// Acquire leases byteSize bytes from offset of the region name, system or
// CUDA, checked against the region (Triton's words) and, for a system
// region, against the object's current size. The caller must Release the
// lease when the request no longer touches the memory.
func (r *Registry) Acquire(name string, offset, byteSize uint64) (*Lease, error) {
	r.mu.Lock()
	rg := r.regions[name]
	var err error
	switch {
	case rg == nil:
		err = core.Errorf(core.CodeNotFound, "Unable to find shared memory region: '%s'", name)
	case offset >= rg.size:
		err = core.Errorf(core.CodeInvalidArg, "Invalid offset for shared memory region: '%s'", name)
	case byteSize > math.MaxUint64-offset:
		err = core.Errorf(core.CodeInvalidArg, "Integer overflow detected: byte_size (%d) + offset (%d) exceeds maximum value (%d) for region '%s'",
			byteSize, offset, uint64(math.MaxUint64), name)
	case offset+byteSize > rg.size:
		err = core.Errorf(core.CodeInvalidArg, "Invalid offset + byte size for shared memory region: '%s'", name)
	default:
		rg.leases++
	}
	r.mu.Unlock()
	if err != nil {
		return nil, err
	}
	l := &Lease{reg: r, rg: rg, offset: offset, size: byteSize}
	if rg.cuda == nil {
		l.data = rg.data[offset : offset+byteSize : offset+byteSize]
	}
	if err := rg.checkObject(); err != nil {
		l.Release()
		return nil, err
	}
	return l, nil
}

// Release ends the lease; a second call does nothing. The last release of
// an unregistered region unmaps it.
func (l *Lease) Release() {
	l.once.Do(func() {
		r := l.reg
		r.mu.Lock()
		l.rg.leases--
		last := l.rg.removed && l.rg.leases == 0
		if last {
			r.mapped--
		}
		r.mu.Unlock()
		l.data = nil
		if last {
			l.rg.unmap() // an munmap error leaves nothing to undo
		}
	})
}
