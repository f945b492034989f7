package abi

// This file holds the Go functions the implicit-state C code (state.c)
// calls (//export). cgo allows no C definitions in the preamble of a file
// with //export, so the C code lives in state.c and the glue in state.go.

/*
#include "objects.h"
*/
import "C"

import "unsafe"

//export thostStateCheck
func thostStateCheck(ctx *C.struct_thost_reqctx, name *C.char) (ret *C.TRITONSERVER_Error) {
	const fn = "TRITONBACKEND_StateNew"
	defer recoverError(fn, &ret)
	st, cerr := requestOf(ctx, fn)
	if cerr != nil {
		return cerr
	}
	return cError(st.req.CheckStateOutput(C.GoString(name)))
}

//export thostStateUpdate
func thostStateUpdate(ctx *C.struct_thost_reqctx, name *C.char, dtype C.int, shape *C.int64_t, dims C.uint32_t, buf unsafe.Pointer, size C.uint64_t) (ret *C.TRITONSERVER_Error) {
	const fn = "TRITONBACKEND_StateUpdate"
	defer recoverError(fn, &ret)
	st, cerr := requestOf(ctx, fn)
	if cerr != nil {
		return cerr
	}
	return cError(updateState(st.req, name, dtype, shape, dims, buf, size))
}
