package abi

/*
#include "objects.h"
*/
import "C"

import (
	"math"
	"unsafe"

	"github.com/tritonhost/tritonhost/core"
)

// updateState copies a state value a backend wrote (in C memory, freed by
// the caller right after) into Go memory and makes it the next value of
// the state of r's sequence. A value larger than the server holds is
// refused before it is copied.
func updateState(r *core.Request, name *C.char, dtype C.int, shape *C.int64_t, dims C.uint32_t, buf unsafe.Pointer, size C.uint64_t) error {
	n := C.GoString(name)
	if err := r.CheckStateSize(n, int64(min(uint64(size), math.MaxInt64))); err != nil {
		return err
	}
	goShape := make([]int64, int(dims))
	if dims > 0 {
		copy(goShape, unsafe.Slice((*int64)(unsafe.Pointer(shape)), int(dims)))
	}
	data := make([]byte, int(size))
	if size > 0 {
		copy(data, unsafe.Slice((*byte)(buf), int(size)))
	}
	return r.UpdateState(n, core.DataType(dtype), goShape, data)
}
