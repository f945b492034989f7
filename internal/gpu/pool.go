package gpu

import (
	"fmt"
	"slices"
	"sync"
)

// poolAlignment is the alignment of every block a pool hands out (CUDA's
// allocations are 256-byte aligned, and backends rely on it).
const poolAlignment = 256

// pool hands out blocks of one preallocated region [base, base+size), as
// Triton's pools do (CNMeM on devices, a managed buffer for pinned memory):
// it never grows, so a request past what is free is refused. First fit on
// an address-ordered free list, coalesced on free. Safe for concurrent use.
type pool struct {
	base, size uintptr

	mu    sync.Mutex
	free  []block             // address order, never adjacent
	used  map[uintptr]uintptr // block address -> its size
	inUse uintptr             // bytes of the blocks in used
}

type block struct{ addr, size uintptr }

func newPool(base, size uintptr) *pool {
	p := &pool{base: base, size: size, used: map[uintptr]uintptr{}}
	if size > 0 {
		p.free = []block{{base, size}}
	}
	return p
}

// alloc returns a block of at least n bytes, or false when no free run is
// large enough.
func (p *pool) alloc(n uint64) (uintptr, bool) {
	if n > uint64(p.size) {
		return 0, false
	}
	need := (uintptr(n) + poolAlignment - 1) &^ (poolAlignment - 1)
	if need == 0 {
		need = poolAlignment
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, b := range p.free {
		if b.size < need {
			continue
		}
		if b.size == need {
			p.free = slices.Delete(p.free, i, i+1)
		} else {
			p.free[i] = block{b.addr + need, b.size - need}
		}
		p.used[b.addr] = need
		p.inUse += need
		return b.addr, true
	}
	return 0, false
}

// release returns the block at addr to the pool.
func (p *pool) release(addr uintptr) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	n, ok := p.used[addr]
	if !ok {
		return fmt.Errorf("%#x is not a block of this pool", addr)
	}
	delete(p.used, addr)
	p.inUse -= n
	i, _ := slices.BinarySearchFunc(p.free, addr, func(b block, a uintptr) int {
		switch {
		case b.addr < a:
			return -1
		case b.addr > a:
			return 1
		}
		return 0
	})
	p.free = slices.Insert(p.free, i, block{addr, n})
	if i+1 < len(p.free) && p.free[i].addr+p.free[i].size == p.free[i+1].addr {
		p.free[i].size += p.free[i+1].size
		p.free = slices.Delete(p.free, i+1, i+2)
	}
	if i > 0 && p.free[i-1].addr+p.free[i-1].size == p.free[i].addr {
		p.free[i-1].size += p.free[i].size
		p.free = slices.Delete(p.free, i, i+1)
	}
	return nil
}

// stats returns the blocks handed out and their bytes.
func (p *pool) stats() (blocks int, bytes uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.used), uint64(p.inUse)
}
