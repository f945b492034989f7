package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"

	"tritonhost/abi"
	"tritonhost/core"
	"tritonhost/core/serverlog"
	"tritonhost/frontend/grpcserver"
	"tritonhost/frontend/httpserver"
	"tritonhost/frontend/metricsserver"
	"tritonhost/frontend/protocol"
	"tritonhost/frontend/sharedmem"
)

// endpoint is one listening protocol server of serve.
type endpoint struct {
	name  string
	serve func() error                   // blocks until the endpoint stops
	drain func()                         // refuse new work, report not ready
	stop  func(deadline context.Context) // graceful until deadline, then forced
}

// endpoints listens on every port serve was asked for (gRPC always; HTTP
// and metrics unless turned off). Both protocols share the log control and
// the shared-memory regions shm; the metrics endpoint reports the GPUs'
// figures too when gpus has them. If one cannot listen, those already
// listening are closed.
func (o *serveOptions) endpoints(log *serverlog.Logger, srv *core.Server, host *abi.Host, shm *sharedmem.Registry, gpus *serverGPUs) ([]endpoint, error) {
	logs := protocol.NewLogControl(log, o.GRPC.AllowLogFileSetting)
	var eps []endpoint
	fail := func(err error) ([]endpoint, error) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		for _, ep := range eps {
			ep.stop(ctx)
		}
		return nil, err
	}

	streams, conns := o.GRPC.options()
	svc := grpcserver.New(srv, grpcserver.Options{ServerName: o.ID, ServerVersion: buildVersion(), MaxMessageBytes: o.MaxMessageBytes,
		StrictReadiness: o.StrictReadiness, Stream: streams, Connection: conns, LogControl: logs, SharedMemory: shm, Trace: o.tracer})
	lis, err := listen(o.GRPCAddress, o.GRPCPort)
	if err != nil {
		return fail(fmt.Errorf("listen for gRPC: %w", err))
	}
	log.Infof("Started GRPCInferenceService at %s", lis.Addr())
	eps = append(eps, grpcEndpoint(log, svc, lis))

	if o.HTTP.Allow {
		opts := o.HTTP.options()
		opts.ServerName, opts.ServerVersion, opts.StrictReadiness = o.ID, buildVersion(), o.StrictReadiness
		opts.LogControl, opts.SharedMemory, opts.Trace = logs, shm, o.tracer
		hs := httpserver.New(srv, opts)
		lis, err := listen(o.HTTP.Address, o.HTTP.Port)
		if err != nil {
			return fail(fmt.Errorf("listen for HTTP: %w", err))
		}
		log.Infof("Started HTTPService at %s", lis.Addr())
		eps = append(eps, httpEndpoint("HTTP", hs.NewHTTPServer(), lis, hs.Drain, nil))
	}

	if o.Metrics.Allow {
		ms, err := metricsserver.New(metricsserver.Options{Core: srv, Custom: host.Metrics(), CPU: o.Metrics.AllowCPU,
			Interval: ms(o.Metrics.IntervalMs)})
		if err != nil {
			return fail(err)
		}
		if err := ms.Register(o.tracer.Collector()); err != nil {
			ms.Close()
			return fail(fmt.Errorf("metrics: tracing: %w", err))
		}
		if c := gpus.metricsCollector(); c != nil {
			if err := ms.Register(c); err != nil {
				ms.Close()
				return fail(fmt.Errorf("metrics: GPU figures: %w", err))
			}
		}
		lis, err := listen(o.Metrics.address(&o.HTTP), o.Metrics.Port)
		if err != nil {
			ms.Close()
			return fail(fmt.Errorf("listen for metrics: %w", err))
		}
		log.Infof("Started Metrics Service at %s", lis.Addr())
		eps = append(eps, httpEndpoint("metrics", ms.NewHTTPServer(), lis, nil, ms.Close))
	}
	return eps, nil
}

func listen(address string, port int) (net.Listener, error) {
	return net.Listen("tcp", net.JoinHostPort(address, strconv.Itoa(port)))
}

func grpcEndpoint(log *serverlog.Logger, svc *grpcserver.Service, lis net.Listener) endpoint {
	g := svc.NewGRPCServer()
	return endpoint{
		name:  "gRPC",
		serve: func() error { return g.Serve(lis) },
		drain: svc.Drain,
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
// in-flight requests and streams finish, or are cut at the deadline.
func stopAll(deadline context.Context, eps []endpoint) {
	for _, ep := range eps {
		if ep.drain != nil {
			ep.drain()
		}
	}
	var wg sync.WaitGroup
	for _, ep := range eps {
		wg.Go(func() { ep.stop(deadline) })
	}
	wg.Wait()
}
