package server

import (
	"strings"
	"testing"
	"time"

	"github.com/tritonhost/tritonhost/core/serverlog"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// TestTritonGRPCOptionsBecomeTheServiceOptions: the gRPC options of
// Triton's command line arrive in the frontend's settings.
func TestTritonGRPCOptionsBecomeTheServiceOptions(t *testing.T) {
	t.Parallel()
	c := flagConfig(t, "--grpc-infer-response-compression-level=Medium", "--grpc-max-connection-age=1000", "--grpc-max-connection-age-grace=2000",
		"--grpc-header-forward-pattern=x-.*")
	set, err := c.resolve()
	if err != nil {
		t.Fatal(err)
	}
	_, conns := c.GRPC.options()
	if set.compression != 6 || conns.MaxAge != time.Second || conns.MaxAgeGrace != 2*time.Second || !set.grpcForward.MatchString("X-Tenant") {
		t.Errorf("gRPC: compression %d, age %v grace %v, forward %v", set.compression, conns.MaxAge, conns.MaxAgeGrace, set.grpcForward)
	}
}

// TestModelLoadGPULimitNeedsNoGPU: --model-load-gpu-limit is refused on a
// server that uses GPUs (it does not watch their memory at load), and
// limits nothing, with a line in the log, on one that uses none.
func TestModelLoadGPULimitNeedsNoGPU(t *testing.T) {
	t.Parallel()
	var buf testenv.LogBuffer
	log := serverlog.New(&buf)
	limits := map[int]float64{0: 0.8}
	if err := checkGPUs(log, limits, []int{0, 1}); err == nil || !strings.Contains(err.Error(), "--model-load-gpu-limit") {
		t.Errorf("with GPUs: %v, want the refusal", err)
	}
	if err := checkGPUs(log, limits, nil); err != nil || !strings.Contains(buf.String(), "no load is limited") {
		t.Errorf("without GPUs: %v, log %q", err, buf.String())
	}
	if err := checkGPUs(log, nil, []int{0}); err != nil {
		t.Errorf("no limit given, with GPUs: %v", err)
	}
}
