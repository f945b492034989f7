package testhooks

import (
	"testing"
	"time"
)

func TestHooksReadTheEnvironmentAsTritonDoes(t *testing.T) {
	for _, tc := range []struct {
		value string
		set   bool
		want  int
	}{
		{"", false, 0},
		{"", true, 0},
		{"12", true, 12},
		{"7ms", true, 7}, // atoi reads the leading number
		{"-3", true, 0},
		{"x", true, 0},
	} {
		if tc.set {
			t.Setenv(DelayScheduler, tc.value)
		}
		if got := Count(DelayScheduler); got != tc.want {
			t.Errorf("%q (set %v): Count = %d, want %d", tc.value, tc.set, got, tc.want)
		}
		if got := Delay(DelayScheduler); got != time.Duration(tc.want)*time.Millisecond {
			t.Errorf("%q: Delay = %v", tc.value, got)
		}
	}
}
