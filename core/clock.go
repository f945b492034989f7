package core

import (
	_ "unsafe" // for go:linkname
)

// Backends stamp statistics and trace activities with
// std::chrono::steady_clock or clock_gettime(CLOCK_MONOTONIC), which on
// Linux are CLOCK_MONOTONIC in nanoseconds. The Go runtime's clock,
// runtime.nanotime, reads that same clock (through the vDSO), so the
// server's timestamps are the backends' to the nanosecond, without a
// system call. An offset from time.Now paired with one CLOCK_MONOTONIC
// reading at start-up is not: the pairing is off by up to half the time
// between the reads around it, which a loaded machine stretches to 100 µs
// and more, and a trace orders the server's activities (REQUEST_END) among
// a backend's (COMPUTE_END) by timestamp.
//
//go:linkname runtimeNanotime runtime.nanotime
func runtimeNanotime() int64

// Nanotime returns CLOCK_MONOTONIC in nanoseconds, comparable with the
// timestamps backends pass to the statistics and trace functions.
func Nanotime() uint64 { return uint64(runtimeNanotime()) }
