package server

import (
	"testing"

	"github.com/tritonhost/tritonhost/abi"
)

// TestOutputBufferCacheSetting: the host takes the setting's "none" (0)
// as a negative value, and other sizes as they are.
func TestOutputBufferCacheSetting(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ setting, host int64 }{
		{abi.DefaultOutputCacheBytes, abi.DefaultOutputCacheBytes}, {1 << 20, 1 << 20}, {0, -1},
	} {
		if got := (&BackendsConfig{OutputBufferCacheBytes: tc.setting}).outputCache(); got != tc.host {
			t.Errorf("--output-buffer-cache-byte-size %d: the host gets %d, want %d", tc.setting, got, tc.host)
		}
	}
}
