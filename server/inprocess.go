package server

import (
	"fmt"
	"time"

	"github.com/tritonhost/tritonhost/abi"
	"github.com/tritonhost/tritonhost/core/serverlog"
)

func (p *InProcessConfig) validate() error {
	if p.MaxPending <= 0 {
		return fmt.Errorf("--inprocess-max-pending-responses must be positive, not %d", p.MaxPending)
	}
	if p.StallTimeoutMs <= 0 {
		return fmt.Errorf("--inprocess-stall-timeout must be positive, not %d", p.StallTimeoutMs)
	}
	if p.MaxTensorSize <= 0 {
		return fmt.Errorf("--inprocess-max-tensor-size must be positive, not %d", p.MaxTensorSize)
	}
	return nil
}

// hostOptions are the abi host's options for these settings and log.
func (p *InProcessConfig) hostOptions(log *serverlog.Logger) abi.HostOptions {
	return abi.HostOptions{Logger: log, InProcessMaxPending: p.MaxPending,
		InProcessStallTimeout:   time.Duration(p.StallTimeoutMs) * time.Millisecond,
		InProcessMaxTensorBytes: p.MaxTensorSize}
}

// outputCache is --output-buffer-cache-byte-size as abi.HostOptions takes
// it: there 0 means the default, and none is negative.
func (b *BackendsConfig) outputCache() int64 {
	if b.OutputBufferCacheBytes == 0 {
		return -1
	}
	return b.OutputBufferCacheBytes
}
