package httpserver

import (
	"net"
	"net/http"
	"net/netip"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/internal/connlimit"
	"github.com/tritonhost/tritonhost/internal/connwatch"
	"github.com/tritonhost/tritonhost/internal/protocol"
	"github.com/tritonhost/tritonhost/internal/sharedmem"
	"github.com/tritonhost/tritonhost/internal/trace"
)

// Defaults of Options.
const (
	DefaultMaxInputBytes     = 64 << 20
	DefaultMaxHeaderBytes    = 64 << 10
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultIdleTimeout       = 5 * time.Minute
	DefaultWriteTimeout      = 5 * time.Minute
	DefaultReadBodyTimeout   = 10 * time.Second
	DefaultReadBodyMinRate   = 16 << 10
	DefaultMaxConnections    = 4096
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
	// (default DefaultMaxInputBytes, Triton's): a larger one is answered
	// 400 with Triton's text.
	MaxInputBytes int64
	// MaxHeaderBytes bounds a request's header (default
	// DefaultMaxHeaderBytes); a larger
	// one is answered 431.
	MaxHeaderBytes int
	// ReadHeaderTimeout is how long a client may take to send a request's
	// header (default DefaultReadHeaderTimeout); then the connection is
	// closed.
	ReadHeaderTimeout time.Duration
	// IdleTimeout closes a kept-alive connection that sent no request for
	// this long (default DefaultIdleTimeout).
	IdleTimeout time.Duration
	// WriteTimeout is how long writing one response (not an event stream)
	// may take (default DefaultWriteTimeout); then the connection is closed.
	WriteTimeout time.Duration
	// ReadBodyTimeout and ReadBodyMinRate bound the reading of a request
	// body (bodytime.go): it must have arrived ReadBodyTimeout after the
	// header (default 10s), plus 1s for every ReadBodyMinRate bytes of it
	// (default 16 KiB: 128 kbit/s, slower than any link a client of an
	// inference server uploads over). A client that sends slower, or stops,
	// is answered 408 and disconnected: a chunked body without an end, or
	// one trickled a byte at a time, holds a connection no longer.
	ReadBodyTimeout time.Duration
	ReadBodyMinRate int64
	// MaxConnections bounds the connections the server holds at once
	// (default DefaultMaxConnections), far below the process's open-file
	// limit so that a flood of connections cannot starve the other
	// endpoints of descriptors. Past it, new connections wait in the
	// kernel's queue for one to close, and idle kept-alive connections are
	// closed to make room (Listen).
	MaxConnections int
	// MaxConnectionsPerClient bounds the connections of one client (one
	// source IP address) at once (default a quarter of MaxConnections,
	// connlimit.DefaultPerClient): a connection past it is closed as soon
	// as it is accepted, so that one client cannot take the connections
	// of the others.
	MaxConnectionsPerClient int
	// Stream bounds one /generate_stream event stream.
	Stream StreamLimits
	// Restricted limits categories of routes to clients that send a header
	// with a value (Triton's --http-restricted-api); nil restricts nothing.
	Restricted *protocol.Restrictions
	// Trace, if set, is the server's tracer, whose settings the trace
	// routes read and change (nil: they answer that the server does not
	// trace).
	Trace *trace.Manager
	// HeaderForward, if set, selects the request headers that become
	// string parameters of the inference request of /infer, /generate and
	// /generate_stream, under the header's name in lower case (Triton's
	// --http-header-forward-pattern): every name it matches anywhere
	// (forward.go).
	HeaderForward *regexp.Regexp
	// DisallowClientSharedMemory refuses the registration and
	// unregistration of shared-memory regions, system and CUDA, and
	// requests whose tensors name one (403), as Triton with
	// --allow-client-shm=false; region status still answers (with no
	// regions). The zero value allows them, as Triton before 26.04.
	DisallowClientSharedMemory bool
}

// StreamLimits bound one Server-Sent Events stream, as the gRPC frontend's
// bound one ModelStreamInfer stream.
type StreamLimits struct {
	// MaxResponses and MaxResponseBytes bound the events a stream holds for
	// a client that reads slower than its model answers (defaults
	// protocol.DefaultStreamMaxResponses and DefaultStreamMaxResponseBytes;
	// a single larger event still goes).
	MaxResponses     int
	MaxResponseBytes int
	// StallTimeout is how long an event may wait for room in a full stream,
	// and how long writing one batch of events may take (default
	// protocol.DefaultStreamStallTimeout). Then
	// the client is taken for one that does not read: the stream ends and
	// its request is cancelled, and the backend thread that was sending
	// goes on.
	StallTimeout time.Duration
}

// Server serves Triton's HTTP/REST protocol over a core.Server.
type Server struct {
	core    *core.Server
	opts    Options
	logs    *protocol.LogControl
	mux     *http.ServeMux
	handler http.Handler // mux behind the restricted-API check, with request bodies timed
	conns   *connlimit.Limiter

	drainOnce sync.Once
	draining  chan struct{} // closed when the server starts shutting down
	abortOnce sync.Once
	aborting  chan struct{} // closed when the requests still in flight are given up
	abortErr  error         // what they are told (set before aborting is closed)
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
	setDefault(&opts.ReadBodyTimeout, DefaultReadBodyTimeout)
	setDefault(&opts.ReadBodyMinRate, DefaultReadBodyMinRate)
	setDefault(&opts.MaxConnections, DefaultMaxConnections)
	setDefault(&opts.Stream.MaxResponses, protocol.DefaultStreamMaxResponses)
	setDefault(&opts.Stream.MaxResponseBytes, protocol.DefaultStreamMaxResponseBytes)
	setDefault(&opts.Stream.StallTimeout, protocol.DefaultStreamStallTimeout)
	if opts.SharedMemory == nil {
		opts.SharedMemory = sharedmem.New(sharedmem.Options{})
	}
	logs := opts.LogControl
	if logs == nil {
		logs = protocol.NewLogControl(srv.Logger(), false)
	}
	s := &Server{core: srv, opts: opts, logs: logs, draining: make(chan struct{}), aborting: make(chan struct{})}
	s.mux = s.routes()
	s.handler = s.timeBodies(restricted(s.mux, s.dispatch(s.mux), opts.Restricted))
	s.conns = connlimit.New(connlimit.Options{Max: opts.MaxConnections, PerClient: opts.MaxConnectionsPerClient,
		OnFull: func() {
			srv.Logger().Warnf("HTTP: all %d connections the server may hold are open; new connections wait for one to close, idle ones being closed first", opts.MaxConnections)
		},
		OnClientFull: func(client netip.Addr, refused int) {
			srv.Logger().Warnf("HTTP: client %s holds all the connections one client may (--http-max-connections-per-client); its new ones are closed at once (%d since the last report)",
				client, refused)
		}})
	return s
}

func setDefault[T int | int64 | time.Duration](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}

// Handler returns the handler of every route.
func (s *Server) Handler() http.Handler { return s.handler }

// NewHTTPServer returns an http.Server for the handler, with the header,
// idle and size bounds of the options applied, and the connection
// tracking that Listen needs. (Responses are bounded by the handlers
// themselves, as an event stream may rightly last long.) Serve it on the
// listener Listen returns.
func (s *Server) NewHTTPServer() *http.Server {
	return &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: s.opts.ReadHeaderTimeout,
		IdleTimeout:       s.opts.IdleTimeout,
		MaxHeaderBytes:    s.opts.MaxHeaderBytes,
		ConnState:         s.conns.Track,
	}
}

// Listen returns lis bounded to MaxConnections open connections (see
// Options.MaxConnections), for the http.Server of NewHTTPServer. Its
// connections' deadlines (the header, idle, body and write timeouts) are
// kept by one watch (internal/connwatch) instead of a runtime timer each:
// they pass up to connwatch.DefaultTick late.
func (s *Server) Listen(lis net.Listener) net.Listener {
	return s.conns.Wrap(connwatch.Listen(lis, 0))
}

// Drain starts a graceful shutdown: health and readiness fail, and new
// inference requests are refused with 503; event streams in progress end
// once their requests complete.
func (s *Server) Drain() { s.drainOnce.Do(func() { close(s.draining) }) }

// Abort ends the requests still in flight, at the end of a shutdown
// (after Drain): an infer or generate request is answered with err
// (Triton's error object, with err's status), and a generate_stream sends
// err as its last event, {"error": "..."}. Whatever their models send
// later is dropped. Later calls do nothing.
func (s *Server) Abort(err error) {
	s.abortOnce.Do(func() {
		s.abortErr = err
		close(s.aborting)
	})
}

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
		// Trace settings are per model; Triton accepts and ignores a version.
		mux.HandleFunc(base+"/trace/setting", s.traceSetting)
	}
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

// dispatch serves what mux serves, and infer on a model named without a
// version (the route of nearly every request) before mux matches it, as
// mux would serve it: that route's handler, with the model its path names.
func (s *Server) dispatch(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if model, ok := inferRoute(r); ok {
			s.inferModel(w, r, model, "")
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// inferRoute returns the model of a request that mux would route to POST
// /v2/models/{model}/infer with that model as it stands: its method POST,
// its path of that form with one segment for the model, and neither
// escaped in its own way (RawPath: mux then unescapes the segment) nor
// unclean (mux then redirects to the cleaned path).
func inferRoute(r *http.Request) (string, bool) {
	if r.Method != http.MethodPost || r.URL.RawPath != "" {
		return "", false
	}
	rest, ok := strings.CutPrefix(r.URL.Path, "/v2/models/")
	if !ok {
		return "", false
	}
	model, ok := strings.CutSuffix(rest, "/infer")
	if !ok || model == "" || model == "." || model == ".." || strings.IndexByte(model, '/') >= 0 {
		return "", false
	}
	return model, true
}

// setWriteDeadline bounds the writing of the response from now on.
func (s *Server) setWriteDeadline(w http.ResponseWriter, d time.Duration) {
	if g, ok := w.(*bodyGuard); ok { // its controller, made already
		_ = g.body.rc.SetWriteDeadline(time.Now().Add(d))
		return
	}
	_ = deadlinesOf(w).SetWriteDeadline(time.Now().Add(d))
}
