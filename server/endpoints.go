package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
	"google.golang.org/grpc"

	"github.com/tritonhost/tritonhost/core/serverlog"
	"github.com/tritonhost/tritonhost/internal/frontend/grpcserver"
	"github.com/tritonhost/tritonhost/internal/frontend/httpserver"
	"github.com/tritonhost/tritonhost/internal/frontend/metricsserver"
	"github.com/tritonhost/tritonhost/internal/protocol"
	"github.com/tritonhost/tritonhost/internal/sharedmem"
)

// endpoint is one listening protocol server.
type endpoint struct {
	name  string
	serve func() error                   // blocks until the endpoint stops
	drain func()                         // refuse new work, report not ready
	abort func(reason error)             // answer the work still in flight with reason
	stop  func(deadline context.Context) // graceful until deadline, then forced
}

// endpoints listens on every port the configuration asks for (gRPC, HTTP
// and metrics, each unless turned off) and makes the metrics (kept without
// a listener under Metrics.Listen false). Both protocols share the log
// control and the shared-memory regions shm; the metrics report the GPUs'
// figures too when there are any. If one cannot listen, those already
// listening are closed.
func (s *Server) endpoints(shm *sharedmem.Registry) error {
	c, set, log := &s.cfg, s.set, s.log
	logs := protocol.NewLogControl(log, c.GRPC.AllowLogFileSetting)
	if s.logF != nil {
		logs.UseFile(c.Log.File, s.logF) // --log-file: the settings report it
	}
	var eps []endpoint
	fail := func(err error) error {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		for _, ep := range eps {
			ep.stop(ctx)
		}
		return err
	}

	reload := ms(c.SSLReloadMs) // how often the TLS files are checked
	if c.GRPC.Allow {
		streams, conns := c.GRPC.options()
		svc := grpcserver.New(s.core, grpcserver.Options{ServerName: c.ID, ServerVersion: s.host.ServerInfo().Version, MaxMessageBytes: c.GRPC.MaxMessageBytes,
			StrictReadiness: c.Lifecycle.StrictReadiness, Stream: streams, Connection: conns, LogControl: logs, SharedMemory: shm,
			Restricted: &set.grpcRestricted, Trace: s.tracer, HeaderForward: set.grpcForward,
			DisallowClientSharedMemory: !c.SharedMemory.AllowClient, InferResponseCompression: set.compression})
		creds, err := c.GRPC.SSL.grpcOptions(log, reload)
		if err != nil {
			return fail(err)
		}
		lis, err := listen(c.GRPC.Address, c.GRPC.Port, c.GRPC.ReusePort)
		if err != nil {
			return fail(fmt.Errorf("listen for gRPC: %w", err))
		}
		log.Infof("Started GRPCInferenceService at %s", lis.Addr())
		s.grpcAddr = lis.Addr()
		eps = append(eps, grpcEndpoint(log, svc, svc.Listen(lis), creds...))
	}

	if c.HTTP.Allow {
		opts := c.HTTP.options(set)
		opts.ServerName, opts.ServerVersion, opts.StrictReadiness = c.ID, s.host.ServerInfo().Version, c.Lifecycle.StrictReadiness
		opts.LogControl, opts.SharedMemory, opts.Trace = logs, shm, s.tracer
		opts.DisallowClientSharedMemory = !c.SharedMemory.AllowClient
		hs := httpserver.New(s.core, opts)
		lis, err := listen(c.HTTP.Address, c.HTTP.Port, c.HTTP.ReusePort)
		if err != nil {
			return fail(fmt.Errorf("listen for HTTP: %w", err))
		}
		if lis, err = c.HTTP.SSL.listener(log, "HTTP", "http", lis, reload); err != nil {
			lis.Close()
			return fail(err)
		}
		log.Infof("Started HTTPService at %s", lis.Addr())
		s.httpAddr = lis.Addr()
		ep := httpEndpoint("HTTP", hs.NewHTTPServer(), hs.Listen(lis), hs.Drain, nil)
		ep.abort = hs.Abort
		eps = append(eps, ep)
	}

	if c.Metrics.Allow {
		m, err := s.newMetrics()
		if err != nil {
			return fail(err)
		}
		if !c.Metrics.Listen {
			s.metrics, s.eps = m, eps
			s.onClose(m.Close)
			return nil
		}
		lis, err := listen(c.Metrics.address(&c.HTTP), c.Metrics.Port, false)
		if err != nil {
			m.Close()
			return fail(fmt.Errorf("listen for metrics: %w", err))
		}
		if lis, err = c.Metrics.SSL.listener(log, "metrics", "metrics", lis, reload); err != nil {
			lis.Close()
			m.Close()
			return fail(err)
		}
		log.Infof("Started Metrics Service at %s", lis.Addr())
		s.metricsAddr = lis.Addr()
		eps = append(eps, httpEndpoint("metrics", m.NewHTTPServer(), m.Listen(lis), nil, m.Close))
		s.metrics = m
	}
	s.eps = eps
	return nil
}

// newMetrics makes the server's metrics: the core's and the backends',
// the tracer's, the downloads', the isolated backends' families and the
// GPUs' figures.
func (s *Server) newMetrics() (*metricsserver.Server, error) {
	c := &s.cfg
	m, err := metricsserver.New(metricsserver.Options{Core: s.core, Custom: s.host.Metrics(), CPU: c.Metrics.AllowCPU,
		Interval: ms(c.Metrics.IntervalMs), MaxConnections: c.Metrics.MaxConnections, MaxConnectionsPerClient: c.Metrics.MaxConnectionsPerClient})
	if err != nil {
		return nil, err
	}
	if err := m.Register(s.tracer.Collector()); err != nil {
		m.Close()
		return nil, fmt.Errorf("metrics: tracing: %w", err)
	}
	if s.repoCache != nil {
		if err := m.Register(s.repoCache.Collector()); err != nil {
			m.Close()
			return nil, fmt.Errorf("metrics: repository downloads: %w", err)
		}
	}
	if s.backendFamilies != nil {
		if err := m.Register(s.backendFamilies); err != nil {
			m.Close()
			return nil, fmt.Errorf("metrics: isolated backends' families: %w", err)
		}
	}
	if gc := s.gpus.metricsCollector(); gc != nil {
		if err := m.Register(gc); err != nil {
			m.Close()
			return nil, fmt.Errorf("metrics: GPU figures: %w", err)
		}
	}
	return m, nil
}

// listen listens on address:port; with reusePort (Triton's
// --reuse-grpc-port, --reuse-http-port) the socket takes SO_REUSEPORT, so
// that other servers that set it too listen on the same port and the
// kernel spreads the connections among them.
func listen(address string, port int, reusePort bool) (net.Listener, error) {
	var lc net.ListenConfig
	if reusePort {
		lc.Control = func(_, _ string, c syscall.RawConn) error {
			var serr error
			if err := c.Control(func(fd uintptr) {
				serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEPORT, 1)
			}); err != nil {
				return err
			}
			if serr != nil {
				return fmt.Errorf("SO_REUSEPORT: %w", serr)
			}
			return nil
		}
	}
	return lc.Listen(context.Background(), "tcp", net.JoinHostPort(address, strconv.Itoa(port)))
}

func grpcEndpoint(log *serverlog.Logger, svc *grpcserver.Service, lis net.Listener, opts ...grpc.ServerOption) endpoint {
	g := svc.NewGRPCServer(opts...)
	return endpoint{
		name:  "gRPC",
		serve: func() error { return g.Serve(lis) },
		drain: svc.Drain,
		abort: svc.Abort,
		stop: func(deadline context.Context) {
			stopped := make(chan struct{})
			go func() { g.GracefulStop(); close(stopped) }()
			select {
			case <-stopped:
			case <-deadline.Done():
				log.Warnf("exit timeout reached; closing the remaining gRPC streams")
				g.Stop()
				<-stopped
			}
		},
	}
}

func httpEndpoint(name string, hs *http.Server, lis net.Listener, drain, closed func()) endpoint {
	return endpoint{
		name: name,
		serve: func() error {
			if err := hs.Serve(lis); !errors.Is(err, http.ErrServerClosed) {
				return err
			}
			return nil
		},
		drain: drain,
		stop: func(deadline context.Context) {
			if err := hs.Shutdown(deadline); err != nil {
				_ = hs.Close()
			}
			if closed != nil {
				closed()
			}
		},
	}
}

// serveAll serves every endpoint until ctx ends or one fails (its error).
func serveAll(ctx context.Context, eps []endpoint) error {
	failed := make(chan error, len(eps))
	for _, ep := range eps {
		go func() {
			if err := ep.serve(); err != nil {
				failed <- fmt.Errorf("%s server: %w", ep.name, err)
			}
		}()
	}
	select {
	case err := <-failed:
		return err
	case <-ctx.Done():
		return nil
	}
}

// stopAll drains every endpoint, then stops them together within deadline:
// in-flight requests and streams finish, or, still running at abortAt,
// are answered with reason (each endpoint's abort), and the connections
// that are left are cut at the deadline.
func stopAll(log *serverlog.Logger, deadline context.Context, eps []endpoint, abortAt time.Time, reason error) {
	for _, ep := range eps {
		if ep.drain != nil {
			ep.drain()
		}
	}
	log.Infof("new requests are refused from now on")
	abort := time.AfterFunc(time.Until(abortAt), func() {
		for _, ep := range eps {
			if ep.abort != nil {
				ep.abort(reason)
			}
		}
	})
	defer abort.Stop()
	var wg sync.WaitGroup
	for _, ep := range eps {
		wg.Go(func() { ep.stop(deadline) })
	}
	wg.Wait()
}
