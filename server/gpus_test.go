package server

import (
	"bytes"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/tritonhost/tritonhost/core/serverlog"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

func TestGPUFlagsParsePoolSizes(t *testing.T) {
	for _, tc := range []struct {
		pools []string
		want  map[int]uint64
		err   string
	}{
		{nil, map[int]uint64{}, ""},
		{[]string{"0:1024", "3:0"}, map[int]uint64{0: 1024, 3: 0}, ""},
		{[]string{"1"}, nil, `--cuda-memory-pool-byte-size "1": want <integer>:<integer>`},
		{[]string{"-1:5"}, nil, "want <integer>:<integer>"},
		{[]string{"0:lots"}, nil, "want <integer>:<integer>"},
	} {
		g := GPUConfig{CUDAPools: tc.pools}
		pools, err := g.parse(1)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%v: error %v, want %q", tc.pools, err, tc.err)
		case tc.err == "" && (err != nil || len(pools) != len(tc.want)):
			t.Errorf("%v: %v %v", tc.pools, pools, err)
		case tc.err == "":
			for id, n := range tc.want {
				if pools[id] != n {
					t.Errorf("%v: pool %d = %d", tc.pools, id, pools[id])
				}
			}
		}
	}
}

// TestGPUMetricsFollowTheFlag opens the two GPUs of the fake NVML without
// a CUDA driver: they are listed and measured, but no instance may use
// them.
func TestGPUMetricsFollowTheFlag(t *testing.T) {
	nvml := testenv.FakeNVML(t)
	for _, allow := range []bool{true, false} {
		var log bytes.Buffer
		g := GPUConfig{AllowMetrics: allow, NVMLLibrary: nvml, DriverLibrary: "/nonexistent/libcuda.so.1", MinComputeCapability: 6}
		s := g.open(serverlog.New(&log), nil)
		c := s.metricsCollector()
		if (c != nil) != allow {
			t.Errorf("--allow-gpu-metrics=%t: collector %v", allow, c)
		}
		if allow {
			if n := testutil.CollectAndCount(c, "nv_gpu_memory_total_bytes"); n != 2 {
				t.Errorf("%d memory gauges, want 2", n)
			}
		}
		if len(s.ids()) != 0 || !strings.Contains(log.String(), "0 GPUs usable: 2 found, but load the CUDA driver") {
			t.Errorf("without a CUDA driver: ids %v, log:\n%s", s.ids(), log.String())
		}
		s.close(serverlog.Discard())
	}
}
