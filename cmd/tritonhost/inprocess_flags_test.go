package main

import (
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

func TestInProcessFlagsBecomeTheHostLimits(t *testing.T) {
	t.Parallel()
	var p inprocessFlags
	f := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	p.bind(f)
	if err := f.Parse([]string{"--inprocess-max-pending-responses=3", "--inprocess-stall-timeout=250"}); err != nil {
		t.Fatal(err)
	}
	if err := p.validate(); err != nil {
		t.Fatal(err)
	}
	if o := p.hostOptions(nil); o.InProcessMaxPending != 3 || o.InProcessStallTimeout != 250*time.Millisecond {
		t.Errorf("host options %+v", o)
	}
	for _, flag := range []string{"inprocess-max-pending-responses", "inprocess-stall-timeout"} {
		var q inprocessFlags
		f := pflag.NewFlagSet("serve", pflag.ContinueOnError)
		q.bind(f)
		if err := f.Parse([]string{"--" + flag + "=0"}); err != nil {
			t.Fatal(err)
		}
		if err := q.validate(); err == nil || !strings.Contains(err.Error(), flag) {
			t.Errorf("--%s=0: %v, want an error naming the flag", flag, err)
		}
	}
}
