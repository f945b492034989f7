package abi

import (
	"errors"
	"io"
	"sync"

	"github.com/tritonhost/tritonhost/core"
)

// ServerInfo is what the server API says of the server a host serves
// beyond its models, and how a server TRITONSERVER_ServerNew made is
// stopped. Whoever attaches a server sets it (SetServerInfo): the serve
// command, or the server factory.
type ServerInfo struct {
	Name       string   // TRITONSERVER_ServerMetadata's "name" (default "triton")
	Version    string   // and "version"
	Extensions []string // and "extensions"
	// StrictReadiness makes TRITONSERVER_ServerIsReady require every model
	// the server tried to load to have loaded.
	StrictReadiness bool
	// Metrics writes the server's metrics in Prometheus' text format (nil:
	// the server keeps none, and the text is empty).
	Metrics func(io.Writer) error
	// Stop stops the server within its exit timeout, and SetExitTimeout
	// replaces that timeout; Close then releases what the factory made
	// (metrics polling, GPUs, a log file), after which the host is closed.
	// All three are set for a server TRITONSERVER_ServerNew made, and nil
	// otherwise: such a server belongs to the process that hosts it, and
	// TRITONSERVER_ServerStop, ServerDelete and ServerSetExitTimeout refuse
	// it.
	Stop           func() error
	SetExitTimeout func(seconds uint)
	Close          func()
}

// SetServerInfo sets what the server API says of the host's server; it
// may be set again (the serve command adds the metrics once its endpoint
// is up).
func (h *Host) SetServerInfo(info ServerInfo) { h.info.Store(&info) }

// ServerInfo returns what SetServerInfo last set (the zero value when
// nothing was).
func (h *Host) ServerInfo() ServerInfo {
	if p := h.info.Load(); p != nil {
		return *p
	}
	return ServerInfo{}
}

// Server returns the server attached to the host (AttachServer), nil when
// none is.
func (h *Host) Server() *core.Server { return h.server.Load() }

// serverInfo returns the host's server info, with the defaults of a host
// nobody described.
func (h *Host) serverInfo() *ServerInfo {
	if p := h.info.Load(); p != nil {
		return p
	}
	return &ServerInfo{Name: "triton", Version: "dev", StrictReadiness: true}
}

// ServerFactory creates the server TRITONSERVER_ServerNew asks for: a host
// with the server attached (AttachServer) and described (SetServerInfo,
// Stop, SetExitTimeout and Close set), whose models have loaded as the
// options say. On error nothing is left running.
type ServerFactory func(ServerOptions) (*Host, error)

var serverFactory struct {
	mu sync.Mutex
	f  ServerFactory
}

// SetServerFactory sets the function TRITONSERVER_ServerNew creates
// servers with. Package embedded sets it when it is linked in (the
// tritonhost binary and libtritonserver.so link it); without one,
// TRITONSERVER_ServerNew fails with TRITONSERVER_ERROR_UNSUPPORTED.
func SetServerFactory(f ServerFactory) {
	serverFactory.mu.Lock()
	serverFactory.f = f
	serverFactory.mu.Unlock()
}

func newServer(o ServerOptions) (*Host, error) {
	serverFactory.mu.Lock()
	f := serverFactory.f
	serverFactory.mu.Unlock()
	if f == nil {
		return nil, core.Errorf(core.CodeUnsupported, "this program cannot create servers: it does not link package embedded")
	}
	h, err := f(o)
	if err != nil {
		return nil, err
	}
	if info := h.info.Load(); info == nil || info.Stop == nil || info.Close == nil {
		return nil, errors.New("abi: the server factory returned a server without Stop and Close")
	}
	return h, nil
}

// deleteServer stops a server TRITONSERVER_ServerNew made, unless it has
// stopped, and releases it: the objects of the backend API still live then
// are logged, as the serve command logs them at exit.
func (h *Host) deleteServer(info *ServerInfo) error {
	err := info.Stop()
	if live := h.Live(); !live.Zero() {
		h.log.Warnf("backend API objects still live at exit: %v", live)
	} else {
		h.log.Infof("stopped")
	}
	info.Close()
	h.Close()
	return err
}
