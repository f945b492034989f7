package abi

/*
#include <stdlib.h>
#include "plugins.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"unsafe"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/loader"
)

// A response cache library (tritoncache.h): its four entry points, all
// required, and the TRITONCACHE_Cache its initialize returned. The host
// functions a cache calls are in cache_api.c; the lookup's copy crosses
// back into Go once (exports_cache.go).

// responseCache is an opened cache library; it implements
// core.ResponseCache.
type responseCache struct {
	host                   *Host
	path                   string
	dl                     unsafe.Pointer
	init, fini, look, insr unsafe.Pointer
	cache                  unsafe.Pointer // the cache's TRITONCACHE_Cache*

	closeOnce sync.Once
	closeErr  error
}

var (
	_ core.ResponseCache = (*responseCache)(nil)
	_ loader.CacheOpener = (*Host)(nil)
)

// OpenCache implements loader.CacheOpener: it loads the libtritonserver.so
// stub once per process, then the library with RTLD_NOW|RTLD_LOCAL,
// resolves its four entry points (a library without one of them is
// refused) and runs TRITONCACHE_CacheInitialize with config. On failure the
// library is closed again.
func (h *Host) OpenCache(path, name, config string) (core.ResponseCache, error) {
	if err := loadStub(); err != nil {
		return nil, err
	}
	dl, err := dlopen(path)
	if err != nil {
		return nil, err
	}
	c := &responseCache{host: h, path: path, dl: dl,
		init: dlsym(dl, "TRITONCACHE_CacheInitialize"), fini: dlsym(dl, "TRITONCACHE_CacheFinalize"),
		look: dlsym(dl, "TRITONCACHE_CacheLookup"), insr: dlsym(dl, "TRITONCACHE_CacheInsert")}
	for fn, p := range map[string]unsafe.Pointer{"TRITONCACHE_CacheInitialize": c.init, "TRITONCACHE_CacheFinalize": c.fini,
		"TRITONCACHE_CacheLookup": c.look, "TRITONCACHE_CacheInsert": c.insr} {
		if p == nil {
			_ = dlclose(dl)
			return nil, fmt.Errorf("cache %q: %s does not export %s", name, path, fn)
		}
	}
	var cache unsafe.Pointer
	if err := takeError(C.thost_cache_initialize(c.init, h.c, &cache, cstr(config), C.size_t(len(config)))); err != nil {
		_ = dlclose(dl)
		return nil, fmt.Errorf("cache %q: TRITONCACHE_CacheInitialize failed: %w", name, err)
	}
	c.cache = cache
	return c, nil
}

// Lookup implements core.ResponseCache. A cache's NOT_FOUND is a miss; a
// lookup that succeeds without copying (TRITONCACHE_Copy) is an error.
func (c *responseCache) Lookup(key string, alloc func(size int) []byte) (bool, error) {
	l := &cacheLookup{alloc: alloc}
	k := c.host.plugins.lookups.add(l)
	defer c.host.plugins.lookups.take(k)
	var copied C.bool
	err := takeError(C.thost_cache_lookup(c.look, c.host.c, c.cache, cstr(key), C.size_t(len(key)), C.uint64_t(k), &copied))
	switch {
	case core.CodeOf(err) == core.CodeNotFound:
		return false, nil
	case err != nil:
		return false, err
	case !bool(copied):
		return false, errors.New("TRITONCACHE_CacheLookup succeeded without copying the entry (TRITONCACHE_Copy)")
	}
	return true, nil
}

// Insert implements core.ResponseCache. entry is pinned for the call: the
// cache reads it through the entry's buffer and TRITONCACHE_Copy.
func (c *responseCache) Insert(key string, entry []byte) error {
	var pin runtime.Pinner
	defer pin.Unpin()
	var src unsafe.Pointer
	if len(entry) > 0 {
		src = unsafe.Pointer(unsafe.SliceData(entry))
		pin.Pin(src)
	}
	return takeError(C.thost_cache_insert(c.insr, c.host.c, c.cache, cstr(key), C.size_t(len(key)), src, C.uint64_t(len(entry))))
}

// Close implements core.ResponseCache: TRITONCACHE_CacheFinalize, then the
// library is closed. Only the first call does anything.
func (c *responseCache) Close() error {
	c.closeOnce.Do(func() {
		err := takeError(C.thost_cache_finalize(c.fini, c.host.c, c.cache))
		if err != nil {
			err = fmt.Errorf("TRITONCACHE_CacheFinalize of %s failed: %w", c.path, err)
		}
		c.closeErr = errors.Join(err, dlclose(c.dl))
	})
	return c.closeErr
}
