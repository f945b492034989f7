package main

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/tritonhost/tritonhost/abi"
	"github.com/tritonhost/tritonhost/core/serverlog"
)

// inprocessFlags bound the requests backends submit to other models
// through the in-process API (TRITONSERVER_ServerInferAsync): how many
// responses of one such request may wait for its backend's response
// callback, and how long a sending backend waits for room.
type inprocessFlags struct {
	MaxPending     int
	StallTimeoutMs int
	MaxTensorSize  int64
}

func (p *inprocessFlags) bind(f *pflag.FlagSet) {
	f.IntVar(&p.MaxPending, "inprocess-max-pending-responses", abi.DefaultInProcessMaxPending,
		"responses of one request a backend submitted to another model that may wait for its response callback")
	f.IntVar(&p.StallTimeoutMs, "inprocess-stall-timeout", int(abi.DefaultInProcessStallTimeout/time.Millisecond),
		"ms a model's response may wait for room among those; then its send fails and the request is cancelled")
	f.Int64Var(&p.MaxTensorSize, "inprocess-max-tensor-size", abi.DefaultInProcessMaxTensorBytes,
		"largest input or output, in bytes, of a request a backend submits to another model (the frontends' limits do not apply to it)")
}

func (p *inprocessFlags) validate() error {
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

// hostOptions are the abi host's options for these flags and log.
func (p *inprocessFlags) hostOptions(log *serverlog.Logger) abi.HostOptions {
	return abi.HostOptions{Logger: log, InProcessMaxPending: p.MaxPending,
		InProcessStallTimeout:   time.Duration(p.StallTimeoutMs) * time.Millisecond,
		InProcessMaxTensorBytes: p.MaxTensorSize}
}
