// Package httpserver serves a core.Server over Triton's HTTP/REST protocol
// (KServe v2 with Triton's extensions): health, server and model metadata,
// model readiness, configuration and statistics, inference with JSON
// tensors, Triton's binary tensor extension and system shared memory, the
// repository index and model load and unload (with a configuration and
// model files), the shared-memory regions (one registry with the gRPC
// frontend; CUDA regions answered as Triton without GPUs), and the runtime
// log settings.
//
// Decoupled models are served by the generate extension: /generate for a
// model that answers once, /generate_stream as Server-Sent Events, one
// "data:" event per response, closed after the last. /infer refuses them,
// as Triton does.
//
// Everything a client sends is bounded: the request body (compressed or
// not, and once decompressed) by Options.MaxInputBytes, the header by
// MaxHeaderBytes and ReadHeaderTimeout, an idle connection by IdleTimeout,
// the writing of a response by WriteTimeout, and an event stream by
// StreamLimits, whose stall timeout cuts off a client that stops reading
// so that no backend thread waits on it for longer. An output answered as
// JSON is streamed past 1 MiB, so that its JSON form, up to six times its
// size, is never held whole (jsonwriter.go). Options.Restricted limits
// Triton's categories of routes to clients that send a header with a value
// (restricted.go).
//
// Errors are Triton's: a JSON object {"error": "<message>"}, the message
// the core's, the status mapped from its code (see StatusOf). The words
// are Triton's where the gRPC frontend's are, through package protocol
// (model versions and lookup, load parameters, shared memory), and
// Triton's HTTP ones for the content of an input; the decoding of JSON
// values says in its own words what is wrong.
package httpserver
