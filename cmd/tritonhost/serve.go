package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tritonhost/tritonhost/abi"
	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/scheduling"
	"github.com/tritonhost/tritonhost/core/serverlog"
	"github.com/tritonhost/tritonhost/internal/protocol"
	"github.com/tritonhost/tritonhost/internal/sharedmem"
	"github.com/tritonhost/tritonhost/loader"
)

// Run serves until ctx ends, then shuts down: new requests are refused,
// in-flight requests finish, streams close and every model is unloaded, all
// within --exit-timeout-secs. Requests still running shortly before the end
// (abortTime) are answered with an error; whatever is still running at the
// end is abandoned and Run returns an error (exit status 1); and a
// shutdown step stuck past the end does not keep the process
// (exitWatchdog). A signal during start-up stops it at once.
func (o *serveOptions) Run(ctx context.Context) error {
	var watchdog *time.Timer // bounds the shutdown, deferred steps included
	defer func() {
		if watchdog != nil {
			watchdog.Stop()
		}
	}()
	log := o.logger()
	o.GRPC.warn(log)
	o.Triton.warn(log, o) // Triton's options without effect here (triton_flags.go)
	o.GC.apply(log)
	warnConnectionCaps(log, o)
	if o.DebugAddress != "" {
		stopDiagnostics, err := startDiagnostics(o.DebugAddress, log)
		if err != nil {
			return fmt.Errorf("listen for diagnostics: %w", err)
		}
		defer stopDiagnostics()
	}
	gpus := o.GPU.open(log)
	defer gpus.close(log) // after the host: the server has stopped
	if err := o.Triton.checkGPUs(log, gpus.ids()); err != nil {
		return err
	}
	o.devices = gpus.hostDevices()
	hopts := o.InProcess.hostOptions(log)
	hopts.Devices = o.devices
	hopts.OutputCacheBytes = o.outputCache()
	host := abi.NewHost(hopts)
	defer host.Close()
	provider := loader.New(loader.Options{
		Opener:               host,
		BackendDirectory:     o.BackendDirectory,
		BackendConfig:        o.backendConfig,
		DisableAutoComplete:  o.DisableAutoComplete,
		Logger:               log,
		MinComputeCapability: o.GPU.MinComputeCapability,
	})
	tracer, err := o.Trace.manager(log)
	if err != nil {
		return fmt.Errorf("tracing: %w", err)
	}
	defer func() { // after the server stopped: its last traces are in
		deadline, cancel := context.WithTimeout(context.Background(), time.Duration(o.ExitTimeoutSecs)*time.Second)
		defer cancel()
		closeTracer(log, tracer, deadline)
	}()
	o.tracer = tracer
	backends, err := o.Isolation.provider(provider, log, o, host)
	if err != nil {
		return err
	}
	if c, ok := backends.(prometheus.Collector); ok {
		o.backendFamilies = c
	}
	cache, agents, err := o.Plugins.open(host, log)
	if err != nil {
		return err
	}
	closeRemote, err := o.ObjStore.open(o.ModelRepositories, o.ModelControlMode, log) // objstore_flags.go
	if err != nil {
		return err
	}
	defer closeRemote() // after the server stopped
	srv, err := o.start(ctx, log, backends, cache, agents)
	if err != nil {
		return err
	}
	host.AttachServer(srv) // backends' in-process API (TRITONSERVER_ServerInferAsync)
	if p, ok := backends.(interface{ AttachServer(*core.Server) }); ok {
		p.AttachServer(srv) // the same API of isolated backends, in their workers
	}
	info := abi.ServerInfo{Name: o.ID, Version: buildVersion(), Extensions: protocol.ServerExtensions(gpus.devices != nil),
		StrictReadiness: o.StrictReadiness}
	host.SetServerInfo(info)
	for _, st := range srv.RepositoryIndex() {
		log.Infof("model %q version %q: %s %s", st.Name, st.Version, st.Readiness, st.Reason)
	}
	if o.ExitOnError && !srv.Ready() {
		watchdog = o.exitWatchdog(log, o.exitDeadline())
		if err := o.stopWithin(log, o.exitDeadline(), srv.Stop); err != nil {
			log.Errorf("%v", err)
		}
		return errors.New("a model failed to load (see the log); pass --exit-on-error=false to serve the others")
	}

	shm := sharedmem.New(sharedmem.Options{MaxRegions: o.ShmMaxRegions, MaxReadBytes: uint64(o.MaxMessageBytes), CUDA: o.cudaSharedMemory(gpus)})
	defer closeSharedMemory(log, shm)
	eps, metrics, err := o.endpoints(log, srv, host, shm, gpus)
	if err != nil {
		if serr := o.stopWithin(log, o.exitDeadline(), srv.Stop); serr != nil {
			log.Errorf("%v", serr)
		}
		return err
	}
	if metrics != nil { // TRITONSERVER_ServerMetrics reads what /metrics serves
		info.Metrics = metrics.WriteText
		host.SetServerInfo(info)
	}
	serveErr := serveAll(ctx, eps)
	deadline := o.exitDeadline()
	watchdog = o.exitWatchdog(log, deadline)
	reason := core.Errorf(core.CodeUnavailable, "the server is shutting down (--exit-timeout-secs=%d), and this request did not complete in time", o.ExitTimeoutSecs)
	err = o.stopWithin(log, deadline, func(dctx context.Context) error {
		stopAll(log, dctx, eps, abortTime(time.Now(), deadline), reason)
		return srv.Stop(dctx)
	})
	if serveErr != nil {
		if err != nil {
			log.Errorf("%v", err)
		}
		return serveErr
	}
	if err != nil {
		return err // what was abandoned may hold lent memory for ever
	}
	host.AwaitLentFreed(time.Until(deadline))
	if live := host.Live(); !live.Zero() {
		log.Warnf("backend API objects still live at exit: %v", live)
	}
	log.Infof("stopped")
	return nil
}

// exitDeadline is when a shutdown that begins now must be over.
func (o *serveOptions) exitDeadline() time.Time {
	return time.Now().Add(time.Duration(o.ExitTimeoutSecs) * time.Second)
}

// exitSlack is how long past its deadline a shutdown may take to report
// and close what it holds before the watchdog ends the process.
const exitSlack = 400 * time.Millisecond

// exitWatchdog ends the process (status 1) exitSlack after deadline, if
// the shutdown has not returned by then: a backend stuck in a call, or a
// step of the shutdown that waits on one, cannot keep the process past
// --exit-timeout-secs. The caller stops the timer when the shutdown is
// over.
func (o *serveOptions) exitWatchdog(log *serverlog.Logger, deadline time.Time) *time.Timer {
	return time.AfterFunc(time.Until(deadline)+exitSlack, func() {
		log.Errorf("shutdown did not finish within --exit-timeout-secs=%d; exiting with work abandoned", o.ExitTimeoutSecs)
		os.Exit(1)
	})
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

// start loads the models; a signal (ctx ending) while they load ends the
// start-up at once, leaving a model stuck in its backend behind.
func (o *serveOptions) start(ctx context.Context, log *serverlog.Logger, provider core.BackendProvider, cache core.ResponseCache, agents core.RepoAgentProvider) (*core.Server, error) {
	type started struct {
		srv *core.Server
		err error
	}
	limiter, err := o.RateLimit.limiter(log)
	if err != nil {
		return nil, err
	}
	done := make(chan started, 1)
	go func() {
		opts := core.Options{
			ModelRepositories:         o.ModelRepositories,
			Backends:                  provider,
			Schedulers:                scheduling.New,
			Devices:                   o.devices,
			Logger:                    log,
			Tracer:                    o.tracer,
			ExplicitModelControl:      o.ModelControlMode == "explicit",
			PollModelControl:          o.ModelControlMode == "poll",
			RepositoryPollInterval:    o.pollInterval(),
			StartupModels:             o.LoadModels,
			DisableAutoCompleteConfig: o.DisableAutoComplete,
			MaxTensorBytes:            int64(o.MaxMessageBytes),
			MaxTensorBytesSetting:     "--grpc-max-message-size",
			BackendCallTimeoutSetting: "--backend-call-timeout-secs",
			BackendCallTimeout:        time.Duration(o.BackendCallSecs) * time.Second,
			EnsembleStepWait:          time.Duration(o.EnsembleStepWait) * time.Second,
			EnsembleStepWaitSetting:   "--ensemble-step-wait-secs",
			LoadFiles: core.LoadFilesLimits{AllowLibraries: o.AllowFileLibraries, AllowLibrariesSetting: "--allow-model-file-libraries",
				MaxBytes: o.ModelFilesMaxSize, MaxBytesSetting: "--model-files-max-size"},
			RateLimiter: limiter,
		}
		o.Plugins.apply(&opts, cache, agents)
		o.Repository.apply(&opts)
		o.ObjStore.apply(&opts)
		o.Triton.apply(&opts) // host policies (triton_flags.go)
		srv, err := core.NewServer(opts)
		if err != nil && cache != nil {
			_ = cache.Close()
		}
		done <- started{srv, err}
	}()
	select {
	case s := <-done:
		return s.srv, s.err
	case <-ctx.Done():
		log.Warnf("interrupted while loading models; exiting without waiting for them")
		return nil, errors.New("interrupted during start-up")
	}
}

// pollInterval is --repository-poll-secs under --model-control-mode=poll,
// and 0 (no polling) otherwise, as Triton's parser sets it.
func (o *serveOptions) pollInterval() time.Duration {
	if o.ModelControlMode != "poll" {
		return 0
	}
	return time.Duration(o.RepositoryPollSecs) * time.Second
}

// stopReport is how long past the deadline stopWithin waits for stop to
// report what it gave up on.
const stopReport = 100 * time.Millisecond

// stopWithin runs stop with a context that ends at deadline
// (--exit-timeout-secs from the signal), and returns by then (plus
// stopReport) whatever stop is still doing: the shutdown is bounded even
// if a backend never returns.
func (o *serveOptions) stopWithin(log *serverlog.Logger, deadline time.Time, stop func(context.Context) error) error {
	log.Infof("shutting down: waiting up to %s for in-flight requests", time.Until(deadline).Round(time.Millisecond))
	dctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- stop(dctx) }()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("shutdown within --exit-timeout-secs=%d left work behind: %w", o.ExitTimeoutSecs, err)
		}
		return nil
	case <-time.After(time.Until(deadline) + stopReport):
		return fmt.Errorf("shutdown did not finish within --exit-timeout-secs=%d; exiting with work abandoned", o.ExitTimeoutSecs)
	}
}
