// Package embedded creates the servers that TRITONSERVER_ServerNew asks
// for: a server running inside the calling process, with no network
// endpoint, as an application that embeds Triton (linked with
// libtritonserver.so) creates one. It assembles what `tritonhost serve`
// assembles from its flags, from abi.ServerOptions instead: the logger,
// the GPUs, the backend API's host, the backend loader, the core server
// and the metrics, each option setting what the serve flag of the same
// meaning sets.
//
// Linking the package registers its factory with package abi (in init,
// as database/sql drivers register themselves); the tritonhost binary and
// libtritonserver.so link it.
package embedded

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tritonhost/tritonhost/abi"
	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/ratelimit"
	"github.com/tritonhost/tritonhost/core/scheduling"
	"github.com/tritonhost/tritonhost/core/serverlog"
	"github.com/tritonhost/tritonhost/internal/frontend/metricsserver"
	"github.com/tritonhost/tritonhost/internal/gpu"
	"github.com/tritonhost/tritonhost/internal/protocol"
	"github.com/tritonhost/tritonhost/loader"
)

// Version is what TRITONSERVER_ServerMetadata reports as the server's
// version; the program that links the package sets it from its own version
// stamp.
var Version = "dev"

func init() { abi.SetServerFactory(New) }

// New creates a server as the options say and returns its host, with the
// server attached and described: its models have loaded (or failed to)
// when New returns. With ExitOnError, a model that failed to load makes
// New fail, as Triton's TRITONSERVER_ServerNew does ("failed to load all
// models"), after stopping what it started.
func New(o abi.ServerOptions) (*abi.Host, error) {
	log, closeLog, err := newLogger(o)
	if err != nil {
		return nil, err
	}
	gpus := openGPUs(o, log)
	host := abi.NewHost(abi.HostOptions{Logger: log, Devices: gpus.hostDevices()})
	provider := loader.New(loader.Options{
		Opener:               host,
		BackendDirectory:     o.BackendDirectory,
		BackendConfig:        o.BackendConfig,
		DisableAutoComplete:  o.StrictModelConfig,
		Logger:               log,
		MinComputeCapability: o.MinComputeCapability,
	})
	limiter, err := rateLimiter(o)
	var cache core.ResponseCache
	if err == nil {
		cache, err = openCache(o, host)
	}
	var srv *core.Server
	if err == nil {
		srv, err = core.NewServer(core.Options{
			ModelRepositories:         o.ModelRepositories,
			Backends:                  provider,
			Schedulers:                scheduling.New,
			Devices:                   gpus.hostDevices(),
			Logger:                    log,
			ExplicitModelControl:      o.ModelControl == abi.ModelControlExplicit,
			PollModelControl:          o.ModelControl == abi.ModelControlPoll,
			StartupModels:             o.StartupModels,
			DisableAutoCompleteConfig: o.StrictModelConfig,
			LoadConcurrency:           o.LoadConcurrency,
			ResponseCache:             cache,
			RepoAgents:                loader.NewRepoAgents(host, o.RepoAgentDirectory, log),
			RateLimiter:               limiter,
		})
		if err != nil {
			if cache != nil {
				_ = cache.Close()
			}
			err = core.Errorf(core.CodeInvalidArg, "create the server: %w", err)
		}
	}
	if err != nil {
		host.Close()
		gpus.close(log)
		closeLog()
		return nil, err
	}
	return attach(o, srv, host, gpus, log, closeLog)
}

// rateLimiter returns the rate limiter the options ask for
// (TRITONSERVER_ServerOptionsSetRateLimiterMode,
// TRITONSERVER_ServerOptionsAddRateLimiterResource), as --rate-limit and
// --rate-limit-resource make one: nil when rate limiting is off, which
// leaves the resources without effect, as in Triton.
func rateLimiter(o abi.ServerOptions) (*ratelimit.Limiter, error) {
	if !o.RateLimit {
		return nil, nil
	}
	l, err := ratelimit.New(o.RateLimitResources)
	if err != nil {
		return nil, core.Errorf(core.CodeInvalidArg, "create the server: rate limiter: %w", err)
	}
	return l, nil
}

// openCache opens the response cache the options configure (nil when
// none), as --cache-config does; a server has at most one.
func openCache(o abi.ServerOptions, host *abi.Host) (core.ResponseCache, error) {
	switch len(o.CacheConfigs) {
	case 0:
		return nil, nil
	case 1:
	default:
		return nil, core.Errorf(core.CodeInvalidArg, "create the server: %d caches are configured; a server has one", len(o.CacheConfigs))
	}
	for name, config := range o.CacheConfigs {
		c, err := loader.OpenCacheJSON(host, o.CacheDirectory, name, config)
		if err != nil {
			return nil, core.Errorf(core.CodeOf(err), "create the server: response cache %q: %w", name, err)
		}
		return c, nil
	}
	return nil, nil
}

// attach gives host the server New made, with its metrics and its
// description, and fails as New does when a model did not load.
func attach(o abi.ServerOptions, srv *core.Server, host *abi.Host, gpus *gpus, log *serverlog.Logger, closeLog func()) (*abi.Host, error) {
	var err error
	host.AttachServer(srv)
	s := &server{srv: srv, host: host, log: log, gpus: gpus, closeLog: closeLog}
	s.exitTimeout.Store(int64(o.ExitTimeout))
	for _, st := range srv.RepositoryIndex() {
		log.Infof("model %q version %q: %s %s", st.Name, st.Version, st.Readiness, st.Reason)
	}
	if o.Metrics {
		if s.metrics, err = newMetrics(o, srv, host, gpus); err != nil {
			log.Errorf("%v", err) // the server goes on, without metrics
		}
	}
	info := abi.ServerInfo{Name: o.ID, Version: Version, Extensions: protocol.ServerExtensions(false),
		StrictReadiness: o.StrictReadiness, Stop: s.stop, SetExitTimeout: s.setExitTimeout, Close: s.close}
	if s.metrics != nil {
		info.Metrics = s.metrics.WriteText
	}
	host.SetServerInfo(info)
	if o.ExitOnError && !srv.Ready() {
		if err := s.stop(); err != nil {
			log.Errorf("%v", err)
		}
		s.close()
		host.Close()
		return nil, core.Errorf(core.CodeInternal, "failed to load all models")
	}
	return host, nil
}

// server is what New made for one server, for ServerInfo's Stop,
// SetExitTimeout and Close.
type server struct {
	srv         *core.Server
	host        *abi.Host
	log         *serverlog.Logger
	gpus        *gpus
	metrics     *metricsserver.Server
	closeLog    func()
	exitTimeout atomic.Int64 // time.Duration

	stopOnce sync.Once
	stopErr  error
}

// stop stops the server within the exit timeout, once: later calls
// return the first one's error.
func (s *server) stop() error {
	s.stopOnce.Do(func() {
		timeout := time.Duration(s.exitTimeout.Load())
		s.log.Infof("shutting down: waiting up to %s for in-flight requests", timeout)
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		if err := s.srv.Stop(ctx); err != nil {
			s.stopErr = core.Errorf(core.CodeUnavailable, "stop within the exit timeout (%s) left work behind: %w", timeout, err)
		}
	})
	return s.stopErr
}

func (s *server) setExitTimeout(seconds uint) {
	s.exitTimeout.Store(int64(time.Duration(seconds) * time.Second))
}

// close releases what New made besides the host, once the server stopped.
func (s *server) close() {
	if s.metrics != nil {
		s.metrics.Close()
	}
	s.gpus.close(s.log)
	s.closeLog()
}

// newLogger returns the server's logger: standard error, or the log file,
// appended to (closed by the returned function).
func newLogger(o abi.ServerOptions) (*serverlog.Logger, func(), error) {
	var w io.Writer = os.Stderr
	closeLog := func() {}
	if o.LogFile != "" {
		f, err := os.OpenFile(o.LogFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return nil, nil, core.Errorf(core.CodeInternal, "failed to open log file %s: %v", o.LogFile, err)
		}
		w, closeLog = f, func() { _ = f.Close() }
	}
	l := serverlog.New(w)
	l.SetVerbose(o.LogVerbose)
	l.SetEnabled(serverlog.Info, o.LogInfo)
	l.SetEnabled(serverlog.Warning, o.LogWarning)
	l.SetEnabled(serverlog.Error, o.LogError)
	l.SetFormat(o.LogFormat)
	return l, closeLog, nil
}

// newMetrics returns the server's metrics: the families its /metrics
// endpoint would serve, with the CPU's and the GPUs' as the options say.
func newMetrics(o abi.ServerOptions, srv *core.Server, host *abi.Host, g *gpus) (*metricsserver.Server, error) {
	ms, err := metricsserver.New(metricsserver.Options{Core: srv, Custom: host.Metrics(), CPU: o.CPUMetrics,
		Interval: o.MetricsInterval})
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	if o.GPUMetrics && g.collector != nil {
		if err := ms.Register(g.collector); err != nil {
			ms.Close()
			return nil, fmt.Errorf("metrics: GPU figures: %w", err)
		}
	}
	return ms, nil
}

// gpus are the GPUs an embedded server uses: none, or those the CUDA
// driver opened, as `tritonhost serve` finds them.
type gpus struct {
	devices   *gpu.Devices
	collector *gpu.Collector
	shutdown  func()
}

// openGPUs discovers the GPUs and opens the CUDA driver on the usable
// ones; no NVML, no GPU or no driver is a CPU-only server, logged once.
func openGPUs(o abi.ServerOptions, log *serverlog.Logger) *gpus {
	lib := gpu.OpenNVML(gpu.NVMLLibrary)
	visible, set := os.LookupEnv("CUDA_VISIBLE_DEVICES")
	d := gpu.Discover(lib, gpu.DiscoverOptions{VisibleDevices: visible, VisibleSet: set, MinComputeCapability: o.MinComputeCapability})
	d.Log(log)
	g := &gpus{}
	if d.Unavailable == "" {
		g.shutdown = func() { _ = lib.Shutdown() }
	}
	if o.GPUMetrics {
		g.collector = gpu.NewCollector(d)
	}
	ids := d.Usable()
	if len(ids) == 0 {
		return g
	}
	drv, err := gpu.OpenDriver(gpu.CUDALibrary)
	if err != nil {
		log.Warnf("0 GPUs usable: %d found, but %v; serving CPU instances only", len(ids), err)
		return g
	}
	devs, err := gpu.NewDevices(drv, ids, gpu.MemoryOptions{CUDAPoolBytes: o.CUDAPoolBytes, PinnedPoolBytes: o.PinnedPoolBytes}, log)
	if err != nil {
		log.Warnf("0 GPUs usable: CUDA driver %s: %v; serving CPU instances only", drv.Path(), err)
		return g
	}
	g.devices = devs
	return g
}

func (g *gpus) hostDevices() core.Devices {
	if g.devices == nil {
		return nil
	}
	return g.devices
}

func (g *gpus) close(log *serverlog.Logger) {
	if g.devices != nil {
		if err := g.devices.Close(); err != nil {
			log.Warnf("releasing GPU memory: %v", err)
		}
	}
	if g.shutdown != nil {
		g.shutdown()
	}
}
