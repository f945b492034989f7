package sharedmem_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	"github.com/tritonhost/tritonhost/internal/sharedmem"
)

// fakeGPUs is a CUDA driver in Go for the registry's tests: device memory
// is Go memory at made-up addresses, a handle names an allocation, and
// every call checks what the driver checks (the GPU, a live mapping, the
// bounds). The fake driver library (internal/testenv) stands in for the
// real one in the frontend's and the server's tests.
type fakeGPUs struct {
	devices int

	mu         sync.Mutex
	allocs     map[uint64]*fakeAlloc // by handle number
	mapped     map[uintptr]*fakeAlloc
	next       uint64
	opened     int // handles opened, ever
	failClose  bool
	copiesTo   int // CopyFromHost calls
	copiesFrom int // CopyToHost calls
}

type fakeAlloc struct {
	device int64
	mem    []byte
}

var _ sharedmem.CUDA = (*fakeGPUs)(nil)

func newFakeGPUs(devices int) *fakeGPUs {
	return &fakeGPUs{devices: devices, allocs: map[uint64]*fakeAlloc{}, mapped: map[uintptr]*fakeAlloc{}}
}

// export allocates size bytes on a GPU, as a client does, and returns the
// memory and its IPC handle.
func (g *fakeGPUs) export(device int64, size int) ([]byte, []byte) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.next++
	a := &fakeAlloc{device: device, mem: make([]byte, size)}
	g.allocs[g.next] = a
	h := make([]byte, sharedmem.IPCHandleSize)
	copy(h, "fakegpus")
	binary.LittleEndian.PutUint64(h[8:], g.next)
	return a.mem, h
}

// live returns how many handles are open.
func (g *fakeGPUs) live() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.mapped)
}

func (g *fakeGPUs) OpenIPCHandle(id int64, handle [sharedmem.IPCHandleSize]byte) (uintptr, uint64, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	a := g.allocs[binary.LittleEndian.Uint64(handle[8:])]
	switch {
	case id < 0 || id >= int64(g.devices):
		return 0, 0, errors.New("invalid device ordinal")
	case string(handle[:8]) != "fakegpus" || a == nil:
		return 0, 0, errors.New("invalid argument")
	case a.device != id:
		return 0, 0, errors.New("peer access is not supported between these two devices")
	}
	g.opened++
	p := uintptr(g.opened) << 32 // another address for every mapping
	g.mapped[p] = a
	return p, uint64(len(a.mem)), nil
}

func (g *fakeGPUs) CloseIPCHandle(id int64, p uintptr) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.failClose {
		return errors.New("invalid resource handle")
	}
	if a := g.mapped[p]; a == nil || a.device != id {
		return errors.New("invalid argument")
	}
	delete(g.mapped, p)
	return nil
}

// span returns n bytes of the mapping at p on GPU id.
func (g *fakeGPUs) span(p uintptr, n int, id int64) ([]byte, error) {
	for base, a := range g.mapped {
		if p >= base && p-base+uintptr(n) <= uintptr(len(a.mem)) {
			if a.device != id {
				return nil, errors.New("an address of another GPU")
			}
			return a.mem[p-base : p-base+uintptr(n)], nil
		}
	}
	return nil, fmt.Errorf("invalid argument (no mapping holds %d bytes at %#x)", n, p)
}

func (g *fakeGPUs) CopyToHost(dst []byte, src uintptr, id int64) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	mem, err := g.span(src, len(dst), id)
	if err == nil {
		copy(dst, mem)
		g.copiesFrom++
	}
	return err
}

func (g *fakeGPUs) CopyFromHost(dst uintptr, src []byte, id int64) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	mem, err := g.span(dst, len(src), id)
	if err == nil {
		copy(mem, src)
		g.copiesTo++
	}
	return err
}
