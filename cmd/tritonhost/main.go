// Command tritonhost serves Triton-style C backends over Triton's gRPC
// protocol, and talks to such a server from the command line.
package main

import (
	"fmt"
	"os"

	"github.com/tritonhost/tritonhost/internal/embedded" // TRITONSERVER_ServerNew for the backends
	"github.com/tritonhost/tritonhost/internal/sysmon"
)

func main() {
	embedded.Version = buildVersion()
	root := newRootCommand()
	if cmd, _, err := root.Find(os.Args[1:]); err == nil && cmd.Name() == "serve" {
		// A server starts again, once and under the same pid, with the
		// runtime's monitor kept awake (package sysmon), before it
		// parses or opens anything.
		if err := sysmon.Exec(); err != nil {
			fmt.Fprintln(os.Stderr, "tritonhost: serving without the runtime setting:", err)
		}
	}
	if err := root.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "tritonhost:", err)
		os.Exit(1)
	}
}
