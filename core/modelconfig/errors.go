package modelconfig

import (
	"errors"
	"fmt"
)

// ErrInvalid is wrapped by every error this package returns because a
// configuration is malformed or not acceptable (as opposed to, say, a file
// that cannot be read). Callers map it to Triton's INVALID_ARG.
var ErrInvalid = errors.New("invalid model configuration")

// configError is an ErrInvalid with a message that names the model and the
// field at fault, e.g. `model "m": input "IN": data_type must be set`.
type configError struct {
	msg   string
	cause error // optional underlying error (a parser error, for example)
}

func (e *configError) Error() string { return e.msg }

// Unwrap reports ErrInvalid and, when present, the underlying cause.
func (e *configError) Unwrap() []error {
	if e.cause == nil {
		return []error{ErrInvalid}
	}
	return []error{ErrInvalid, e.cause}
}

// invalidf builds a configError for model. where names the field
// (`input "IN": dims`) and is followed by the message after a space, so
// messages start with a verb ("must be set"); where may be empty.
func invalidf(model, where, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if where != "" {
		msg = where + " " + msg
	}
	return &configError{msg: fmt.Sprintf("model %q: %s", model, msg)}
}
