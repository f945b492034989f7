package isolation

import (
	"fmt"
	"sync"

	"github.com/tritonhost/tritonhost/internal/wire"
)

// Bounds on the regions each side keeps for large tensors (regionPool):
// the server for execute messages' inputs, the worker for responses'
// outputs, each at most maxPooledRegions of them, of maxPooledBytes in
// all, held until the worker ends. Tensors that find no idle region that
// fits, and no room for a new one, travel in a region of their own, as
// other messages' regions always do. The server maps at most
// maxPooledRegions of the worker's.
const (
	maxPooledRegions = 4
	maxPooledBytes   = 256 << 20
	// minPooledBytes: inputs of fewer bytes travel in a region of their
	// own; a pooled region's size is a multiple of it.
	minPooledBytes = 1 << 20
)

// pooledRegion is one region of a regionPool: a memfd sealed against
// resizing and against every writer but its owner's one mapping
// (wire.Shared.SealWriter), which its owner (the side that writes it)
// maps read-write and the peer, once sent it, maps read-only and
// keeps mapped under id until told to forget it (msgForget). Whoever
// holds it, by state, is the only one that touches its bytes: the
// owner's goroutine that took it (writing), the peer (lent: it reads it,
// until it sends msgReturned), or nobody (idle). Its fields are guarded by the pool's
// mutex.
type pooledRegion struct {
	id     uint64
	region *wire.Shared
	known  bool // the worker was sent it and maps it
	state  regionUse
	// A goroutine writes it or sends its message (from take to sent or
	// unsent): nothing closes it meanwhile.
	inflight bool
	// A request's received message lies in it (lease, until its
	// inputLease is released): it is neither reused nor closed meanwhile,
	// whoever else holds it.
	leased bool
}

type regionUse int

const (
	regionIdle regionUse = iota
	regionWriting
	regionLent
)

// regionPool holds the regions one side writes large tensors into for
// the other, reused from one message to the next: the server's execute
// messages' inputs, the worker's responses' outputs. A steady stream of
// large requests then creates, maps and faults no new memory once warm.
// It is bounded by count and bytes (maxCount, maxBytes). Any goroutine
// may use it.
//
// A worker cannot harm the server through the server's pool: the server
// only writes these regions and never reads them, the seals keep their
// size, and a worker that never returns one (msgReturned) only makes
// later batches travel in regions of their own; returning one it does
// not hold is a malformed message. The server lends a response the
// worker's region its outputs are in (outRegion) until the response is
// freed, where it may (lendable), and copies them out otherwise.
type regionPool struct {
	name     string // its regions' name (memfd_create)
	mu       sync.Mutex
	regions  map[uint64]*pooledRegion
	bytes    int
	nextID   uint64
	closed   bool
	maxCount int
	maxBytes int
}

// newRegionPool is a pool of regions named name, at most maxCount of
// them, of maxBytes in all.
func newRegionPool(name string, maxCount, maxBytes int) *regionPool {
	return &regionPool{name: name, regions: map[uint64]*pooledRegion{}, maxCount: maxCount, maxBytes: maxBytes}
}

// take returns a region of at least total bytes for the caller to write
// (state writing), or nil when none fits and there is no room for a new
// one. forget lists the idle regions the worker knows that were closed to
// make room: the caller tells the worker (msgForget) before it sends the
// region.
func (p *regionPool) take(total int) (r *pooledRegion, forget []uint64, err error) {
	if total < minPooledBytes {
		return nil, nil, nil
	}
	size := (total + minPooledBytes - 1) / minPooledBytes * minPooledBytes
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || size > p.maxBytes {
		return nil, nil, nil
	}
	var best *pooledRegion
	for _, c := range p.regions {
		if n := len(c.region.Bytes()); c.state == regionIdle && !c.inflight && !c.leased && n >= total && n <= 2*total &&
			(best == nil || n < len(best.region.Bytes())) {
			best = c
		}
	}
	if best != nil {
		best.state = regionWriting
		best.inflight = true
		return best, nil, nil
	}
	// Room for a new one: idle regions go, largest first.
	for len(p.regions) >= p.maxCount || p.bytes+size > p.maxBytes {
		var victim *pooledRegion
		for _, c := range p.regions {
			if c.state == regionIdle && !c.inflight && !c.leased && (victim == nil || len(c.region.Bytes()) > len(victim.region.Bytes())) {
				victim = c
			}
		}
		if victim == nil {
			return nil, forget, nil // every one is in use
		}
		if victim.known {
			forget = append(forget, victim.id)
		}
		p.removeLocked(victim)
	}
	s, err := wire.NewShared(p.name, size)
	if err != nil {
		return nil, forget, err
	}
	if err := s.SealWriter(); err != nil {
		_ = s.Close()
		return nil, forget, err
	}
	p.nextID++
	r = &pooledRegion{id: p.nextID, region: s, state: regionWriting, inflight: true}
	p.regions[r.id] = r
	p.bytes += size
	return r, forget, nil
}

// removeLocked closes r and forgets it; p.mu is held.
func (p *regionPool) removeLocked(r *pooledRegion) {
	delete(p.regions, r.id)
	p.bytes -= len(r.region.Bytes())
	_ = r.region.Close()
}

// lent records, before its message is sent, that the worker is sent r
// (taken with take) and holds it until it returns it: a return may come
// as soon as the message is out. The caller then calls sent, or unsent
// if the message did not go.
func (p *regionPool) lent(r *pooledRegion) (wasKnown bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	wasKnown = r.known
	r.known = true
	r.state = regionLent
	return wasKnown
}

// sent ends the sending of r's message (lent): r is the pool's again.
func (p *regionPool) sent(r *pooledRegion) {
	p.mu.Lock()
	defer p.mu.Unlock()
	r.inflight = false
	if p.closed && !r.leased {
		p.removeLocked(r)
	}
}

// unsent gives back r, taken with take, whose message did not reach the
// worker; known is whether the worker knew it before.
func (p *regionPool) unsent(r *pooledRegion, known bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	r.state = regionIdle
	r.known = known
	r.inflight = false
	if p.closed && !r.leased {
		p.removeLocked(r)
	}
}

// returned records that the worker no longer reads region id
// (msgReturned); an id it does not hold is an error.
func (p *regionPool) returned(id uint64) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	r := p.regions[id]
	if r == nil {
		if p.closed {
			return nil
		}
		return fmt.Errorf("returned region %d, which it does not hold", id)
	}
	if r.state != regionLent {
		return fmt.Errorf("returned region %d, which it does not hold", id)
	}
	r.state = regionIdle
	return nil
}

// close closes the pool's regions once the worker is gone; one a
// goroutine still writes or sends goes when it is done (sent, unsent).
func (p *regionPool) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	for _, r := range p.regions {
		if !r.inflight && !r.leased {
			p.removeLocked(r)
		}
	}
}

// lease turns r, just taken (take), into the buffer of a request's
// received message: it stays out of use until unlease, while the request
// may also lend it to the worker (useLeased).
func (p *regionPool) lease(r *pooledRegion) {
	p.mu.Lock()
	defer p.mu.Unlock()
	r.state = regionIdle
	r.inflight = false
	r.leased = true // a pool closed meanwhile closes it at unlease
}

// unlease ends r's lease: r is the pool's again once the worker, if it
// holds it, returned it; a closed pool closes it, unless a goroutine
// still sends it.
func (p *regionPool) unlease(r *pooledRegion) {
	p.mu.Lock()
	defer p.mu.Unlock()
	r.leased = false
	if p.closed && !r.inflight {
		if p.regions[r.id] == r {
			p.removeLocked(r)
		}
	}
}

// useLeased takes r, leased from this pool, for an execute message that
// passes its inputs where they lie in it, as take does a region to write:
// false when the pool is closed or r is in use (the worker still holds
// it from an earlier message), and the inputs are copied as usual.
func (p *regionPool) useLeased(r *pooledRegion) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || p.regions[r.id] != r || !r.leased || r.state != regionIdle || r.inflight {
		return false
	}
	r.state = regionWriting
	r.inflight = true
	return true
}

// counts returns how many regions the pool holds and their bytes.
func (p *regionPool) counts() (n, bytes int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.regions), p.bytes
}
