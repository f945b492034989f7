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
