package server

import (
	"errors"
	"fmt"
	"time"

	"github.com/tritonhost/tritonhost/abi"
	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/serverlog"
	"github.com/tritonhost/tritonhost/internal/isolation"
)

func (i *IsolationConfig) validate() error {
	mode, err := isolation.ParseMode(i.Mode)
	if err != nil {
		return fmt.Errorf("--backend-isolation: %w", err)
	}
	switch {
	case i.RestartBackoffMs <= 0:
		return fmt.Errorf("--backend-restart-backoff must be positive, not %d", i.RestartBackoffMs)
	case i.RestartBackoffMaxMs < i.RestartBackoffMs:
		return fmt.Errorf("--backend-restart-backoff-max (%d) must be at least --backend-restart-backoff (%d)", i.RestartBackoffMaxMs, i.RestartBackoffMs)
	case i.ExecuteTimeoutMs < 0:
		return fmt.Errorf("--backend-execute-timeout must not be negative, not %d", i.ExecuteTimeoutMs)
	case i.MaxRequests <= 0:
		return fmt.Errorf("--backend-worker-max-requests must be positive, not %d", i.MaxRequests)
	case i.PipelineDepth < 1 || i.PipelineDepth > isolation.MaxPipelineDepth:
		return fmt.Errorf("--backend-pipeline-depth must be 1 to %d, not %d", isolation.MaxPipelineDepth, i.PipelineDepth)
	case i.MemoryLimit < 0:
		return fmt.Errorf("--backend-memory-limit must not be negative, not %d", i.MemoryLimit)
	case i.NoWorkers && mode != isolation.ModeNone:
		return errors.New("--backend-isolation=process: this program cannot start worker processes")
	}
	return nil
}

// provider wraps the in-process provider with isolation; without workers
// (NoWorkers) it is the in-process provider itself.
func (c *Config) isolationProvider(inproc core.BackendProvider, s *settings, log *serverlog.Logger, gpus []int, host *abi.Host) (core.BackendProvider, error) {
	i := &c.Isolation
	if i.NoWorkers {
		return inproc, nil
	}
	mode, _ := isolation.ParseMode(i.Mode)
	return isolation.New(inproc, isolation.Options{
		Default:              mode,
		WorkerCommand:        i.WorkerCommand,
		Logger:               log,
		BackendDirectory:     s.backendDirectory,
		BackendConfig:        s.backendConfig,
		DisableAutoComplete:  c.Models.DisableAutoComplete,
		MinComputeCapability: c.GPU.MinComputeCapability,
		GPUs:                 gpus,
		CUDADriverLibrary:    c.GPU.DriverLibrary,
		CUDAPoolBytes:        s.cudaPools,
		PinnedPoolBytes:      uint64(c.GPU.PinnedPoolBytes),
		LogVerbose:           c.Log.Verbose,
		MaxTensorBytes:       int64(c.GRPC.MaxMessageBytes),
		HostPolicies:         s.hostPolicies,
		CallTimeout:          time.Duration(c.Backends.CallTimeoutSecs) * time.Second,
		RestartBackoff:       time.Duration(i.RestartBackoffMs) * time.Millisecond,
		RestartBackoffMax:    time.Duration(i.RestartBackoffMaxMs) * time.Millisecond,
		ExecuteTimeout:       time.Duration(i.ExecuteTimeoutMs) * time.Millisecond,
		MemoryLimit:          i.MemoryLimit,
		GCPercent:            c.GC.workerPercent(),
		MaxUpstreamRequests:  i.MaxRequests,
		PipelineDepth:        i.PipelineDepth,

		InProcessMaxTensorBytes: c.InProcess.MaxTensorSize,
		InProcessMaxPending:     c.InProcess.MaxPending,
		InProcessStallTimeout:   time.Duration(c.InProcess.StallTimeoutMs) * time.Millisecond,
		ServerInfo:              host.ServerInfo,
	})
}
