package httpserver

import (
	"net/http"
	"strings"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/internal/protocol"
)

// What Triton's command line makes of an inference request beyond its
// body: headers forwarded as request parameters
// (--http-header-forward-pattern) and the permission to use client shared
// memory (--allow-client-shm).

// HeaderForwardSetting names Options.HeaderForward in the messages that
// refuse a forwarded header.
const HeaderForwardSetting = "--http-header-forward-pattern"

// ClientSharedMemoryDisabled is the message that refuses client shared
// memory on a server that does not allow it
// (Options.DisallowClientSharedMemory).
const ClientSharedMemoryDisabled = "client shared memory is not allowed on this server (--allow-client-shm=false): registering, unregistering and using shared-memory regions is refused; the operator can allow it with --allow-client-shm=true"

// clientSharedMemory refuses (403) when the server does not allow client
// shared memory.
func (s *Server) clientSharedMemory() error {
	if s.opts.DisallowClientSharedMemory {
		return &httpError{status: http.StatusForbidden, msg: ClientSharedMemoryDisabled}
	}
	return nil
}

// forwardHeaders adds the request headers that Options.HeaderForward
// matches to req as string parameters. Go's HTTP server does not keep a
// header name's case, so names are matched and forwarded in lower case, as
// HTTP/2 and gRPC carry them.
func (s *Server) forwardHeaders(h http.Header, req *core.Submission) error {
	if s.opts.HeaderForward == nil {
		return nil
	}
	lower := make(map[string][]string, len(h))
	for name, values := range h {
		n := strings.ToLower(name)
		lower[n] = append(lower[n], values...)
	}
	return protocol.ForwardHeaders(s.opts.HeaderForward, HeaderForwardSetting, lower, req)
}
