package core

import (
	"testing"

	"golang.org/x/sys/unix"
)

// monotonic reads CLOCK_MONOTONIC as a backend does.
func monotonic(t *testing.T) uint64 {
	t.Helper()
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		t.Fatal(err)
	}
	return uint64(ts.Nano())
}

// TestNanotimeIsClockMonotonic: every Nanotime lies between two
// CLOCK_MONOTONIC readings taken around it, however long the test was
// descheduled at any point, so the server's timestamps order exactly with
// a backend's.
func TestNanotimeIsClockMonotonic(t *testing.T) {
	for i := range 100000 {
		before := monotonic(t)
		now := Nanotime()
		after := monotonic(t)
		if now < before || now > after {
			t.Fatalf("reading %d: Nanotime %d is outside [%d, %d], the CLOCK_MONOTONIC readings around it (off by %d ns)",
				i, now, before, after, max(int64(before-now), int64(now-after)))
		}
	}
}
