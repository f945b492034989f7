package grpcserver

import (
	"context"
	"slices"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/encoding/gzip"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// What Triton's command line makes of an inference call beyond its
// message: headers forwarded as request parameters
// (--grpc-header-forward-pattern), the permission to use client shared
// memory (--allow-client-shm) and the compression of responses
// (--grpc-infer-response-compression-level).

// HeaderForwardSetting names Options.HeaderForward in the messages that
// refuse a forwarded header.
const HeaderForwardSetting = "--grpc-header-forward-pattern"

// ClientSharedMemoryDisabled is the message that refuses client shared
// memory on a server that does not allow it
// (Options.DisallowClientSharedMemory).
const ClientSharedMemoryDisabled = "client shared memory is not allowed on this server (--allow-client-shm=false): registering, unregistering and using shared-memory regions is refused; the operator can allow it with --allow-client-shm=true"

// errClientSharedMemory refuses client shared memory: PERMISSION_DENIED.
func errClientSharedMemory() error {
	return status.Error(codes.PermissionDenied, ClientSharedMemoryDisabled)
}

// clientSharedMemory refuses the call when the server does not allow
// client shared memory.
func (s *Service) clientSharedMemory() error {
	if s.opts.DisallowClientSharedMemory {
		return errClientSharedMemory()
	}
	return nil
}

// forwardedHeaders returns the call metadata that Options.HeaderForward
// may forward (nil when it is not set): all of it, read once per call.
func (s *Service) forwardedHeaders(ctx context.Context) metadata.MD {
	if s.opts.HeaderForward == nil {
		return nil
	}
	md, _ := metadata.FromIncomingContext(ctx)
	return md
}

// compressResponses asks gRPC to compress the call's responses with gzip
// when the service compresses inference responses
// (Options.InferResponseCompression) and the client accepts gzip; a client
// that does not gets them uncompressed, as from Triton. It must be called
// before the call sends anything.
func (s *Service) compressResponses(ctx context.Context) {
	if s.opts.InferResponseCompression <= 0 {
		return
	}
	accepted, err := grpc.ClientSupportedCompressors(ctx)
	if err != nil || !slices.Contains(accepted, gzip.Name) {
		return
	}
	_ = grpc.SetSendCompressor(ctx, gzip.Name) // the client accepts it: no error
}

// setCompressionLevel sets gzip's level for the process, once per
// service that compresses.
func setCompressionLevel(level int) error {
	if level <= 0 {
		return nil
	}
	return gzip.SetLevel(level)
}
