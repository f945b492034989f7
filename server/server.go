package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tritonhost/tritonhost/abi"
	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/scheduling"
	"github.com/tritonhost/tritonhost/core/serverlog"
	"github.com/tritonhost/tritonhost/internal/frontend/metricsserver"
	"github.com/tritonhost/tritonhost/internal/objstore/repocache"
	"github.com/tritonhost/tritonhost/internal/protocol"
	"github.com/tritonhost/tritonhost/internal/sharedmem"
	"github.com/tritonhost/tritonhost/internal/trace"
	"github.com/tritonhost/tritonhost/loader"
)

// ErrModelLoad is the error New returns (wrapped) when a model failed to
// load and Lifecycle.ExitOnError is set.
var ErrModelLoad = errors.New("a model failed to load")

// Server is one server: its models loaded, its listeners open. New makes
// it, Serve serves its listeners, Stop (or Shutdown, then Close) ends it.
type Server struct {
	cfg  Config
	set  *settings
	log  *serverlog.Logger
	logF *os.File // Log.File, open (nil: standard error)
	gpus *serverGPUs
	host *abi.Host
	core *core.Server

	tracer          *trace.Manager
	backendFamilies prometheus.Collector // the isolated backends' metric families; nil without isolation
	repoCache       *repocache.Cache     // nil without remote repositories
	metrics         *metricsserver.Server
	eps             []endpoint
	grpcAddr        net.Addr
	httpAddr        net.Addr
	metricsAddr     net.Addr

	closers []func() // what New opened, in order; released in reverse

	shutdownOnce sync.Once
	shutdownErr  error
	deadline     time.Time // of the shutdown
	serveFailed  atomic.Bool
	failedStart  bool // New gave up (ExitOnError): the shutdown reports nothing more
	closeOnce    sync.Once
}

// New assembles a server as cfg says and loads its models: the log, the
// garbage collector's policy, the GPUs, the backend API's host, the
// backend loader (and isolation), the tracer, the response cache and
// repository agents, the object-storage cache, the core server with its
// schedulers, and the listeners cfg allows, which accept connections once
// Serve runs. It returns once the models to load at start have loaded or
// failed; with Lifecycle.ExitOnError a model that failed makes it fail
// (ErrModelLoad). ctx ending while models load ends the start at once
// (a model stuck in its backend is left behind). On error nothing New
// started is left running.
//
// cfg is checked first (Validate); New keeps it, and the caller must not
// change its slices and maps while the server runs.
func New(ctx context.Context, cfg Config) (*Server, error) {
	set, err := cfg.resolve()
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, set: set}
	if err := s.start(ctx); err != nil {
		s.release()
		return nil, err
	}
	return s, nil
}

// onClose registers f to run when the server is released, after whatever
// was registered after it.
func (s *Server) onClose(f func()) { s.closers = append(s.closers, f) }

// release runs the closers, newest first.
func (s *Server) release() {
	for i := len(s.closers) - 1; i >= 0; i-- {
		s.closers[i]()
	}
	s.closers = nil
}

// start is New once the configuration is read.
func (s *Server) start(ctx context.Context) error {
	c, set := &s.cfg, s.set
	if err := s.openLog(); err != nil {
		return err
	}
	log := s.log
	c.GRPC.warn(log)
	c.warnTriton(log, set) // Triton's options without effect here
	if !c.GC.Unmanaged {
		c.GC.apply(log)
	}
	c.warnConnectionCaps(log)
	if c.DebugAddress != "" {
		stopDiagnostics, err := startDiagnostics(c.DebugAddress, log)
		if err != nil {
			return fmt.Errorf("listen for diagnostics: %w", err)
		}
		s.onClose(stopDiagnostics)
	}
	gpus := c.GPU.open(log, set.cudaPools)
	s.gpus = gpus
	s.onClose(func() { gpus.close(log) }) // after the host: the server has stopped
	if err := checkGPUs(log, set.gpuLimits, gpus.ids()); err != nil {
		return err
	}
	hopts := c.InProcess.hostOptions(log)
	hopts.Devices = gpus.hostDevices()
	hopts.OutputCacheBytes = c.Backends.outputCache()
	hopts.ExtraProcs = c.Backends.ExtraProcs
	host := abi.NewHost(hopts)
	s.host = host
	s.onClose(host.Close)
	provider := loader.New(loader.Options{
		Opener:               host,
		BackendDirectory:     set.backendDirectory,
		BackendConfig:        set.backendConfig,
		DisableAutoComplete:  c.Models.DisableAutoComplete,
		Logger:               log,
		MinComputeCapability: c.GPU.MinComputeCapability,
	})
	tracer, err := c.Trace.manager(set.trace, log)
	if err != nil {
		return fmt.Errorf("tracing: %w", err)
	}
	s.tracer = tracer
	s.onClose(func() { // after the server stopped: its last traces are in
		deadline, cancel := context.WithTimeout(context.Background(), time.Duration(c.Lifecycle.ExitTimeoutSecs)*time.Second)
		defer cancel()
		closeTracer(log, tracer, deadline)
	})
	backends, err := c.isolationProvider(provider, set, log, gpus.ids(), host)
	if err != nil {
		return err
	}
	if fam, ok := backends.(prometheus.Collector); ok {
		s.backendFamilies = fam
	}
	cache, agents, err := openPlugins(set, host, log)
	if err != nil {
		return err
	}
	if s.repoCache, err = c.ObjectStorage.open(c.Models.Repositories, set.controlMode, log); err != nil {
		return err
	}
	if rc := s.repoCache; rc != nil {
		s.onClose(func() { // after the server stopped
			if err := rc.Close(); err != nil {
				log.Errorf("%v", err)
			}
		})
	}
	srv, err := s.loadModels(ctx, backends, cache, agents)
	if err != nil {
		return err
	}
	s.core = srv
	host.AttachServer(srv) // backends' in-process API (TRITONSERVER_ServerInferAsync)
	if p, ok := backends.(interface{ AttachServer(*core.Server) }); ok {
		p.AttachServer(srv) // the same API of isolated backends, in their workers
	}
	version := c.Version
	if version == "" {
		version = "dev"
	}
	info := abi.ServerInfo{Name: c.ID, Version: version,
		Extensions:      protocol.ServerExtensions(gpus.devices != nil && (c.GRPC.Allow || c.HTTP.Allow)),
		StrictReadiness: c.Lifecycle.StrictReadiness}
	host.SetServerInfo(info)
	for _, st := range srv.RepositoryIndex() {
		log.Infof("model %q version %q: %s %s", st.Name, st.Version, st.Readiness, st.Reason)
	}
	if c.Lifecycle.ExitOnError && !srv.Ready() {
		s.failedStart = true
		if err := s.Shutdown(context.Background()); err != nil {
			log.Errorf("%v", err)
		}
		return fmt.Errorf("%w (see the log); pass --exit-on-error=false to serve the others", ErrModelLoad)
	}

	shm := sharedmem.New(sharedmem.Options{MaxRegions: c.SharedMemory.SystemMaxRegions, MaxReadBytes: uint64(c.GRPC.MaxMessageBytes),
		CUDA: c.cudaSharedMemory(gpus)})
	s.onClose(func() { closeSharedMemory(log, shm) })
	if err := s.endpoints(shm); err != nil {
		s.failedStart = true
		if serr := s.Shutdown(context.Background()); serr != nil {
			log.Errorf("%v", serr)
		}
		return err
	}
	if s.metrics != nil { // TRITONSERVER_ServerMetrics reads what /metrics serves
		info.Metrics = s.metrics.WriteText
		host.SetServerInfo(info)
	}
	return nil
}

// openLog opens the server's log: Log.File, appended to, else standard
// error.
func (s *Server) openLog() error {
	c := &s.cfg.Log
	var w io.Writer = os.Stderr
	if c.File != "" {
		f, err := os.OpenFile(c.File, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return core.Errorf(core.CodeInternal, "--log-file: %w", err)
		}
		s.logF, w = f, f
		s.onClose(func() { _ = f.Close() })
	}
	l := serverlog.New(w)
	l.SetVerbose(c.Verbose)
	l.SetEnabled(serverlog.Info, c.Info)
	l.SetEnabled(serverlog.Warning, c.Warning)
	l.SetEnabled(serverlog.Error, c.Error)
	l.SetFormat(s.set.logFormat)
	s.log = l
	return nil
}

// loadModels makes the core server, which loads the models; ctx ending
// while they load ends the start-up at once, leaving a model stuck in its
// backend behind.
func (s *Server) loadModels(ctx context.Context, provider core.BackendProvider, cache core.ResponseCache, agents core.RepoAgentProvider) (*core.Server, error) {
	type started struct {
		srv *core.Server
		err error
	}
	c, set, log := &s.cfg, s.set, s.log
	limiter, err := rateLimiter(set, log)
	if err != nil {
		return nil, err
	}
	done := make(chan started, 1)
	go func() {
		opts := core.Options{
			ModelRepositories:         c.Models.Repositories,
			Backends:                  provider,
			Schedulers:                scheduling.New,
			Devices:                   s.gpus.hostDevices(),
			Logger:                    log,
			Tracer:                    s.tracer,
			ExplicitModelControl:      set.controlMode == "explicit",
			PollModelControl:          set.controlMode == "poll",
			RepositoryPollInterval:    c.pollInterval(set),
			StartupModels:             c.Models.LoadModels,
			DisableAutoCompleteConfig: c.Models.DisableAutoComplete,
			MaxTensorBytes:            int64(c.GRPC.MaxMessageBytes),
			MaxTensorBytesSetting:     "--grpc-max-message-size",
			BackendCallTimeoutSetting: "--backend-call-timeout-secs",
			BackendCallTimeout:        time.Duration(c.Backends.CallTimeoutSecs) * time.Second,
			EnsembleStepWait:          time.Duration(c.Backends.EnsembleStepWaitSecs) * time.Second,
			EnsembleStepWaitSetting:   "--ensemble-step-wait-secs",
			LoadFiles: core.LoadFilesLimits{AllowLibraries: c.Repository.AllowFileLibraries, AllowLibrariesSetting: "--allow-model-file-libraries",
				MaxBytes: c.Repository.FilesMaxSize, MaxBytesSetting: "--model-files-max-size"},
			RateLimiter: limiter,
		}
		c.Plugins.apply(&opts, cache, agents)
		c.Repository.apply(&opts, &c.Models)
		if s.repoCache != nil {
			opts.RemoteRepositories = s.repoCache
		}
		applyHostPolicies(&opts, set)
		srv, err := core.NewServer(opts)
		if err != nil && cache != nil {
			_ = cache.Close()
		}
		done <- started{srv, err}
	}()
	select {
	case st := <-done:
		return st.srv, st.err
	case <-ctx.Done():
		log.Warnf("interrupted while loading models; exiting without waiting for them")
		return nil, errors.New("interrupted during start-up")
	}
}

// pollInterval is --repository-poll-secs under --model-control-mode=poll,
// and 0 (no polling) otherwise, as Triton's parser sets it.
func (c *Config) pollInterval(set *settings) time.Duration {
	if set.controlMode != "poll" || c.Models.PollOnRequest {
		return 0
	}
	return time.Duration(c.Models.RepositoryPollSecs) * time.Second
}

// Serve serves the listeners until ctx ends (nil) or one of them fails
// (its error); a server without listeners waits for ctx. Call it once;
// then Stop the server either way.
func (s *Server) Serve(ctx context.Context) error {
	if err := serveAll(ctx, s.eps); err != nil {
		s.serveFailed.Store(true)
		return err
	}
	return nil
}

// Stop shuts the server down within ctx (Shutdown), then releases what it
// holds (Close). It returns Shutdown's error.
func (s *Server) Stop(ctx context.Context) error {
	err := s.Shutdown(ctx)
	s.Close()
	return err
}

// stopReport is how long past its deadline a shutdown may take to report
// what it gave up on before Shutdown returns.
const stopReport = 100 * time.Millisecond

// Shutdown stops the server gracefully: the listeners refuse new work and
// report not ready, requests and streams in flight finish, and every model
// is unloaded, all by ctx's deadline (Lifecycle.ExitTimeoutSecs from now
// when ctx has none). Requests still running shortly before the deadline
// are answered with an error, the connections still open at the deadline
// are cut, and whatever is still running then is abandoned: Shutdown
// returns by the deadline (plus a moment to report) even if a backend never
// returns, with an error saying what it left behind. It runs once; later
// calls return the first one's error. The server keeps what it holds
// until Close.
func (s *Server) Shutdown(ctx context.Context) error {
	s.shutdownOnce.Do(func() {
		deadline, ok := ctx.Deadline()
		if !ok {
			deadline = time.Now().Add(s.exitTimeout())
		}
		s.deadline = deadline
		if f := s.cfg.Lifecycle.ShutdownStarted; f != nil {
			f(s.log, deadline)
		}
		reason := core.Errorf(core.CodeUnavailable, "the server is shutting down (--exit-timeout-secs=%d), and this request did not complete in time", s.cfg.Lifecycle.ExitTimeoutSecs)
		s.shutdownErr = s.stopWithin(ctx, deadline, func(dctx context.Context) error {
			if len(s.eps) > 0 {
				stopAll(s.log, dctx, s.eps, abortTime(time.Now(), deadline), reason)
			}
			return s.core.Stop(dctx)
		})
	})
	return s.shutdownErr
}

// Close releases what the server holds (the backend API's host, GPUs,
// tracer, caches, log file), shutting it down first if Shutdown has not
// run. After a clean shutdown it waits, until the shutdown's deadline, for
// the response memory clients still hold, logs the objects of the backend
// API still live, and logs "stopped". It runs once.
func (s *Server) Close() {
	_ = s.Shutdown(context.Background())
	s.closeOnce.Do(func() {
		if s.shutdownErr == nil && !s.serveFailed.Load() && !s.failedStart {
			s.host.AwaitLentFreed(time.Until(s.deadline)) // what was abandoned may hold lent memory for ever
			if live := s.host.Live(); !live.Zero() {
				s.log.Warnf("backend API objects still live at exit: %v", live)
			}
			s.log.Infof("stopped")
		}
		s.release()
	})
}

// Release releases what the server holds, as Close does, without Close's
// wait for the response memory clients still hold and its report of what
// is left: for a caller that reports that itself, as
// TRITONSERVER_ServerDelete does. Shut the server down first. It and
// Close run once between them.
func (s *Server) Release() {
	s.closeOnce.Do(s.release)
}

// exitTimeout is Lifecycle.ExitTimeoutSecs.
func (s *Server) exitTimeout() time.Duration {
	return time.Duration(s.cfg.Lifecycle.ExitTimeoutSecs) * time.Second
}

// abortTime is when a shutdown from now to deadline answers the requests
// still in flight with an error: a quarter of the time, at most a second,
// before the deadline, so that the answers reach their clients before
// the connections are cut.
func abortTime(now, deadline time.Time) time.Time {
	return deadline.Add(-min(deadline.Sub(now)/4, time.Second))
}

// closeSharedMemory unmaps every shared-memory region; a region a request
// still holds (one abandoned at the exit timeout) is unmapped when the
// request lets it go, or with the process.
func closeSharedMemory(log *serverlog.Logger, shm *sharedmem.Registry) {
	left, err := shm.Close()
	if err != nil {
		log.Errorf("unmap the shared-memory regions: %v", err)
	}
	if left > 0 {
		log.Warnf("%d shared-memory region(s) still held by requests that did not finish", left)
	}
}

// stopWithin runs stop with a context that ends at deadline, and returns
// by then (plus stopReport) whatever stop is still doing: the shutdown is
// bounded even if a backend never returns.
func (s *Server) stopWithin(ctx context.Context, deadline time.Time, stop func(context.Context) error) error {
	s.log.Infof("shutting down: waiting up to %s for in-flight requests", time.Until(deadline).Round(time.Millisecond))
	dctx, cancel := context.WithDeadline(context.WithoutCancel(ctx), deadline)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- stop(dctx) }()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("shutdown within --exit-timeout-secs=%d left work behind: %w", s.cfg.Lifecycle.ExitTimeoutSecs, err)
		}
		return nil
	case <-time.After(time.Until(deadline) + stopReport):
		return fmt.Errorf("shutdown did not finish within --exit-timeout-secs=%d; exiting with work abandoned", s.cfg.Lifecycle.ExitTimeoutSecs)
	}
}

// Core returns the core server: its models, in-process inference
// (core.Server.Infer), model control and statistics.
func (s *Server) Core() *core.Server { return s.core }

// Host returns the backend API's side of the server (package abi): the
// backends' custom metrics, what TRITONSERVER_ServerMetadata says of the
// server.
func (s *Server) Host() *abi.Host { return s.host }

// Logger returns the server's log.
func (s *Server) Logger() *serverlog.Logger { return s.log }

// GRPCAddr, HTTPAddr and MetricsAddr return where the listeners listen
// (the port chosen when the configuration asked for port 0), nil for a
// listener that is off.
func (s *Server) GRPCAddr() net.Addr { return s.grpcAddr }

// HTTPAddr returns where the HTTP/REST listener listens; see GRPCAddr.
func (s *Server) HTTPAddr() net.Addr { return s.httpAddr }

// MetricsAddr returns where the metrics listener listens; see GRPCAddr.
func (s *Server) MetricsAddr() net.Addr { return s.metricsAddr }

// WriteMetrics writes the server's metrics, as /metrics serves them, in
// Prometheus' text format; nothing when Metrics.Allow is off.
func (s *Server) WriteMetrics(w io.Writer) error {
	if s.metrics == nil {
		return nil
	}
	return s.metrics.WriteText(w)
}
