package abi

import (
	"encoding/binary"
	"sync"
	"sync/atomic"
	"unsafe"
)

// Backends send the same few parameters with every response (Triton's
// identity sends three, one of them a string), so their names and short
// string values are interned: a response then allocates no strings for
// them. A lookup first tries recentStrings, a small direct-mapped cache
// of interned strings read without hashing the bytes, then the table of
// all of them (parameterStrings).

// parameterStrings holds every interned string. The table only grows, to
// maxParameterStrings strings of maxParameterStringBytes at most; other
// strings are copied each time. It is replaced, never changed, once
// published: lookups take no lock.
var parameterStrings struct {
	mu    sync.Mutex                         // serializes additions
	table atomic.Pointer[map[string]*string] // each string at its own address, for recentStrings
}

const (
	maxParameterStrings     = 256
	maxParameterStringBytes = 64
)

// recentStrings caches interned strings by recentSlot of their bytes. A
// slot holds the string last interned or found there; a string that
// collides with another only costs the table's lookup. Its entries are
// strings of parameterStrings' table, so it holds nothing the table does
// not.
var recentStrings [recentSlots]atomic.Pointer[string]

const recentSlots = 64 // a power of 2

// recentSlot is the slot of recentStrings for the n bytes at p: a mix of
// their length and of their first and last eight bytes (four, or each
// byte, for shorter strings), which tells apart the names and values a
// backend sends without reading all of a value's bytes.
func recentSlot(p unsafe.Pointer, n int) uint64 {
	b := unsafe.Slice((*byte)(p), n)
	var head, tail uint64
	switch {
	case n >= 8:
		head, tail = binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[n-8:])
	case n >= 4:
		head, tail = uint64(binary.LittleEndian.Uint32(b)), uint64(binary.LittleEndian.Uint32(b[n-4:]))
	default:
		for _, c := range b {
			head = head<<8 | uint64(c)
		}
	}
	h := (head ^ tail<<1 ^ uint64(n)<<56) * 0x9e3779b97f4a7c15
	return h >> (64 - 6) // recentSlots is 1<<6
}

// internString returns the n bytes at p as a Go string, interned when
// they are short. p must stay valid for the call only: the string never
// refers to it.
func internString(p unsafe.Pointer, n int) string {
	if n > maxParameterStringBytes {
		return string(unsafe.Slice((*byte)(p), n))
	}
	key := unsafe.String((*byte)(p), n) // valid for the lookups only
	slot := &recentStrings[recentSlot(p, n)]
	if s := slot.Load(); s != nil && *s == key {
		return *s
	}
	var table map[string]*string
	if t := parameterStrings.table.Load(); t != nil {
		table = *t
		if sp, ok := table[key]; ok {
			slot.Store(sp)
			return *sp
		}
	}
	s := string(unsafe.Slice((*byte)(p), n))
	if len(table) >= maxParameterStrings {
		return s
	}
	parameterStrings.mu.Lock()
	defer parameterStrings.mu.Unlock()
	if t := parameterStrings.table.Load(); t != nil {
		table = *t
	}
	if sp, ok := table[s]; ok {
		slot.Store(sp)
		return *sp
	}
	if len(table) < maxParameterStrings {
		next := make(map[string]*string, len(table)+1)
		for k, v := range table {
			next[k] = v
		}
		next[s] = &s
		parameterStrings.table.Store(&next)
		slot.Store(&s)
	}
	return s
}
