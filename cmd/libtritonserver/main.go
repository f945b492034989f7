// Command libtritonserver is not run: built with -buildmode=c-shared
// (`make lib`), it is libtritonserver.so, Triton's in-process server API
// for C and C++ applications, exporting every host function of
// include/triton/core/tritonserver.h and tritonbackend.h and nothing else
// (package abi's version script). An application creates a server with
// TRITONSERVER_ServerNew (package embedded makes it) and the backends the
// server loads resolve the API from this library: it is the
// libtritonserver.so that Triton backends name in DT_NEEDED, so the server
// loads no stub of that name. `make lib` links it with the soname
// libtritonserver.so (-extldflags -Wl,-soname,...), which Triton backends
// name in DT_NEEDED.
package main

import (
	"runtime/debug"

	_ "github.com/tritonhost/tritonhost/abi" // the API
	"github.com/tritonhost/tritonhost/internal/embedded"
)

// version is the release version, stamped at link time by `make lib` (-X
// main.version=...), as cmd/tritonhost's is.
var version = ""

func init() {
	embedded.Version = version
	if version == "" {
		embedded.Version = "dev"
		if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" && info.Main.Version != "(devel)" {
			embedded.Version = info.Main.Version
		}
	}
}

func main() {}
