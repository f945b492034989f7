package main

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/tritonhost/tritonhost/abi"
	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/serverlog"
	"github.com/tritonhost/tritonhost/internal/isolation"
)

// isolationFlags choose where backends run (in the server's process, or
// each model in a worker process of its own) and bound the workers.
type isolationFlags struct {
	Mode              string
	RestartBackoffMs  int
	RestartBackoffMax int
	ExecuteTimeoutMs  int
	MemoryLimit       int64
	MaxRequests       int
}

func (i *isolationFlags) bind(f *pflag.FlagSet) {
	f.StringVar(&i.Mode, "backend-isolation", string(isolation.ModeNone),
		"where backends run: none (in the server's process) or process (each model version in a worker process of its own, restarted when it dies); a model's parameter "+isolation.IsolationParameter+" overrides it")
	f.IntVar(&i.RestartBackoffMs, "backend-restart-backoff", 100, "ms before a dead worker's first restart; doubled after each failed one")
	f.IntVar(&i.RestartBackoffMax, "backend-restart-backoff-max", 30000, "ms the restart backoff grows to at most")
	f.IntVar(&i.ExecuteTimeoutMs, "backend-execute-timeout", 0, "ms an isolated model's execution may take before its worker is killed and restarted (0: no bound)")
	f.IntVar(&i.MaxRequests, "backend-worker-max-requests", isolation.DefaultMaxUpstreamRequests,
		"requests and calls an isolated backend may have in flight to the server at once (its BLS requests, model queries and loads); past it they fail with UNAVAILABLE")
	f.Int64Var(&i.MemoryLimit, "backend-memory-limit", 0, "bytes of address space each worker process may map beyond what it maps at its start, before its backend is loaded (RLIMIT_AS; 0: no bound)")
}

func (i *isolationFlags) validate() error {
	if _, err := isolation.ParseMode(i.Mode); err != nil {
		return fmt.Errorf("--backend-isolation: %w", err)
	}
	switch {
	case i.RestartBackoffMs <= 0:
		return fmt.Errorf("--backend-restart-backoff must be positive, not %d", i.RestartBackoffMs)
	case i.RestartBackoffMax < i.RestartBackoffMs:
		return fmt.Errorf("--backend-restart-backoff-max (%d) must be at least --backend-restart-backoff (%d)", i.RestartBackoffMax, i.RestartBackoffMs)
	case i.ExecuteTimeoutMs < 0:
		return fmt.Errorf("--backend-execute-timeout must not be negative, not %d", i.ExecuteTimeoutMs)
	case i.MaxRequests <= 0:
		return fmt.Errorf("--backend-worker-max-requests must be positive, not %d", i.MaxRequests)
	case i.MemoryLimit < 0:
		return fmt.Errorf("--backend-memory-limit must not be negative, not %d", i.MemoryLimit)
	}
	return nil
}

// provider wraps the in-process provider with isolation.
func (i *isolationFlags) provider(inproc core.BackendProvider, log *serverlog.Logger, o *serveOptions, host *abi.Host) (core.BackendProvider, error) {
	mode, _ := isolation.ParseMode(i.Mode)
	var gpus []int
	if o.devices != nil {
		gpus = o.devices.IDs()
	}
	return isolation.New(inproc, isolation.Options{
		Default:              mode,
		Logger:               log,
		BackendDirectory:     o.BackendDirectory,
		BackendConfig:        o.backendConfig,
		DisableAutoComplete:  o.DisableAutoComplete,
		MinComputeCapability: o.GPU.MinComputeCapability,
		GPUs:                 gpus,
		LogVerbose:           o.LogVerbose,
		MaxTensorBytes:       int64(o.MaxMessageBytes),
		CallTimeout:          time.Duration(o.BackendCallSecs) * time.Second,
		RestartBackoff:       time.Duration(i.RestartBackoffMs) * time.Millisecond,
		RestartBackoffMax:    time.Duration(i.RestartBackoffMax) * time.Millisecond,
		ExecuteTimeout:       time.Duration(i.ExecuteTimeoutMs) * time.Millisecond,
		MemoryLimit:          i.MemoryLimit,
		MaxUpstreamRequests:  i.MaxRequests,

		InProcessMaxTensorBytes: o.InProcess.MaxTensorSize,
		InProcessMaxPending:     o.InProcess.MaxPending,
		InProcessStallTimeout:   time.Duration(o.InProcess.StallTimeoutMs) * time.Millisecond,
		ServerInfo:              host.ServerInfo,
	})
}
