// Command tritonhost serves Triton-style C backends over Triton's gRPC
// protocol, and talks to such a server from the command line.
package main

import (
	"fmt"
	"os"

	"github.com/tritonhost/tritonhost/internal/embedded" // TRITONSERVER_ServerNew for the backends
)

func main() {
	embedded.Version = buildVersion()
	if err := newRootCommand().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "tritonhost:", err)
		os.Exit(1)
	}
}
