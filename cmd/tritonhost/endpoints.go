package main

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

	"github.com/tritonhost/tritonhost/abi"
	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/serverlog"
	"github.com/tritonhost/tritonhost/internal/frontend/grpcserver"
	"github.com/tritonhost/tritonhost/internal/frontend/httpserver"
	"github.com/tritonhost/tritonhost/internal/frontend/metricsserver"
	"github.com/tritonhost/tritonhost/internal/protocol"
	"github.com/tritonhost/tritonhost/internal/sharedmem"
)

// endpoint is one listening protocol server of serve.
type endpoint struct {
	name  string
	serve func() error                   // blocks until the endpoint stops
	drain func()                         // refuse new work, report not ready
	abort func(reason error)             // answer the work still in flight with reason
	stop  func(deadline context.Context) // graceful until deadline, then forced
}

// endpoints listens on every port serve was asked for (gRPC, HTTP and
// metrics, each unless turned off). Both protocols share the log control and
// the shared-memory regions shm; the metrics endpoint reports the GPUs'
// figures too when gpus has them, and is returned (nil when off). If one
// cannot listen, those already listening are closed.
func (o *serveOptions) endpoints(log *serverlog.Logger, srv *core.Server, host *abi.Host, shm *sharedmem.Registry, gpus *serverGPUs) ([]endpoint, *metricsserver.Server, error) {
	logs := protocol.NewLogControl(log, o.GRPC.AllowLogFileSetting)
	if f := o.Triton.logOut; f != nil {
		logs.UseFile(o.Triton.LogFile, f) // --log-file: the settings report it
	}
	var eps []endpoint
	fail := func(err error) ([]endpoint, *metricsserver.Server, error) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		for _, ep := range eps {
			ep.stop(ctx)
		}
		return nil, nil, err
	}

	reload := ms(o.SSLReloadMs) // how often the TLS files are checked
	if o.GRPC.Allow {
		streams, conns := o.GRPC.options()
		svc := grpcserver.New(srv, grpcserver.Options{ServerName: o.ID, ServerVersion: buildVersion(), MaxMessageBytes: o.MaxMessageBytes,
			StrictReadiness: o.StrictReadiness, Stream: streams, Connection: conns, LogControl: logs, SharedMemory: shm,
			Restricted: &o.GRPC.restricted, Trace: o.tracer, HeaderForward: o.GRPC.headerForward,
			DisallowClientSharedMemory: !o.Triton.AllowClientShm, InferResponseCompression: o.GRPC.compression})
		creds, err := o.GRPC.SSL.grpcOptions(log, reload)
		if err != nil {
			return fail(err)
		}
		lis, err := listen(o.GRPCAddress, o.GRPCPort, o.GRPC.ReusePort)
		if err != nil {
			return fail(fmt.Errorf("listen for gRPC: %w", err))
		}
		log.Infof("Started GRPCInferenceService at %s", lis.Addr())
		eps = append(eps, grpcEndpoint(log, svc, svc.Listen(lis), creds...))
	}

	if o.HTTP.Allow {
		opts := o.HTTP.options()
		opts.ServerName, opts.ServerVersion, opts.StrictReadiness = o.ID, buildVersion(), o.StrictReadiness
		opts.LogControl, opts.SharedMemory, opts.Trace = logs, shm, o.tracer
		opts.DisallowClientSharedMemory = !o.Triton.AllowClientShm
		hs := httpserver.New(srv, opts)
		lis, err := listen(o.HTTP.Address, o.HTTP.Port, o.HTTP.ReusePort)
		if err != nil {
			return fail(fmt.Errorf("listen for HTTP: %w", err))
		}
		if lis, err = o.HTTP.SSL.listener(log, "HTTP", lis, reload); err != nil {
			lis.Close()
			return fail(err)
		}
		log.Infof("Started HTTPService at %s", lis.Addr())
		ep := httpEndpoint("HTTP", hs.NewHTTPServer(), hs.Listen(lis), hs.Drain, nil)
		ep.abort = hs.Abort
		eps = append(eps, ep)
	}

	if o.Metrics.Allow {
		ms, err := metricsserver.New(metricsserver.Options{Core: srv, Custom: host.Metrics(), CPU: o.Metrics.AllowCPU,
			Interval: ms(o.Metrics.IntervalMs), MaxConnections: o.Metrics.MaxConnections, MaxConnectionsPerClient: o.Metrics.MaxConnectionsPerClient})
		if err != nil {
			return fail(err)
		}
		if err := ms.Register(o.tracer.Collector()); err != nil {
			ms.Close()
			return fail(fmt.Errorf("metrics: tracing: %w", err))
		}
		if c := o.ObjStore.collector(); c != nil {
			if err := ms.Register(c); err != nil {
				ms.Close()
				return fail(fmt.Errorf("metrics: repository downloads: %w", err))
			}
		}
		if o.backendFamilies != nil {
			if err := ms.Register(o.backendFamilies); err != nil {
				ms.Close()
				return fail(fmt.Errorf("metrics: isolated backends' families: %w", err))
			}
		}
		if c := gpus.metricsCollector(); c != nil {
			if err := ms.Register(c); err != nil {
				ms.Close()
				return fail(fmt.Errorf("metrics: GPU figures: %w", err))
			}
		}
		lis, err := listen(o.Metrics.address(&o.HTTP), o.Metrics.Port, false)
		if err != nil {
			ms.Close()
			return fail(fmt.Errorf("listen for metrics: %w", err))
		}
		if lis, err = o.Metrics.SSL.listener(log, "metrics", lis, reload); err != nil {
			lis.Close()
			ms.Close()
			return fail(err)
		}
		log.Infof("Started Metrics Service at %s", lis.Addr())
		eps = append(eps, httpEndpoint("metrics", ms.NewHTTPServer(), ms.Listen(lis), nil, ms.Close))
		return eps, ms, nil
	}
	return eps, nil, nil
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
