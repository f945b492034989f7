// Package grpcserver serves a core.Server over Triton's gRPC protocol,
// inference.GRPCInferenceService, wire-compatible with Triton's
// grpc_service.proto, so Triton's own clients and tools work unchanged.
//
// ModelInfer serves models that send one response per request.
// ModelStreamInfer serves every model, and is the only way to reach a
// decoupled one: each response carries the request's id and the response
// parameter triton_final_response; errors for one request travel as
// error_message and the stream stays open for the others.
//
// A stream has one reader goroutine (Recv, decode, submit) and sends only
// from its handler goroutine, through a bounded queue that backend threads
// push into: when the client reads slowly, backends wait instead of memory
// growing. When the stream ends, its pending requests are cancelled.
//
// Responses are encoded to wire bytes by the thread that produced them
// (wire.go). Outputs up to 4 KiB are copied into the message; larger ones
// are sent from where the backend wrote them: the frontend asks core for
// lent responses (core.Submission.FreesResponses) and frees each once
// gRPC has written it, or when it is dropped unsent (loan.go).
//
// Errors reach the client with Triton's codes and Triton's words: the
// core's through status.go, the frontend's own (the rules for raw, typed
// and shared-memory input data, model versions, load parameters) where
// they arise. Where the server says more than Triton, it says it after
// Triton's text, so that clients matching Triton's messages still match.
//
// Inputs and outputs may live in system or CUDA shared-memory regions
// (sharedmem.Registry, shared with the HTTP frontend): a request leases
// the spans it names, reads its inputs there (without a copy from system
// memory; copied to the host from a CUDA region), has its outputs copied
// there as each response arrives, and releases the leases once core
// reports it finished.
//
// Options.Restricted limits Triton's categories of RPCs to callers that
// send a header with a value; the check runs when a call's headers arrive,
// before any of its messages is read (restricted.go).
package grpcserver
