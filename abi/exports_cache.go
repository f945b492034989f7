package abi

// This file holds the Go function the C side calls when a cache copies a
// found entry (TRITONCACHE_Copy in a lookup); see exports_request.go.

/*
#include "plugins.h"
*/
import "C"

import (
	"unsafe"

	"github.com/tritonhost/tritonhost/core"
)

//export thostCacheLookupCopy
func thostCacheLookupCopy(host *C.struct_thost_host, lookup C.uint64_t, bases *unsafe.Pointer, sizes *C.uint64_t, n C.uint32_t) (ret *C.TRITONSERVER_Error) {
	defer recoverError("TRITONCACHE_Copy", &ret)
	h := hostOf(host)
	if h == nil {
		return cErrorf(core.CodeUnavailable, "TRITONCACHE_Copy: the server has stopped")
	}
	return cError(h.lookupCopy(uint64(lookup), unsafe.Slice(bases, int(n)), unsafe.Slice(sizes, int(n))))
}
