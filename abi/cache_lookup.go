package abi

/*
#include "plugins.h"
*/
import "C"

import (
	"unsafe"

	"github.com/tritonhost/tritonhost/core"
)

// The lookup side of a cache's TRITONCACHE_Copy: Lookup (cache.go) adds a
// cacheLookup to its host's table and passes its key to C; the cache's
// copy calls thostCacheLookupCopy (exports_cache.go) with it, which copies
// the entry's buffers into the memory the lookup's alloc gives.

// pluginTables are a host's Go objects that its plugins' C objects name by
// key: the lookups in flight, which TRITONCACHE_Copy fills.
type pluginTables struct {
	lookups table[*cacheLookup]
}

// cacheLookup is one lookup in flight: alloc gives the memory the copy
// fills (core.ResponseCache.Lookup).
type cacheLookup struct {
	alloc func(size int) []byte
}

// lookupCopy copies the buffers a cache found into the lookup's memory
// (thostCacheLookupCopy). The server inserts one buffer per entry, so a
// found entry has exactly one.
func (h *Host) lookupCopy(key uint64, bases []unsafe.Pointer, sizes []C.uint64_t) error {
	l, ok := h.plugins.lookups.get(key)
	if !ok {
		return core.Errorf(core.CodeNotFound, "TRITONCACHE_Copy: the lookup is over")
	}
	if len(bases) != 1 {
		return core.Errorf(core.CodeInvalidArg, "TRITONCACHE_Copy: the entry holds %d buffers; the server stored one", len(bases))
	}
	size := uint64(sizes[0])
	if size > uint64(maxGoSlice) {
		return core.Errorf(core.CodeUnavailable, "TRITONCACHE_Copy: an entry of %d bytes is larger than the server holds", size)
	}
	buf := l.alloc(int(size))
	if buf == nil || len(buf) != int(size) {
		return core.Errorf(core.CodeUnavailable, "TRITONCACHE_Copy: an entry of %d bytes is larger than the server holds now", size)
	}
	if size > 0 {
		if bases[0] == nil {
			return core.Errorf(core.CodeInvalidArg, "TRITONCACHE_Copy: buffer 0 has no address")
		}
		copy(buf, unsafe.Slice((*byte)(bases[0]), int(size)))
	}
	return nil
}

// maxGoSlice is the largest entry lookupCopy accepts before asking alloc.
const maxGoSlice = 1 << 40
