package grpcserver

import (
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tritonhost/tritonhost/core"
)

// grpcCode maps a core error class to the gRPC status code Triton uses for
// the corresponding TRITONSERVER_Error_Code.
func grpcCode(c core.Code) codes.Code {
	switch c {
	case core.CodeInternal:
		return codes.Internal
	case core.CodeNotFound:
		return codes.NotFound
	case core.CodeInvalidArg:
		return codes.InvalidArgument
	case core.CodeUnavailable:
		return codes.Unavailable
	case core.CodeUnsupported:
		return codes.Unimplemented
	case core.CodeAlreadyExists:
		return codes.AlreadyExists
	case core.CodeCancelled:
		return codes.Canceled
	}
	return codes.Unknown
}

// toStatus turns an error into a gRPC status error with the mapped code.
func toStatus(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := status.FromError(err); ok && !errors.As(err, new(*core.Error)) {
		return err
	}
	return status.Error(grpcCode(core.CodeOf(err)), err.Error())
}
