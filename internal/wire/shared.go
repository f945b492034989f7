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
type Shared struct {
	fd  int
	mem []byte
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
	return &Shared{fd: fd, mem: mem}, nil
}

// Bytes returns the mapped memory; valid until Close.
func (s *Shared) Bytes() []byte { return s.mem }

// Fd returns the region's descriptor, to send.
func (s *Shared) Fd() int { return s.fd }

// Close unmaps the region and closes its descriptor.
func (s *Shared) Close() error {
	err := unix.Munmap(s.mem)
	if cerr := unix.Close(s.fd); err == nil {
		err = cerr
	}
	s.mem = nil
	return err
}
