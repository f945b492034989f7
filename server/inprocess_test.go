package server

import (
	"strings"
	"testing"
	"time"
)

func TestInProcessFlagsBecomeTheHostLimits(t *testing.T) {
	t.Parallel()
	c := flagConfig(t, "--inprocess-max-pending-responses=3", "--inprocess-stall-timeout=250")
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if o := c.InProcess.hostOptions(nil); o.InProcessMaxPending != 3 || o.InProcessStallTimeout != 250*time.Millisecond {
		t.Errorf("host options %+v", o)
	}
	for _, flag := range []string{"inprocess-max-pending-responses", "inprocess-stall-timeout"} {
		c := flagConfig(t, "--"+flag+"=0")
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), flag) {
			t.Errorf("--%s=0: %v, want an error naming the flag", flag, err)
		}
	}
}
