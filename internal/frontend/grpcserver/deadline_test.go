package grpcserver

import (
	"testing"
	"time"
)

func TestDeadlineMarginIsATwentiethWithinItsBounds(t *testing.T) {
	for _, tc := range []struct{ left, want time.Duration }{
		{10 * time.Millisecond, minDeadlineMargin},
		{300 * time.Millisecond, 15 * time.Millisecond},
		{time.Minute, maxDeadlineMargin},
	} {
		if got := deadlineMargin(tc.left); got != tc.want {
			t.Errorf("deadlineMargin(%v) = %v, want %v", tc.left, got, tc.want)
		}
	}
}
