package wire

import (
	"errors"
	"testing"

	"golang.org/x/sys/unix"
)

// sendRegion sends s's descriptor from a to b and returns the one b
// received, which the caller owns.
func sendRegion(t *testing.T, a, b *Conn, s *Shared) int {
	t.Helper()
	if err := a.Send([]byte("region"), s.Fd()); err != nil {
		t.Fatal(err)
	}
	_, fds, err := b.Recv(make([]byte, MaxMessage))
	if err != nil || len(fds) != 1 {
		t.Fatalf("%v %v", fds, err)
	}
	return fds[0]
}

func TestSharedMemoryTravelsSealed(t *testing.T) {
	a, b := pair(t)
	s, err := NewShared("tensor", 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	copy(s.Bytes(), "outputs")
	if err := s.Seal(); err != nil {
		t.Fatal(err)
	}
	m, err := Map(sendRegion(t, a, b, s), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if string(m.Bytes()[:7]) != "outputs" || len(m.Bytes()) != 1<<20 {
		t.Errorf("mapped %q of %d bytes", m.Bytes()[:7], len(m.Bytes()))
	}
	if err := unix.Ftruncate(s.Fd(), 10); err == nil {
		t.Error("a sealed region shrank")
	}
}

func TestUnsealedOrOversizedMemoryIsRefused(t *testing.T) {
	s, err := NewShared("loose", 4096)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	fd, _ := unix.Dup(s.Fd())
	if _, err := Map(fd, 1<<20); !errors.Is(err, ErrUnsealed) {
		t.Errorf("an unsealed region: %v, want ErrUnsealed", err)
	}
	if err := s.Seal(); err != nil {
		t.Fatal(err)
	}
	fd, _ = unix.Dup(s.Fd())
	if _, err := Map(fd, 1024); !errors.Is(err, ErrMalformed) {
		t.Errorf("a region over the bound: %v, want ErrMalformed", err)
	}
}

func TestAFrozenRegionCannotChange(t *testing.T) {
	s, err := NewShared("frozen", 4096)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	copy(s.Bytes(), "fixed")
	if err := s.Freeze(); err != nil {
		t.Fatal(err)
	}
	if s.Bytes() != nil {
		t.Error("the writer's mapping outlived Freeze")
	}
	if _, err := unix.Mmap(s.Fd(), 0, 4096, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED); err == nil {
		t.Error("a frozen region was mapped writable")
	}
	if _, err := unix.Pwrite(s.Fd(), []byte("x"), 0); err == nil {
		t.Error("a frozen region was written")
	}
	fd, _ := unix.Dup(s.Fd())
	m, err := Map(fd, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if !m.Frozen() || string(m.Bytes()[:5]) != "fixed" {
		t.Errorf("mapped: frozen %v, %q", m.Frozen(), m.Bytes()[:5])
	}
	fd, _ = unix.Dup(s.Fd())
	loose, err := NewShared("loose", 4096)
	if err != nil {
		t.Fatal(err)
	}
	defer loose.Close()
	if err := loose.Seal(); err != nil {
		t.Fatal(err)
	}
	unix.Close(fd)
	fd, _ = unix.Dup(loose.Fd())
	lm, err := Map(fd, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer lm.Close()
	if lm.Frozen() {
		t.Error("a region sealed only against resizing is taken for frozen")
	}
}

// TestAWriterSealedRegionIsWrittenByItsWriterOnly: after SealWriter the
// writer's own mapping still writes, and the receiver sees it, but the
// receiver can neither map the region writable, make its read-only
// mapping writable, nor write(2) it.
func TestAWriterSealedRegionIsWrittenByItsWriterOnly(t *testing.T) {
	a, b := pair(t)
	s, err := NewShared("inputs", 1<<16)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.SealWriter(); err != nil {
		t.Fatal(err)
	}
	fd := sendRegion(t, a, b, s)
	peer, err := unix.Dup(fd)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(peer)
	m, err := Map(fd, 1<<16)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	copy(s.Bytes(), "written after the seal")
	if got := string(m.Bytes()[:22]); got != "written after the seal" {
		t.Errorf("the receiver reads %q", got)
	}
	if mem, err := unix.Mmap(peer, 0, 1<<16, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED); err == nil {
		unix.Munmap(mem)
		t.Error("the receiver mapped a writer-sealed region writable")
	}
	if err := unix.Mprotect(m.Bytes(), unix.PROT_READ|unix.PROT_WRITE); err == nil {
		t.Error("the receiver made its read-only mapping writable")
	}
	if _, err := unix.Pwrite(peer, []byte("x"), 0); err == nil {
		t.Error("the receiver wrote the region with pwrite")
	}
	if err := unix.Fallocate(peer, unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, 0, 4096); err == nil {
		t.Error("the receiver punched a hole in the region")
	}
}
