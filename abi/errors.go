package abi

/*
#include "handles.h"

static TRITONSERVER_Error* thost_go_error(int code, _GoString_ msg) {
  return thost_error_new_n((TRITONSERVER_Error_Code)code, _GoStringPtr(msg), _GoStringLen(msg));
}
*/
import "C"

import (
	"fmt"

	"tritonhost/core"
)

// cError turns a Go error into a new TRITONSERVER_Error for a backend (which
// owns and deletes it). nil gives nil.
func cError(err error) *C.TRITONSERVER_Error {
	if err == nil {
		return nil
	}
	return C.thost_go_error(C.int(core.CodeOf(err)), err.Error())
}

// cErrorf formats a new TRITONSERVER_Error.
func cErrorf(code core.Code, format string, args ...any) *C.TRITONSERVER_Error {
	return C.thost_go_error(C.int(code), fmt.Sprintf(format, args...))
}

// errorMessage returns the message of a C error without taking it.
func errorMessage(e *C.TRITONSERVER_Error) string {
	return C.GoString(C.TRITONSERVER_ErrorMessage(e))
}

// takeError converts an error a backend returned into a Go error and
// deletes it. nil gives nil.
func takeError(e *C.TRITONSERVER_Error) error {
	if e == nil {
		return nil
	}
	err := core.Errorf(core.Code(e.code), "%s", errorMessage(e))
	C.TRITONSERVER_ErrorDelete(e)
	return err
}

// recoverLog logs a panic in an exported function that returns nothing to
// the backend, instead of crashing the process.
func recoverLog(what string) {
	if p := recover(); p != nil {
		if l := logger.Load(); l != nil {
			l.Errorf("%s: recovered from panic: %v", what, p)
		}
	}
}

// recoverError turns a panic in an exported function into an INTERNAL error
// for the calling backend instead of crashing the process.
func recoverError(fn string, ret **C.TRITONSERVER_Error) {
	if p := recover(); p != nil {
		*ret = cErrorf(core.CodeInternal, "%s: internal error in the server: %v", fn, p)
		if l := logger.Load(); l != nil {
			l.Errorf("%s: recovered from panic: %v", fn, p)
		}
	}
}
