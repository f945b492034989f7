package abi

/*
#include "objects.h"

static TRITONSERVER_Error* thost_go_error(int code, const char* msg, size_t len) {
  return thost_error_new_n((TRITONSERVER_Error_Code)code, msg, len);
}
*/
import "C"

import (
	"fmt"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/serverlog"
)

// cError turns a Go error into a new TRITONSERVER_Error for a backend (which
// owns and deletes it). nil gives nil.
func cError(err error) *C.TRITONSERVER_Error {
	if err == nil {
		return nil
	}
	return newCError(core.CodeOf(err), err.Error())
}

// cErrorf formats a new TRITONSERVER_Error.
func cErrorf(code core.Code, format string, args ...any) *C.TRITONSERVER_Error {
	return newCError(code, fmt.Sprintf(format, args...))
}

func newCError(code core.Code, msg string) *C.TRITONSERVER_Error {
	return C.thost_go_error(C.int(code), cstr(msg), C.size_t(len(msg)))
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

// recoverError turns a panic in an exported function into an INTERNAL error
// for the calling backend instead of crashing the process. Deferred first
// in every export that returns an error.
func recoverError(fn string, ret **C.TRITONSERVER_Error) {
	if p := recover(); p != nil {
		*ret = cErrorf(core.CodeInternal, "%s: internal error in the server: %v", fn, p)
		newestLogger().Errorf("%s: recovered from panic: %v", fn, p)
	}
}

// recoverLog logs a panic in an exported function that returns nothing to
// the backend, instead of crashing the process.
func recoverLog(fn string) {
	if p := recover(); p != nil {
		newestLogger().Errorf("%s: recovered from panic: %v", fn, p)
	}
}

// newestLogger is the logger of the newest open host, for failures that
// cannot be pinned on one.
func newestLogger() *serverlog.Logger {
	hostRegistry.mu.Lock()
	defer hostRegistry.mu.Unlock()
	if n := len(hostRegistry.open); n > 0 {
		return hostRegistry.open[n-1].log
	}
	return serverlog.Discard()
}
