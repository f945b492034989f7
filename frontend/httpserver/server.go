package httpserver

import (
	"net/http"
	"sync"
	"time"

	"tritonhost/core"
	"tritonhost/frontend/protocol"
	"tritonhost/frontend/sharedmem"
	"tritonhost/trace"
)

// Defaults of Options.
const (
	DefaultMaxInputBytes     = 256 << 20
	DefaultMaxHeaderBytes    = 64 << 10
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultIdleTimeout       = 5 * time.Minute
	DefaultWriteTimeout      = 5 * time.Minute
)

// Options configure a Server. Zero fields take the defaults named.
type Options struct {
	// ServerName and ServerVersion are what server metadata reports.
	ServerName    string
	ServerVersion string
	// StrictReadiness makes /v2/health/ready succeed only when every model
	// loaded (Triton's --strict-readiness); otherwise a live server is ready.
	StrictReadiness bool
	// LogControl reads and changes the log settings (/v2/logging); default:
	// one that does not let clients choose a log file.
	LogControl *protocol.LogControl
	// SharedMemory is the registry of system shared-memory regions, shared
	// with the gRPC frontend (default: a registry of the server's own, with
	// sharedmem's default bounds, which the caller closes through
	// Server.SharedMemory at shutdown).
	SharedMemory *sharedmem.Registry
	// MaxInputBytes bounds a request body, as sent and once decompressed
	// (default DefaultMaxInputBytes, 256 MiB): a larger one is answered 413.
	MaxInputBytes int64
	// MaxHeaderBytes bounds a request's header (default 64 KiB); a larger
	// one is answered 431.
	MaxHeaderBytes int
	// ReadHeaderTimeout is how long a client may take to send a request's
	// header (default 10s); then the connection is closed.
	ReadHeaderTimeout time.Duration
	// IdleTimeout closes a kept-alive connection that sent no request for
	// this long (default 5 minutes).
	IdleTimeout time.Duration
	// WriteTimeout is how long writing one response (not an event stream)
	// may take (default 5 minutes); then the connection is closed.
	WriteTimeout time.Duration
	// Stream bounds one /generate_stream event stream.
	Stream StreamLimits
	// Trace, if set, is the server's tracer, whose settings the trace
	// routes read and change (nil: they answer that the server does not
	// trace).
	Trace *trace.Manager
}

// StreamLimits bound one Server-Sent Events stream, as the gRPC frontend's
// bound one ModelStreamInfer stream.
type StreamLimits struct {
	// MaxResponses and MaxResponseBytes bound the events a stream holds for
	// a client that reads slower than its model answers (default 256 and 64
	// MiB; a single larger event still goes).
	MaxResponses     int
	MaxResponseBytes int
	// StallTimeout is how long an event may wait for room in a full stream,
	// and how long writing one batch of events may take (default 5s). Then
	// the client is taken for one that does not read: the stream ends and
	// its request is cancelled, and the backend thread that was sending
	// goes on.
	StallTimeout time.Duration
}

// Server serves Triton's HTTP/REST protocol over a core.Server.
type Server struct {
	core *core.Server
	opts Options
	logs *protocol.LogControl
	mux  *http.ServeMux

	drainOnce sync.Once
	draining  chan struct{} // closed when the server starts shutting down
}

// New returns a server over srv.
func New(srv *core.Server, opts Options) *Server {
	if opts.ServerName == "" {
		opts.ServerName = protocol.DefaultServerName
	}
	setDefault(&opts.MaxInputBytes, DefaultMaxInputBytes)
	setDefault(&opts.MaxHeaderBytes, DefaultMaxHeaderBytes)
	setDefault(&opts.ReadHeaderTimeout, DefaultReadHeaderTimeout)
	setDefault(&opts.IdleTimeout, DefaultIdleTimeout)
	setDefault(&opts.WriteTimeout, DefaultWriteTimeout)
	setDefault(&opts.Stream.MaxResponses, 256)
	setDefault(&opts.Stream.MaxResponseBytes, 64<<20)
	setDefault(&opts.Stream.StallTimeout, 5*time.Second)
	if opts.SharedMemory == nil {
		opts.SharedMemory = sharedmem.New(sharedmem.Options{})
	}
	logs := opts.LogControl
	if logs == nil {
		logs = protocol.NewLogControl(srv.Logger(), false)
	}
	s := &Server{core: srv, opts: opts, logs: logs, draining: make(chan struct{})}
	s.mux = s.routes()
	return s
}

func setDefault[T int | int64 | time.Duration](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}

// Handler returns the handler of every route.
func (s *Server) Handler() http.Handler { return s.mux }

// NewHTTPServer returns an http.Server for the handler, with the header,
// idle and size bounds of the options applied. (Bodies and responses are
// bounded by the handlers themselves, as an event stream may rightly last
// long.)
func (s *Server) NewHTTPServer() *http.Server {
	return &http.Server{
		Handler:           s.mux,
		ReadHeaderTimeout: s.opts.ReadHeaderTimeout,
		IdleTimeout:       s.opts.IdleTimeout,
		MaxHeaderBytes:    s.opts.MaxHeaderBytes,
	}
}

// Drain starts a graceful shutdown: health and readiness fail, and new
// inference requests are refused with 503; event streams in progress end
// once their requests complete.
func (s *Server) Drain() { s.drainOnce.Do(func() { close(s.draining) }) }

func (s *Server) isDraining() bool {
	select {
	case <-s.draining:
		return true
	default:
		return false
	}
}

// routes maps Triton's routes, with and without a model version.
func (s *Server) routes() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v2/health/live", s.live)
	mux.HandleFunc("GET /v2/health/ready", s.ready)
	mux.HandleFunc("GET /v2", s.serverMetadata)
	mux.HandleFunc("GET /v2/models/stats", s.statistics)
	for _, base := range []string{"/v2/models/{model}", "/v2/models/{model}/versions/{version}"} {
		mux.HandleFunc("GET "+base, s.modelMetadata)
		mux.HandleFunc("GET "+base+"/ready", s.modelReady)
		mux.HandleFunc("GET "+base+"/config", s.modelConfig)
		mux.HandleFunc("GET "+base+"/stats", s.statistics)
		mux.HandleFunc("POST "+base+"/infer", s.infer)
		mux.HandleFunc("POST "+base+"/generate", s.generate)
		mux.HandleFunc("POST "+base+"/generate_stream", s.generateStream)
	}
	mux.HandleFunc("/v2/models/{model}/trace/setting", s.traceSetting)
	mux.HandleFunc("POST /v2/repository/index", s.repositoryIndex)
	mux.HandleFunc("POST /v2/repository/models/{model}/load", s.load)
	mux.HandleFunc("POST /v2/repository/models/{model}/unload", s.unload)
	mux.HandleFunc("POST /v2/repository/{repository}/index", s.namedRepository)
	mux.HandleFunc("POST /v2/repository/{repository}/models/{model}/{action}", s.namedRepository)
	mux.HandleFunc("GET /v2/logging", s.logging)
	mux.HandleFunc("POST /v2/logging", s.logging)
	mux.HandleFunc("/v2/trace/setting", s.traceSetting)
	s.sharedMemoryRoutes(mux)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, core.Errorf(core.CodeNotFound, "no route %s %s", r.Method, r.URL.Path))
	})
	return mux
}

// setWriteDeadline bounds the writing of the response from now on.
func (s *Server) setWriteDeadline(w http.ResponseWriter, d time.Duration) {
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(d))
}
