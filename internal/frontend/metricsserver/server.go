package metricsserver

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/common/expfmt"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/metrics"
	"github.com/tritonhost/tritonhost/internal/connlimit"
)

// DefaultInterval is how often the per-interval metrics (CPU) are polled,
// Triton's --metrics-interval-ms default.
const DefaultInterval = 2 * time.Second

// Options configure a Server.
type Options struct {
	// Core is the server whose models are reported. Required.
	Core *core.Server
	// Custom is the registry of the backends' own metric families (nil:
	// none).
	Custom *metrics.Registry
	// Interval is how often CPU utilization and memory are polled (default
	// DefaultInterval).
	Interval time.Duration
	// CPU turns the nv_cpu_* families on (Triton's --allow-cpu-metrics).
	CPU bool
	// ProcRoot is where /proc is read from (default "/proc"; tests point
	// it at a fixture).
	ProcRoot string
	// MaxConnections bounds the connections the endpoint holds at once
	// (default DefaultMaxConnections), through the listeners passed to
	// Listen: past it a new connection waits for one to close, idle
	// kept-alive ones being closed first, so that a flood of connections
	// cannot take the file descriptors the other endpoints need.
	MaxConnections int
	// MaxConnectionsPerClient bounds the connections of one client (one
	// source IP address) at once (default a quarter of MaxConnections,
	// connlimit.DefaultPerClient): a connection past it is closed as soon
	// as it is accepted, so that one client cannot take the connections
	// of the other scrapers.
	MaxConnectionsPerClient int
}

// DefaultMaxConnections is the default Options.MaxConnections: scrapers
// are few.
const DefaultMaxConnections = 256

// Server gathers the metrics and serves them.
type Server struct {
	reg    *prometheus.Registry
	cpu    *cpuCollector
	conns  *connlimit.Limiter
	cancel context.CancelFunc
	done   sync.WaitGroup
}

// New returns a server with Triton's collectors registered, and starts
// polling the per-interval metrics; Close stops it.
func New(opts Options) (*Server, error) {
	if opts.Core == nil {
		return nil, fmt.Errorf("metricsserver: Options.Core is required")
	}
	if opts.Interval <= 0 {
		opts.Interval = DefaultInterval
	}
	if opts.ProcRoot == "" {
		opts.ProcRoot = "/proc"
	}
	if opts.MaxConnections <= 0 {
		opts.MaxConnections = DefaultMaxConnections
	}
	maxConns, log := opts.MaxConnections, opts.Core.Logger()
	s := &Server{reg: prometheus.NewRegistry(), conns: connlimit.New(connlimit.Options{Max: maxConns, PerClient: opts.MaxConnectionsPerClient,
		OnFull: func() {
			log.Warnf("metrics: all %d connections the endpoint may hold are open; new connections wait for one to close, idle ones being closed first", maxConns)
		},
		OnClientFull: func(client netip.Addr, refused int) {
			log.Warnf("metrics: client %s holds all the connections one client may (--metrics-max-connections-per-client); its new ones are closed at once (%d since the last report)",
				client, refused)
		}})}
	collectors := []prometheus.Collector{newModelCollector(opts.Core), &cacheCollector{core: opts.Core}}
	if opts.Custom != nil {
		collectors = append(collectors, newCustomCollector(opts.Custom, opts.Core.Logger()))
	}
	if opts.CPU {
		s.cpu = newCPUCollector(opts.ProcRoot)
		collectors = append(collectors, s.cpu)
	}
	for _, c := range collectors {
		if err := s.reg.Register(c); err != nil {
			return nil, fmt.Errorf("metricsserver: %w", err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	if s.cpu != nil {
		s.cpu.poll()
		s.done.Go(func() { s.cpu.run(ctx, opts.Interval) })
	}
	return s, nil
}

// Register adds a collector of another subsystem to the endpoint (GPU
// metrics, for instance). Its families must not clash with those already
// there.
func (s *Server) Register(c prometheus.Collector) error { return s.reg.Register(c) }

// Gatherer returns what the endpoint serves, for tests and other exporters.
func (s *Server) Gatherer() prometheus.Gatherer { return s.reg }

// Handler serves the metrics at any path it is mounted on.
func (s *Server) Handler() http.Handler {
	return promhttp.HandlerFor(s.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// NewHTTPServer returns an http.Server serving Handler at /metrics, with
// bounded header reads, writes and idle connections.
func (s *Server) NewHTTPServer() *http.Server {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", s.Handler())
	// ReadTimeout: a scrape has no body, and one that comes with a body
	// that never ends holds its connection no longer.
	return &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 10 * time.Second, WriteTimeout: time.Minute,
		IdleTimeout: 5 * time.Minute, MaxHeaderBytes: 64 << 10, ConnState: s.conns.Track}
}

// Listen returns lis bounded to Options.MaxConnections open connections,
// for the http.Server of NewHTTPServer.
func (s *Server) Listen(lis net.Listener) net.Listener { return s.conns.Wrap(lis) }

// Close stops the polling.
func (s *Server) Close() {
	s.cancel()
	s.done.Wait()
}

// NamingConvention reports whether a problem that promtool check metrics
// (promlint) reports is one of Prometheus' naming conventions that
// Triton's own metric names break, and keep for compatibility with
// Triton's dashboards and autoscalers: a counter without _total, a unit
// abbreviated (_us, _ms), a _count suffix on a counter or gauge, the type
// in the name. Any other problem is a real one.
func NamingConvention(problem string) bool {
	for _, s := range []string{`should have "_total" suffix`, "should not contain abbreviated units",
		`should not have "_count" suffix`, "should not include type"} {
		if strings.Contains(problem, s) {
			return true
		}
	}
	return false
}

// WriteText writes what the endpoint serves, in Prometheus' text format,
// to w: the text TRITONSERVER_MetricsFormatted hands an application. A
// collector that fails leaves its families out, as the endpoint does; its
// error is returned after the rest is written.
func (s *Server) WriteText(w io.Writer) error {
	families, gatherErr := s.reg.Gather()
	enc := expfmt.NewEncoder(w, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, f := range families {
		if err := enc.Encode(f); err != nil {
			return fmt.Errorf("metrics: encode %s: %w", f.GetName(), err)
		}
	}
	return gatherErr
}
