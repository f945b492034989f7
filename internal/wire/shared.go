package wire

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// Shared is a region of shared memory (a memfd) mapped into this process:
// tensor bytes too large for a message travel in one, its descriptor
// beside the message.
//
// A region from the other side is mapped only once it is sealed against
// shrinking: a process that truncated a region the server had mapped
// would make the server's next read of it fault (SIGBUS). The writer seals
// before it sends (Seal); Map refuses a region without the seal.
//
// A region whose writer also sealed it against writes (Freeze) is fixed
// for good: no process can change its bytes any more, so a receiver may
// hand them on (to a client's response) without copying them first, and
// without the sender changing them meanwhile.
type Shared struct {
	fd     int
	mem    []byte
	frozen bool // sealed against writes (F_SEAL_WRITE)
}

// NewShared creates a region of size bytes, mapped read-write.
func NewShared(name string, size int) (*Shared, error) {
	if size <= 0 {
		return nil, fmt.Errorf("shared memory %q: size %d", name, size)
	}
	fd, err := unix.MemfdCreate(name, unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return nil, fmt.Errorf("memfd_create: %w", err)
	}
	if err := unix.Ftruncate(fd, int64(size)); err != nil {
		_ = unix.Close(fd)
		return nil, fmt.Errorf("shared memory %q of %d bytes: %w", name, size, err)
	}
	mem, err := unix.Mmap(fd, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		_ = unix.Close(fd)
		return nil, fmt.Errorf("map shared memory %q of %d bytes: %w", name, size, err)
	}
	return &Shared{fd: fd, mem: mem}, nil
}

// Seal fixes the region's size for good, before it is sent.
func (s *Shared) Seal() error {
	_, err := unix.FcntlInt(uintptr(s.fd), unix.F_ADD_SEALS, unix.F_SEAL_SHRINK|unix.F_SEAL_GROW|unix.F_SEAL_SEAL)
	if err != nil {
		return fmt.Errorf("seal shared memory: %w", err)
	}
	return nil
}

// SealWriter is Seal for a region this side goes on writing through its
// own mapping while the other side reads it: its size is fixed, and so is
// who may write it, for good (F_SEAL_FUTURE_WRITE): no mapping made from
// then on, by either side, may write it, nor may write(2), so a receiver
// maps it read-only only and cannot change what this side reads back.
func (s *Shared) SealWriter() error {
	_, err := unix.FcntlInt(uintptr(s.fd), unix.F_ADD_SEALS, unix.F_SEAL_SHRINK|unix.F_SEAL_GROW|unix.F_SEAL_FUTURE_WRITE|unix.F_SEAL_SEAL)
	if err != nil {
		return fmt.Errorf("seal shared memory: %w", err)
	}
	return nil
}

// Freeze unmaps this side's mapping and seals the region against writes
// as well as resizing, for good, before it is sent: the receiver's Frozen
// then reports true. Bytes is nil afterwards; Close closes the descriptor.
func (s *Shared) Freeze() error {
	if s.mem != nil {
		if err := unix.Munmap(s.mem); err != nil {
			return fmt.Errorf("unmap shared memory: %w", err)
		}
		s.mem = nil
	}
	_, err := unix.FcntlInt(uintptr(s.fd), unix.F_ADD_SEALS, unix.F_SEAL_SHRINK|unix.F_SEAL_GROW|unix.F_SEAL_WRITE|unix.F_SEAL_SEAL)
	if err != nil {
		return fmt.Errorf("seal shared memory: %w", err)
	}
	s.frozen = true
	return nil
}

// Frozen reports whether the region is sealed against writes: its bytes
// never change again (Freeze).
func (s *Shared) Frozen() bool { return s.frozen }

// ErrUnsealed is Map's error for a region that could still shrink.
var ErrUnsealed = errors.New("shared memory is not sealed against shrinking")

// Map maps a region received from the other side, read-only, taking over
// fd (closed on error too). It refuses a region that is not sealed against
// shrinking, or larger than max bytes.
func Map(fd int, max int64) (*Shared, error) {
	seals, err := unix.FcntlInt(uintptr(fd), unix.F_GET_SEALS, 0)
	if err != nil {
		_ = unix.Close(fd)
		return nil, fmt.Errorf("shared memory: %w", err)
	}
	if seals&unix.F_SEAL_SHRINK == 0 {
		_ = unix.Close(fd)
		return nil, ErrUnsealed
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		_ = unix.Close(fd)
		return nil, fmt.Errorf("shared memory: %w", err)
	}
	if st.Size <= 0 || st.Size > max {
		_ = unix.Close(fd)
		return nil, fmt.Errorf("%w: shared memory of %d bytes (at most %d)", ErrMalformed, st.Size, max)
	}
	mem, err := unix.Mmap(fd, 0, int(st.Size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		_ = unix.Close(fd)
		return nil, fmt.Errorf("map shared memory of %d bytes: %w", st.Size, err)
	}
	return &Shared{fd: fd, mem: mem, frozen: seals&unix.F_SEAL_WRITE != 0}, nil
}

// Bytes returns the mapped memory; valid until Close.
func (s *Shared) Bytes() []byte { return s.mem }

// Fd returns the region's descriptor, to send.
func (s *Shared) Fd() int { return s.fd }

// Close unmaps the region and closes its descriptor.
func (s *Shared) Close() error {
	var err error
	if s.mem != nil {
		err = unix.Munmap(s.mem)
	}
	if cerr := unix.Close(s.fd); err == nil {
		err = cerr
	}
	s.mem = nil
	return err
}
