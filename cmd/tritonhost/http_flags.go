package main

import (
	"fmt"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/tritonhost/tritonhost/core/serverlog"

	"github.com/tritonhost/tritonhost/internal/frontend/httpserver"
	"github.com/tritonhost/tritonhost/internal/frontend/metricsserver"
	"github.com/tritonhost/tritonhost/internal/protocol"
)

// httpFlags are the HTTP/REST endpoint's flags: Triton's (--allow-http,
// --http-address, --http-port, --http-max-input-size,
// --http-restricted-api) and tritonhost's own bounds on what one client may
// hold, and TLS.
type httpFlags struct {
	Allow                   bool
	Address                 string
	Port                    int
	MaxInputSize            int64
	MaxHeaderBytes          int
	ReadHeaderTimeoutMs     int
	IdleTimeoutMs           int
	WriteTimeoutMs          int
	ReadBodyTimeoutMs       int
	ReadBodyMinRate         int64
	MaxConnections          int
	MaxConnectionsPerClient int
	StreamStallTimeoutMs    int
	MaxStreamResponses      int
	MaxStreamResponseBytes  int
	SSL                     sslFlags
	RestrictedAPI           []string

	// Triton's other HTTP options (triton_flags.go).
	ReusePort            bool
	HeaderForwardPattern string
	ThreadCount          int

	restricted    protocol.Restrictions // RestrictedAPI parsed (validate)
	headerForward *regexp.Regexp        // HeaderForwardPattern compiled (validate); nil: none
}

func (h *httpFlags) bind(f *pflag.FlagSet) {
	f.BoolVar(&h.Allow, "allow-http", true, "serve Triton's HTTP/REST protocol")
	f.StringVar(&h.Address, "http-address", "0.0.0.0", "address to listen on for HTTP")
	f.IntVar(&h.Port, "http-port", 8000, "port to listen on for HTTP (0: any free port)")
	f.Int64Var(&h.MaxInputSize, "http-max-input-size", httpserver.DefaultMaxInputBytes, "largest HTTP request body, in bytes, as sent and once decompressed")
	f.IntVar(&h.MaxHeaderBytes, "http-max-header-bytes", httpserver.DefaultMaxHeaderBytes, "largest HTTP request header, in bytes")
	f.IntVar(&h.ReadHeaderTimeoutMs, "http-read-header-timeout", msOf(httpserver.DefaultReadHeaderTimeout), "ms a client may take to send a request's header")
	f.IntVar(&h.ReadBodyTimeoutMs, "http-read-body-timeout", msOf(httpserver.DefaultReadBodyTimeout), "ms a client may take to send a request's body, beyond 1 s for every --http-read-body-min-rate bytes of it")
	f.Int64Var(&h.ReadBodyMinRate, "http-read-body-min-rate", httpserver.DefaultReadBodyMinRate, "bytes a second a request body must arrive at, on average (a slower client is answered 408 and disconnected)")
	f.IntVar(&h.MaxConnections, "http-max-connections", httpserver.DefaultMaxConnections, "HTTP connections open at once; past it new ones wait for one to close, idle ones being closed first")
	f.IntVar(&h.MaxConnectionsPerClient, "http-max-connections-per-client", 0,
		"HTTP connections one client (source IP address) may have open at once; past it its new ones are closed at once (0: a quarter of --http-max-connections)")
	f.IntVar(&h.IdleTimeoutMs, "http-idle-timeout", msOf(httpserver.DefaultIdleTimeout), "ms after which a kept-alive connection with no request is closed")
	f.IntVar(&h.WriteTimeoutMs, "http-write-timeout", msOf(httpserver.DefaultWriteTimeout), "ms writing one response may take (event streams: see --http-stream-stall-timeout)")
	f.IntVar(&h.StreamStallTimeoutMs, "http-stream-stall-timeout", msOf(protocol.DefaultStreamStallTimeout), "ms an event of a generate_stream may wait for a client that does not read; then the stream is cut off and its request cancelled")
	f.IntVar(&h.MaxStreamResponses, "http-max-stream-responses", protocol.DefaultStreamMaxResponses, "events one generate_stream may hold for a client that reads slowly")
	f.IntVar(&h.MaxStreamResponseBytes, "http-max-stream-response-bytes", protocol.DefaultStreamMaxResponseBytes, "bytes of events one generate_stream may hold for a client that reads slowly")
	h.SSL.bind(f, "http", "HTTP", true)
	f.StringArrayVar(&h.RestrictedAPI, "http-restricted-api", nil, "<category>[,<category>...]:<key>=<value>: those routes answer only requests with the header <key>: <value>; categories: "+categoryList()+" (repeatable)")
	h.bindTriton(f) // triton_flags.go
}

func (h *httpFlags) validate() error {
	if h.Port < 0 || h.Port > 65535 {
		return fmt.Errorf("--http-port %d is out of range", h.Port)
	}
	if h.MaxInputSize <= 0 {
		return fmt.Errorf("--http-max-input-size must be positive, not %d", h.MaxInputSize)
	}
	if h.ReadBodyMinRate <= 0 {
		return fmt.Errorf("--http-read-body-min-rate must be positive, not %d", h.ReadBodyMinRate)
	}
	if h.MaxConnectionsPerClient < 0 {
		return fmt.Errorf("--http-max-connections-per-client must not be negative, not %d", h.MaxConnectionsPerClient)
	}
	for _, c := range []struct {
		name string
		v    int
	}{
		{"http-max-header-bytes", h.MaxHeaderBytes}, {"http-read-header-timeout", h.ReadHeaderTimeoutMs},
		{"http-idle-timeout", h.IdleTimeoutMs}, {"http-write-timeout", h.WriteTimeoutMs},
		{"http-stream-stall-timeout", h.StreamStallTimeoutMs}, {"http-max-stream-responses", h.MaxStreamResponses},
		{"http-max-stream-response-bytes", h.MaxStreamResponseBytes}, {"http-read-body-timeout", h.ReadBodyTimeoutMs},
		{"http-max-connections", h.MaxConnections},
	} {
		if c.v <= 0 {
			return fmt.Errorf("--%s must be positive, not %d", c.name, c.v)
		}
	}
	if err := h.SSL.validate(); err != nil {
		return err
	}
	if err := h.validateTriton(); err != nil { // triton_flags.go
		return err
	}
	h.restricted = protocol.Restrictions{}
	return restrictedFlag(&h.restricted, "http-restricted-api", "api", "", false, h.RestrictedAPI)
}

// warnConnectionCaps says when the endpoints' connection caps together
// leave the process too few file descriptors for the models (and for the
// others' own files) under a flood of connections.
func warnConnectionCaps(log *serverlog.Logger, o *serveOptions) {
	var lim syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim) != nil {
		return
	}
	caps := []string{fmt.Sprintf("--grpc-max-connections=%d", o.GRPC.MaxConnections)}
	total := uint64(o.GRPC.MaxConnections)
	if o.HTTP.Allow {
		caps = append(caps, fmt.Sprintf("--http-max-connections=%d", o.HTTP.MaxConnections))
		total += uint64(o.HTTP.MaxConnections)
	}
	if o.Metrics.Allow {
		caps = append(caps, fmt.Sprintf("--metrics-max-connections=%d", o.Metrics.MaxConnections))
		total += uint64(o.Metrics.MaxConnections)
	}
	if total > lim.Cur/2 {
		log.Warnf("%s: %d connections together, more than half the open-file limit (%d): a flood of connections could leave the models too few", strings.Join(caps, ", "), total, lim.Cur)
	}
}

// options returns the HTTP server's options (without the parts serve
// shares with gRPC).
func (h *httpFlags) options() httpserver.Options {
	return httpserver.Options{
		MaxInputBytes:           h.MaxInputSize,
		MaxHeaderBytes:          h.MaxHeaderBytes,
		ReadHeaderTimeout:       ms(h.ReadHeaderTimeoutMs),
		IdleTimeout:             ms(h.IdleTimeoutMs),
		WriteTimeout:            ms(h.WriteTimeoutMs),
		ReadBodyTimeout:         ms(h.ReadBodyTimeoutMs),
		ReadBodyMinRate:         h.ReadBodyMinRate,
		MaxConnections:          h.MaxConnections,
		MaxConnectionsPerClient: h.MaxConnectionsPerClient,
		Stream: httpserver.StreamLimits{MaxResponses: h.MaxStreamResponses, MaxResponseBytes: h.MaxStreamResponseBytes,
			StallTimeout: ms(h.StreamStallTimeoutMs)},
		Restricted:    &h.restricted,
		HeaderForward: h.headerForward,
	}
}

// metricsFlags are Triton's metrics flags, and tritonhost's own TLS.
type metricsFlags struct {
	Allow      bool
	AllowCPU   bool
	Address    string
	Port       int
	IntervalMs int
	// MaxConnections bounds the connections open at once, and
	// MaxConnectionsPerClient those of one client (0: a quarter of
	// MaxConnections).
	MaxConnections          int
	MaxConnectionsPerClient int
	SSL                     sslFlags
	// Config is Triton's --metrics-config <setting>=<value> (repeatable;
	// triton_flags.go).
	Config []string
}

func (m *metricsFlags) bind(f *pflag.FlagSet) {
	f.BoolVar(&m.Allow, "allow-metrics", true, "serve Prometheus metrics at /metrics")
	f.BoolVar(&m.AllowCPU, "allow-cpu-metrics", true, "include the host's CPU utilization and memory in the metrics")
	f.StringVar(&m.Address, "metrics-address", "", "address to listen on for metrics (default: --http-address when HTTP is on, else 0.0.0.0)")
	f.IntVar(&m.Port, "metrics-port", 8002, "port to listen on for metrics (0: any free port)")
	f.IntVar(&m.MaxConnections, "metrics-max-connections", metricsserver.DefaultMaxConnections, "metrics connections open at once; past it new ones wait for one to close, idle ones being closed first")
	f.IntVar(&m.MaxConnectionsPerClient, "metrics-max-connections-per-client", 0,
		"metrics connections one client (source IP address) may have open at once; past it its new ones are closed at once (0: a quarter of --metrics-max-connections)")
	f.IntVar(&m.IntervalMs, "metrics-interval-ms", int(metricsserver.DefaultInterval/time.Millisecond), "ms between polls of the per-interval metrics (CPU)")
	m.SSL.bind(f, "metrics", "metrics", true)
	m.bindTriton(f) // triton_flags.go
}

func (m *metricsFlags) validate() error {
	if m.Port < 0 || m.Port > 65535 {
		return fmt.Errorf("--metrics-port %d is out of range", m.Port)
	}
	if m.IntervalMs <= 0 {
		return fmt.Errorf("--metrics-interval-ms must be positive, not %d", m.IntervalMs)
	}
	if m.MaxConnections <= 0 {
		return fmt.Errorf("--metrics-max-connections must be positive, not %d", m.MaxConnections)
	}
	if m.MaxConnectionsPerClient < 0 {
		return fmt.Errorf("--metrics-max-connections-per-client must not be negative, not %d", m.MaxConnectionsPerClient)
	}
	if err := m.validateTriton(); err != nil { // triton_flags.go
		return err
	}
	return m.SSL.validate()
}

// address is where metrics listen: --metrics-address, else the HTTP
// address when HTTP is served (as Triton), else every interface.
func (m *metricsFlags) address(h *httpFlags) string {
	switch {
	case m.Address != "":
		return m.Address
	case h.Allow:
		return h.Address
	}
	return "0.0.0.0"
}
