// Package server assembles and runs a tritonhost server: the one place
// where one is put together, for `tritonhost serve`, for
// TRITONSERVER_ServerNew (libtritonserver.so) and for Go programs.
//
// # Configuring
//
// Config holds every setting. Each field is the setting of one
// `tritonhost serve` flag, which its doc comment names, with the flag's
// unit and syntax; DefaultConfig returns the serve command's defaults.
// The serve command binds its flags to a Config (BindFlags, which a
// program may call on its own flag set too), and TRITONSERVER_ServerNew
// converts its TRITONSERVER_ServerOptions into one; a Go program fills
// one in itself. Validate checks a Config as New does first, and its
// errors name the flag of the setting at fault.
//
// # Running
//
// New assembles the server and loads its models: the log, the backend
// API's host (package abi), the backends and their loader (package
// loader), the GPUs, the tracer, the response cache and repository
// agents, the copies of object-storage repositories, the core server with
// its schedulers (package core), and the listeners the Config allows
// (Triton's gRPC and HTTP/REST protocols, Prometheus metrics). Serve
// serves the listeners until its context ends; Stop shuts the server down
// within Lifecycle.ExitTimeoutSecs and releases what it holds. Core gives
// the core server, for in-process inference (core.Server.Infer), model
// control and statistics; GRPCAddr, HTTPAddr and MetricsAddr say where
// the listeners listen (port 0 in the Config picks a free port). Package
// client calls a server over its protocols. See Example.
//
// # What importing the package does to a program
//
// Backends are C shared libraries that call the server back through
// Triton's C API (TRITONSERVER_*, TRITONBACKEND_*, TRITONCACHE_*,
// TRITONREPOAGENT_*). Package abi implements that API with cgo, so a
// program that imports server:
//
//   - needs cgo (CGO_ENABLED=1 and a C compiler) and links libdl;
//   - is linked with -rdynamic and a linker version script
//     (abi/exports.ld.so, passed by abi's #cgo LDFLAGS): the functions of
//     the four APIs that include/triton/core declares are in the
//     program's dynamic symbol table, where the backends it loads bind to
//     them, and every other symbol, Go's and C's (the program's own cgo
//     exports included), is made local, so that a backend can bind to
//     nothing else of the program;
//   - gives backends linked against libtritonserver.so (DT_NEEDED, as
//     Triton's are) a stub of that name, an empty library loaded once
//     from an anonymous memory file (or a temporary one) before the first
//     backend, so that they load and bind to the program's exports.
//
// Nothing else is added: no flag is registered on the standard flag set,
// no signal handler is installed (the serve command installs its own),
// and the program's garbage collector settings change only when
// GC.Unmanaged is false, as New then applies GC (GOGC and GOMEMLIMIT,
// process-wide). A backend's TRITONSERVER_ServerNew fails with
// TRITONSERVER_ERROR_UNSUPPORTED in such a program: only the tritonhost
// binary and libtritonserver.so create servers through the C API.
// Backends in worker processes (Isolation.Mode "process") need a
// tritonhost binary of the same build to run them (Isolation.WorkerCommand).
package server
