package abi

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"

	"golang.org/x/sys/unix"
)

// StubSoname is the library name Triton backends are linked against.
const StubSoname = "libtritonserver.so"

// stubELF returns a minimal ELF shared object whose only content is the
// DT_SONAME libtritonserver.so: no code, no symbols. Once it is loaded, the
// dynamic loader counts a backend's DT_NEEDED libtritonserver.so as
// satisfied, and the backend's undefined TRITON* symbols resolve against the
// executable, which exports them.
func stubELF() ([]byte, error) {
	var machine uint16
	switch runtime.GOARCH {
	case "amd64":
		machine = 62 // EM_X86_64
	case "arm64":
		machine = 183 // EM_AARCH64
	default:
		return nil, fmt.Errorf("no %s stub for GOARCH %s", StubSoname, runtime.GOARCH)
	}
	const (
		ehdrSize  = 64
		phdrSize  = 56
		phnum     = 3
		symOff    = ehdrSize + phnum*phdrSize // one null symbol
		hashOff   = symOff + 24               // nbucket=1, nchain=1
		strOff    = hashOff + 16
		dynstr    = "\x00" + StubSoname + "\x00"
		dynOff    = (strOff + len(dynstr) + 7) &^ 7
		dynCount  = 7
		totalSize = dynOff + dynCount*16
	)
	le := binary.LittleEndian
	var b bytes.Buffer
	w := func(v any) { _ = binary.Write(&b, le, v) }

	// ELF header.
	b.Write([]byte{0x7f, 'E', 'L', 'F', 2 /*64-bit*/, 1 /*LE*/, 1 /*version*/, 0 /*SysV*/})
	b.Write(make([]byte, 8))
	w(uint16(3)) // ET_DYN
	w(machine)
	w(uint32(1))        // EV_CURRENT
	w(uint64(0))        // entry
	w(uint64(ehdrSize)) // phoff
	w(uint64(0))        // shoff
	w(uint32(0))        // flags
	w(uint16(ehdrSize))
	w(uint16(phdrSize))
	w(uint16(phnum))
	w(uint16(64)) // shentsize
	w(uint16(0))  // shnum
	w(uint16(0))  // shstrndx

	phdr := func(typ, flags uint32, off, size, align uint64) {
		w(typ)
		w(flags)
		w(off)  // offset
		w(off)  // vaddr
		w(off)  // paddr
		w(size) // filesz
		w(size) // memsz
		w(align)
	}
	const pfR, pfW = 4, 2
	phdr(1, pfR|pfW, 0, uint64(totalSize), 0x1000)   // PT_LOAD, everything
	phdr(2, pfR|pfW, uint64(dynOff), dynCount*16, 8) // PT_DYNAMIC
	phdr(0x6474e551, pfR|pfW, 0, 0, 16)              // PT_GNU_STACK: no executable stack
	b.Write(make([]byte, 24))                        // .dynsym: the null symbol
	w([4]uint32{1, 1, 0, 0})                         // .hash: nbucket, nchain, bucket[0], chain[0]
	b.WriteString(dynstr)                            // .dynstr
	b.Write(make([]byte, dynOff-strOff-len(dynstr))) // align .dynamic
	for _, d := range [dynCount][2]uint64{
		{14, 1},                   // DT_SONAME -> dynstr offset 1
		{4, hashOff},              // DT_HASH
		{5, strOff},               // DT_STRTAB
		{6, symOff},               // DT_SYMTAB
		{10, uint64(len(dynstr))}, // DT_STRSZ
		{11, 24},                  // DT_SYMENT
		{0, 0},                    // DT_NULL
	} {
		w(d)
	}
	if b.Len() != totalSize {
		return nil, fmt.Errorf("stub layout: wrote %d bytes, expected %d", b.Len(), totalSize)
	}
	return b.Bytes(), nil
}

var (
	stubOnce sync.Once
	stubErr  error
)

// loadStub makes libtritonserver.so loadable, once per process: it writes
// the stub to an anonymous memory file (or, failing that, a temporary file)
// and dlopens it. The library stays loaded for the life of the process.
// When an object of that name is loaded already, it is the real library
// (this package built as libtritonserver.so, cmd/libtritonserver, and
// loaded by an embedding application), which satisfies the backends'
// DT_NEEDED and exports the API itself: then no stub is loaded.
func loadStub() error {
	stubOnce.Do(func() { stubErr = loadStubOnce() })
	return stubErr
}

func loadStubOnce() error {
	if libraryLoaded(StubSoname) {
		return nil
	}
	img, err := stubELF()
	if err != nil {
		return err
	}
	if fd, err := unix.MemfdCreate(StubSoname, unix.MFD_CLOEXEC); err == nil {
		f := os.NewFile(uintptr(fd), StubSoname)
		defer f.Close()
		if _, err := f.Write(img); err == nil {
			if _, err := dlopen(fmt.Sprintf("/proc/self/fd/%d", fd)); err == nil {
				return nil
			}
		}
	}
	dir, err := os.MkdirTemp("", "tritonhost-stub-")
	if err != nil {
		return fmt.Errorf("load %s stub: %w", StubSoname, err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, StubSoname)
	if err := os.WriteFile(path, img, 0o644); err != nil {
		return fmt.Errorf("load %s stub: %w", StubSoname, err)
	}
	if _, err := dlopen(path); err != nil {
		return fmt.Errorf("load %s stub: %w", StubSoname, err)
	}
	return nil
}
