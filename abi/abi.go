// Package abi is every line of the server that uses cgo: the API that
// Triton-style backends call back into (every TRITONSERVER_* and
// TRITONBACKEND_* function the headers in include/ declare for backends,
// with their exact signatures), opening backend libraries and calling their
// entry points. It implements loader.Opener; nothing else in the server
// uses cgo. The only other C the server calls is NVML and the CUDA driver,
// which package gpu opens with purego.
//
// Exports. The API functions live in the C files of this package, compiled
// with -fvisibility=hidden; the headers' DECLSPEC macros make only the API
// visible. The package links with -rdynamic and exports.ld.so, a linker
// script (named .so because cgo only lets linker inputs with such names
// through its flag checks) whose version node keeps TRITONSERVER_*,
// TRITONBACKEND_*, TRITONCACHE_* and TRITONREPOAGENT_* global and makes
// every other symbol local. So the
// executable's dynamic symbol table holds exactly the API, and a backend
// opened with dlopen(RTLD_NOW|RTLD_LOCAL) resolves it from the executable
// without ever binding to a symbol of the Go or C runtime.
//
// Handles. A backend never receives an address: every object is reached
// through a generation-checked handle (handle_table.h), so a handle used
// after its object is gone, however long after, or a made-up pointer is
// refused with TRITONSERVER_ERROR_INVALID_ARG instead of touching memory.
//
// Servers. Host is one server's side of the API: its Go tables, logger,
// metrics registry and live-object counters. Several hosts may live in one
// process; each object belongs to one.
//
// Data lives in C: a request is one C block filled by Go before Execute, so
// a backend's getters never cross into Go; a response is built in C and
// crosses into Go once, when it is sent. Its outputs are not copied into
// Go when the request's caller frees its responses
// (core.Submission.FreesResponses, as the gRPC frontend does): the
// C response is lent and lives until the caller's Free (lent.go); for
// other callers they are copied (response_copy.go). Go is reached only
// for routing (send, release), statistics, configuration changes, metrics
// and logging, through the //export functions in exports_*.go, each of
// which recovers from panics. Go memory is held in C memory in two places
// only, each pinned (runtime.Pinner) for as long: in a request block, the
// buffers of its inputs and the values of its BYTES parameters, from the
// block's layout until the backend releases the request, or until the
// block is freed after a failed Execute; and in the entry a response
// cache reads, the serialized response, for the one insert call
// (cache.go). Buffers that are C memory (a shared-memory region, a
// calling backend's input) are passed as they are.
//
// GPUs. A host given Devices (core.Devices, package gpu) serves GPU and
// pinned memory from their pools (MemoryManagerAllocate, OutputBuffer;
// exports_device.go), copies GPU outputs to the host when a response is
// sent, and makes a GPU instance's device current from C, through the hook
// Devices.ContextHook returns, right before each of the instance's entry
// points (host.c). abi itself never links CUDA: the hook is a function
// pointer package gpu found with purego.
//
// The in-process API. A backend may run inference on the other models of
// the server it was attached to (Host.AttachServer): a request it builds
// (infer_request_*.c) is C memory that Go reads once, when it is submitted
// (inprocess_request.go), input buffers passed on uncopied; the serving
// backend writes outputs into buffers of the caller's response allocator
// (allocator_api.c); and one goroutine per submitted request delivers its
// responses (infer_response_build.c, inprocess_response.go) and then the
// release callback, through a queue bounded by
// HostOptions.InProcessMaxPending (inprocess.go). Errors are the core's, in
// Triton's words. A trace a caller makes (traces.go, trace.c) follows the
// request it is submitted with and comes back through its release function
// once the request has finished.
//
// Servers made through the API. TRITONSERVER_ServerNew hands the settings
// of a TRITONSERVER_ServerOptions object (options.go, a Go record behind a
// handle) to the ServerFactory (SetServerFactory; package embedded
// registers one), which returns a host with its server attached and
// described (ServerInfo: metadata, readiness rule, metrics, how to stop
// it). The server object's functions (server_object.c,
// exports_server.go) then work on any host's server alike, the one
// `tritonhost serve` attaches included, except that only a server
// TRITONSERVER_ServerNew made can be stopped or deleted through the API.
// Built with -buildmode=c-shared (cmd/libtritonserver), the package is
// libtritonserver.so: it then loads no stub of that name (stub.go).
package abi

/*
#cgo CFLAGS: -I${SRCDIR}/../include -fvisibility=hidden -D_COMPILING_TRITONSERVER -D_COMPILING_TRITONBACKEND -D_COMPILING_TRITONCACHE -D_COMPILING_TRITONREPOAGENT -O2 -Wall
#cgo LDFLAGS: -rdynamic ${SRCDIR}/exports.ld.so -ldl
*/
import "C"
