package abi

import (
	"sync"
	"sync/atomic"
)

// table maps keys to the Go objects that C objects refer to (C holds the
// key, never a Go pointer). Keys are never reused, so a C object that
// outlived its Go object finds nothing instead of another object. Lookups
// are lock-free (sync.Map).
type table[T any] struct {
	next atomic.Uint64
	m    sync.Map
	n    atomic.Int64
}

func (t *table[T]) add(v T) uint64 {
	k := t.next.Add(1)
	t.m.Store(k, v)
	t.n.Add(1)
	return k
}

func (t *table[T]) get(k uint64) (T, bool) {
	v, ok := t.m.Load(k)
	if !ok {
		var zero T
		return zero, false
	}
	return v.(T), true
}

func (t *table[T]) take(k uint64) (T, bool) {
	v, ok := t.m.LoadAndDelete(k)
	if !ok {
		var zero T
		return zero, false
	}
	t.n.Add(-1)
	return v.(T), true
}

func (t *table[T]) len() int { return int(t.n.Load()) }

// slotTable maps keys to the Go objects of C objects on paths taken for
// every request or response (the requests backends hold, the instances
// they report for): a lookup is an index into an array and a few atomic
// loads, with no hashing, no lock and no allocation. A key is a slot and
// the slot's generation, so a key whose object was taken finds nothing,
// even once its slot holds another object (a slot's keys repeat only after
// 2^32 reuses of it). Adding and taking hold a lock (once per request, not
// per response). The slots grow in chunks of 1<<slotChunkBits as the
// number of live objects reaches a new peak and are kept, so the table's
// memory is bounded by that peak. Safe for concurrent use.
type slotTable[T any] struct {
	mu     sync.Mutex
	free   []uint32                        // slots not in use (under mu)
	made   uint32                          // slots ever used (under mu)
	chunks atomic.Pointer[[]*slotChunk[T]] // replaced, not changed, when it grows (under mu)
	n      atomic.Int64
}

const slotChunkBits = 10

type slotChunk[T any] [1 << slotChunkBits]slotEntry[T]

type slotEntry[T any] struct {
	key atomic.Uint64 // the live key, 0 when free
	gen uint32        // generations handed out (under the table's mu)
	v   atomic.Pointer[T]
}

// add stores v and returns its key (never 0).
func (t *slotTable[T]) add(v *T) uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	var slot uint32
	if n := len(t.free); n > 0 {
		slot = t.free[n-1]
		t.free = t.free[:n-1]
	} else {
		slot = t.made
		t.made++
		chunks := t.chunks.Load()
		if chunks == nil || int(slot>>slotChunkBits) >= len(*chunks) {
			var grown []*slotChunk[T]
			if chunks != nil {
				grown = append(grown, *chunks...)
			}
			grown = append(grown, new(slotChunk[T]))
			t.chunks.Store(&grown)
		}
	}
	e := t.entry(slot)
	e.gen++
	if e.gen == 0 { // a key is never 0
		e.gen = 1
	}
	k := uint64(e.gen)<<32 | uint64(slot)
	e.v.Store(v)
	e.key.Store(k)
	t.n.Add(1)
	return k
}

// entry returns the entry of a slot that was made.
func (t *slotTable[T]) entry(slot uint32) *slotEntry[T] {
	return &(*t.chunks.Load())[slot>>slotChunkBits][slot&(1<<slotChunkBits-1)]
}

// get returns the object of k, nil when k is not live.
func (t *slotTable[T]) get(k uint64) *T {
	chunks := t.chunks.Load()
	slot := uint32(k)
	if chunks == nil || int(slot>>slotChunkBits) >= len(*chunks) {
		return nil
	}
	e := &(*chunks)[slot>>slotChunkBits][slot&(1<<slotChunkBits-1)]
	if e.key.Load() != k {
		return nil
	}
	v := e.v.Load()
	if e.key.Load() != k { // taken, and maybe reused, meanwhile
		return nil
	}
	return v
}

// take removes k and returns its object, nil when k was not live.
func (t *slotTable[T]) take(k uint64) *T {
	t.mu.Lock()
	defer t.mu.Unlock()
	slot := uint32(k)
	if slot >= t.made {
		return nil
	}
	e := t.entry(slot)
	if e.key.Load() != k {
		return nil
	}
	v := e.v.Load()
	e.key.Store(0)
	e.v.Store(nil)
	t.free = append(t.free, slot)
	t.n.Add(-1)
	return v
}

func (t *slotTable[T]) len() int { return int(t.n.Load()) }
