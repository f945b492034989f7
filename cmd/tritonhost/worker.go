package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"github.com/tritonhost/tritonhost/internal/isolation"
	"github.com/tritonhost/tritonhost/internal/wire"
)

// newWorkerCommand is the hidden command a server starts a worker process
// with, for a model whose backend runs isolated (--backend-isolation): its
// sockets to the server are descriptors 3 (what it reads) and 4 (what it
// writes).
func newWorkerCommand() *cobra.Command {
	return &cobra.Command{
		Use:    "worker",
		Short:  "Host one model's backend for the server that started this process",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			// The server checks nothing after starting the worker; the
			// worker checks the server is still the one that started it
			// (a worker started just as its server died is not orphaned).
			if want, err := strconv.Atoi(os.Getenv("TRITONHOST_WORKER_PARENT")); err != nil || os.Getppid() != want {
				return fmt.Errorf("worker: not started by a live tritonhost server (parent %d)", os.Getppid())
			}
			if v := os.Getenv("TRITONHOST_WORKER_MEMORY_LIMIT"); v != "" {
				if err := boundAddressSpace(v); err != nil {
					return fmt.Errorf("worker: memory limit: %w", err)
				}
			}
			conn, err := wire.NewConn(wire.Ends{Read: os.NewFile(3, "server"), Write: os.NewFile(4, "server")})
			if err != nil {
				return fmt.Errorf("worker: %w", err)
			}
			defer conn.Close()
			return isolation.RunWorker(conn, os.Stderr)
		},
	}
}

// boundAddressSpace sets RLIMIT_AS to what the process maps now (the Go
// runtime's reservations, the binary and its libraries) plus the given
// number of bytes: the flag bounds what the backend maps, not what the
// runtime reserved before it was loaded.
func boundAddressSpace(extra string) error {
	n, err := strconv.ParseUint(extra, 10, 64)
	if err != nil {
		return fmt.Errorf("%q is not a byte count: %w", extra, err)
	}
	now, err := mappedBytes()
	if err != nil {
		return err
	}
	limit := now + n
	if err := unix.Setrlimit(unix.RLIMIT_AS, &unix.Rlimit{Cur: limit, Max: limit}); err != nil {
		return fmt.Errorf("RLIMIT_AS of %d bytes: %w", limit, err)
	}
	return nil
}

// mappedBytes is the process's address space now: VmSize of
// /proc/self/status.
func mappedBytes() (uint64, error) {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmSize:"); ok {
			kb, err := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("VmSize %q: %w", v, err)
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("no VmSize in /proc/self/status")
}
