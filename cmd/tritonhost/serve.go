package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"tritonhost/abi"
	"tritonhost/core"
	"tritonhost/core/scheduling"
	"tritonhost/core/serverlog"
	"tritonhost/frontend/sharedmem"
	"tritonhost/loader"
)

// Run serves until ctx ends, then shuts down: new requests are refused,
// in-flight requests finish, streams close and every model is unloaded, all
// within --exit-timeout-secs; whatever is still running then is abandoned
// and Run returns an error (exit status 1). A signal during start-up stops
// it at once.
func (o *serveOptions) Run(ctx context.Context) error {
	log := o.logger()
	o.GRPC.warn(log)
	o.GC.apply(log)
	if o.DebugAddress != "" {
		stopDiagnostics, err := startDiagnostics(o.DebugAddress, log)
		if err != nil {
			return fmt.Errorf("listen for diagnostics: %w", err)
		}
		defer stopDiagnostics()
	}
	gpus := o.GPU.open(log)
	defer gpus.close(log) // after the host: the server has stopped
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
	srv, err := o.start(ctx, log, provider)
	if err != nil {
		return err
	}
	host.AttachServer(srv) // backends' in-process API (TRITONSERVER_ServerInferAsync)
	for _, st := range srv.RepositoryIndex() {
		log.Infof("model %q version %q: %s %s", st.Name, st.Version, st.Readiness, st.Reason)
	}
	if o.ExitOnError && !srv.Ready() {
		if err := o.stopWithin(log, srv.Stop); err != nil {
			log.Errorf("%v", err)
		}
		return errors.New("a model failed to load (see the log); pass --exit-on-error=false to serve the others")
	}

	shm := sharedmem.New(sharedmem.Options{MaxRegions: o.ShmMaxRegions, CUDA: o.cudaSharedMemory(gpus)})
	defer closeSharedMemory(log, shm)
	eps, err := o.endpoints(log, srv, host, shm, gpus)
	if err != nil {
		if serr := o.stopWithin(log, srv.Stop); serr != nil {
			log.Errorf("%v", serr)
		}
		return err
	}
	serveErr := serveAll(ctx, eps)
	err = o.stopWithin(log, func(deadline context.Context) error {
		stopAll(deadline, eps)
		return srv.Stop(deadline)
	})
	if serveErr != nil {
		if err != nil {
			log.Errorf("%v", err)
		}
		return serveErr
	}
	host.AwaitLentFreed(5 * time.Second)
	if live := host.Live(); !live.Zero() {
		log.Warnf("backend API objects still live at exit: %v", live)
	}
	if err != nil {
		return err
	}
	log.Infof("stopped")
	return nil
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
func (o *serveOptions) start(ctx context.Context, log *serverlog.Logger, provider core.BackendProvider) (*core.Server, error) {
	type started struct {
		srv *core.Server
		err error
	}
	done := make(chan started, 1)
	go func() {
		srv, err := core.NewServer(core.Options{
			ModelRepositories:         o.ModelRepositories,
			Backends:                  provider,
			Schedulers:                scheduling.New,
			Devices:                   o.devices,
			Logger:                    log,
			ExplicitModelControl:      o.ModelControlMode == "explicit",
			StartupModels:             o.LoadModels,
			MaxTensorBytes:            int64(o.MaxMessageBytes),
			MaxTensorBytesSetting:     "--grpc-max-message-size",
			BackendCallTimeoutSetting: "--backend-call-timeout-secs",
			BackendCallTimeout:        time.Duration(o.BackendCallSecs) * time.Second,
			EnsembleStepWait:          time.Duration(o.EnsembleStepWait) * time.Second,
			EnsembleStepWaitSetting:   "--ensemble-step-wait-secs",
		})
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

// stopWithin runs stop with a context that ends after --exit-timeout-secs,
// and returns at that deadline (plus a second for stop to report) whatever
// stop is still doing: the shutdown is bounded even if a backend never
// returns.
func (o *serveOptions) stopWithin(log *serverlog.Logger, stop func(context.Context) error) error {
	timeout := time.Duration(o.ExitTimeoutSecs) * time.Second
	log.Infof("shutting down: waiting up to %s for in-flight requests", timeout)
	deadline, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- stop(deadline) }()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("shutdown within --exit-timeout-secs=%d left work behind: %w", o.ExitTimeoutSecs, err)
		}
		return nil
	case <-time.After(timeout + time.Second):
		return fmt.Errorf("shutdown did not finish within --exit-timeout-secs=%d; exiting with work abandoned", o.ExitTimeoutSecs)
	}
}
