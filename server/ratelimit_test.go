package server

import (
	"testing"

	"github.com/tritonhost/tritonhost/core/ratelimit"
)

// TestRateLimitSettings: RateLimit.Mode takes Triton's two modes in any
// case, and Resources take Triton's two forms of --rate-limit-resource.
func TestRateLimitSettings(t *testing.T) {
	t.Parallel()
	parsed := []struct {
		arg  string
		want ratelimit.Resource
	}{
		{"R:3", ratelimit.Resource{Name: "R", Count: 3, Device: ratelimit.EveryDevice}},
		{"R:0", ratelimit.Resource{Name: "R", Count: 0, Device: ratelimit.EveryDevice}},
		{"gpu_mem:4:1", ratelimit.Resource{Name: "gpu_mem", Count: 4, Device: 1}},
	}
	for _, tc := range parsed {
		got, err := parseRateLimitResource(tc.arg)
		if err != nil || got != tc.want {
			t.Errorf("--rate-limit-resource %s: %+v, %v; want %+v", tc.arg, got, err, tc.want)
		}
	}
	mode := RateLimitConfig{Mode: "Execution_Count"}
	if got, _, err := mode.parse(); err != nil || got != rateLimitExecutionCount {
		t.Errorf("--rate-limit Execution_Count: %q, %v; want it taken as execution_count", got, err)
	}
}
