package core

import (
	"math"
	"time"

	"golang.org/x/sys/unix"
)

// Backends stamp statistics with std::chrono::steady_clock, which on Linux is
// CLOCK_MONOTONIC in nanoseconds. Go's monotonic clock reads the same source,
// so one reading of both at start-up lets every later time.Now be expressed
// on the backends' scale without a system call.
var clockBase, clockBaseMono = calibrateClock()

// calibrateClock pairs a time.Now with a CLOCK_MONOTONIC reading taken at
// the same instant: the reading is bracketed by two time.Now calls and
// paired with their midpoint, keeping the tightest of a few tries, so a
// thread preempted between the two reads (a loaded machine at start-up)
// does not shift every later timestamp by the length of the pause.
func calibrateClock() (time.Time, uint64) {
	var (
		base  time.Time
		mono  uint64
		width = time.Duration(math.MaxInt64)
	)
	for range 8 {
		before := time.Now()
		m := readMonotonic()
		w := time.Since(before)
		if w < width {
			base, mono, width = before.Add(w/2), m, w
		}
		if width < 20*time.Microsecond {
			break
		}
	}
	return base, mono
}

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
