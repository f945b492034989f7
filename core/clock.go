package core

import (
	"time"

	"golang.org/x/sys/unix"
)

// Backends stamp statistics with std::chrono::steady_clock, which on Linux is
// CLOCK_MONOTONIC in nanoseconds. Go's monotonic clock reads the same source,
// so one reading of both at start-up lets every later time.Now be expressed
// on the backends' scale without a system call.
var (
	clockBase     = time.Now()
	clockBaseMono = readMonotonic()
)

func readMonotonic() uint64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		return 0
	}
	return uint64(ts.Nano())
}

// Nanotime returns CLOCK_MONOTONIC in nanoseconds, comparable with the
// timestamps backends pass to the statistics functions.
func Nanotime() uint64 { return clockBaseMono + uint64(time.Since(clockBase)) }
