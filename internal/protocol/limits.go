package protocol

import (
	"time"

	"github.com/tritonhost/tritonhost/core"
)

// Bounds on one inference request, the same over gRPC and HTTP. Each is
// a count that a few bytes of a request can inflate into far more memory
// once decoded (an empty tensor is a few bytes on the wire and a struct of
// a hundred in memory); the request's bytes are bounded by each
// protocol's own message or body limit. A request past one is refused
// with TooMany's error.
const (
	// MaxRequestTensors bounds the inputs of one request, and its
	// requested outputs (and, over gRPC, its raw_input_contents entries).
	MaxRequestTensors = 4096
	// MaxRequestParameters bounds the parameters of one request, and
	// those of each of its inputs and outputs.
	MaxRequestParameters = 1024
	// MaxTensorDims bounds the dimensions of one input's shape: core's,
	// which a model's configuration is held to as it loads.
	MaxTensorDims = core.MaxTensorDims
)

// TooMany is the refusal of a request past one of the bounds: whose ("the
// request", "a tensor") has n of what, more than limit. INVALID_ARG, in
// the same words over both protocols.
func TooMany(whose string, n int, what string, limit int) error {
	return core.Errorf(core.CodeInvalidArg, "%s has %d %s, more than the %d the server accepts", whose, n, what, limit)
}

// MoreThan is TooMany for a frontend that stops counting one past the
// bound, so that a hostile request costs no more than the bound allows:
// whose has more than limit of what.
func MoreThan(whose, what string, limit int) error {
	return core.Errorf(core.CodeInvalidArg, "%s has more than the %d %s the server accepts", whose, limit, what)
}

// Defaults of the bounds on one stream of responses to a client: a gRPC
// ModelStreamInfer call or an HTTP generate_stream. A client that reads
// slower than its models answer may leave at most DefaultStreamMaxResponses
// responses of DefaultStreamMaxResponseBytes in all waiting in its stream
// (a single larger response still goes); a response that finds the stream
// full waits at most DefaultStreamStallTimeout for room, then the stream
// ends and its requests are cancelled.
const (
	DefaultStreamMaxResponses     = 256
	DefaultStreamMaxResponseBytes = 64 << 20
	DefaultStreamStallTimeout     = 5 * time.Second
)
