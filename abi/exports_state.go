package abi

// This file holds the Go functions the implicit-state C code (state.c)
// calls (//export). cgo allows no C definitions in the preamble of a file
// with //export, so the C code lives in state.c and the glue in state.go.

/*
#include "handles.h"
*/
import "C"

import (
	"unsafe"

	"tritonhost/core"
)

//export thostStateCheck
func thostStateCheck(key C.uint64_t, name *C.char) (ret *C.TRITONSERVER_Error) {
	defer recoverError("TRITONBACKEND_StateNew", &ret)
	st, ok := requests.get(uint64(key))
	if !ok {
		return cErrorf(core.CodeNotFound, "TRITONBACKEND_StateNew: the request is no longer known to the server")
	}
	return cError(st.req.CheckStateOutput(C.GoString(name)))
}

//export thostStateUpdate
func thostStateUpdate(key C.uint64_t, name *C.char, dtype C.int, shape *C.int64_t, dims C.uint32_t, buf unsafe.Pointer, size C.uint64_t) (ret *C.TRITONSERVER_Error) {
	defer recoverError("TRITONBACKEND_StateUpdate", &ret)
	st, ok := requests.get(uint64(key))
	if !ok {
		return cErrorf(core.CodeNotFound, "TRITONBACKEND_StateUpdate: the request is no longer known to the server")
	}
	return cError(updateState(st.req, name, dtype, shape, dims, buf, size))
}
