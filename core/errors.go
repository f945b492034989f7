package core

import (
	"context"
	"errors"
	"fmt"
	"strconv"
)

// Code classifies an error. The values are those of TRITONSERVER_Error_Code,
// so they cross the C boundary unchanged.
type Code int

// Error codes, numbered as TRITONSERVER_Error_Code.
const (
	CodeUnknown       Code = 0
	CodeInternal      Code = 1
	CodeNotFound      Code = 2
	CodeInvalidArg    Code = 3
	CodeUnavailable   Code = 4
	CodeUnsupported   Code = 5
	CodeAlreadyExists Code = 6
	CodeCancelled     Code = 7
)

var codeNames = [...]string{
	CodeUnknown:       "Unknown",
	CodeInternal:      "Internal",
	CodeNotFound:      "Not found",
	CodeInvalidArg:    "Invalid argument",
	CodeUnavailable:   "Unavailable",
	CodeUnsupported:   "Unsupported",
	CodeAlreadyExists: "Already exists",
	CodeCancelled:     "Cancelled",
}

// String returns the code's name as Triton's ErrorCodeString spells it.
func (c Code) String() string {
	if c >= 0 && int(c) < len(codeNames) {
		return codeNames[c]
	}
	return "<invalid code>"
}

// Sentinel errors, one per code, for errors.Is. Every *Error matches the
// sentinel of its code.
var (
	ErrUnknown       = &Error{code: CodeUnknown, sentinel: true}
	ErrInternal      = &Error{code: CodeInternal, sentinel: true}
	ErrNotFound      = &Error{code: CodeNotFound, sentinel: true}
	ErrInvalidArg    = &Error{code: CodeInvalidArg, sentinel: true}
	ErrUnavailable   = &Error{code: CodeUnavailable, sentinel: true}
	ErrUnsupported   = &Error{code: CodeUnsupported, sentinel: true}
	ErrAlreadyExists = &Error{code: CodeAlreadyExists, sentinel: true}
	ErrCancelled     = &Error{code: CodeCancelled, sentinel: true}
)

// Error is an error with a Code. Create one with Errorf; test its class with
// errors.Is(err, ErrNotFound) or CodeOf(err).
type Error struct {
	code     Code
	err      error
	sentinel bool
}

// Errorf formats an error of the given code. A %w verb wraps a cause, which
// errors.Is and errors.As can still reach.
func Errorf(code Code, format string, args ...any) error {
	return &Error{code: code, err: fmt.Errorf(format, args...)}
}

// Error returns the message without the code.
func (e *Error) Error() string {
	if e.err == nil {
		return e.code.String()
	}
	return e.err.Error()
}

// Code returns the error's class.
func (e *Error) Code() Code { return e.code }

// Unwrap returns the wrapped cause, if any.
func (e *Error) Unwrap() error {
	if e.err == nil {
		return nil
	}
	return errors.Unwrap(e.err)
}

// Is reports whether target is the sentinel of e's code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.sentinel && t.code == e.code
}

// CodeOf returns the code of the outermost *Error in err's chain. Context
// cancellation maps to CodeCancelled, a passed deadline to CodeUnavailable,
// anything else to CodeUnknown; nil has no meaningful code and gives
// CodeUnknown.
func CodeOf(err error) Code {
	var e *Error
	switch {
	case errors.As(err, &e):
		return e.code
	case errors.Is(err, context.Canceled):
		return CodeCancelled
	case errors.Is(err, context.DeadlineExceeded):
		return CodeUnavailable
	}
	return CodeUnknown
}

// quoteAll returns names, each quoted as Go quotes strings.
func quoteAll(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = strconv.Quote(n)
	}
	return out
}
