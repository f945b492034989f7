package main

import (
	"fmt"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/tritonhost/tritonhost/core/serverlog"
)

// The garbage collector's policy. A server's live heap is small (a few MiB
// besides the tensors it holds), but every request and response leaves
// garbage, mostly gRPC's: with Go's default (GOGC=100) the collector ran
// some 25 times a second under identity unary at 16 clients and took about
// a third of the server's CPU. DefaultGCPercent lets the heap grow to five
// times what is live before the next collection: measured on the 2-core
// machine (8 s windows, two rounds), identity unary at 16 clients cost the
// server 70-75 us of CPU per request at GOGC=100, 54-64 at 200, 65-68 at
// 400 and 49-60 at 800; with 1 MiB tensors, peak memory was 98 MB at 100,
// 197 MB at 400 and 315 MB at 800. So a server that holds large tensors
// holds up to about twice as much memory at the default as at Go's, which
// the memory limit bounds: near it, the collector runs as often as it
// must, whatever the percent.
const (
	DefaultGCPercent = 400
	// defaultMemoryLimitShare is the part of the memory limit of the
	// server's cgroup (a container's) that the default memory limit takes.
	defaultMemoryLimitShare = 0.9
	// autoMemoryLimit is --gc-memory-limit-byte-size's default: a share of
	// the cgroup's memory limit, none without one.
	autoMemoryLimit = -1
)

// cgroupMemoryFiles hold the memory limit of the process's cgroup, version
// 2 then version 1 (where "no limit" is a huge number).
var cgroupMemoryFiles = []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}

// gcFlags set the Go garbage collector of the server process: how far the
// heap may grow past what is live before a collection (--gc-percent, as
// GOGC) and a soft limit on the memory the process holds
// (--gc-memory-limit-byte-size, as GOMEMLIMIT). A flag not given leaves
// the GOGC or GOMEMLIMIT environment variable in force, when it is set.
type gcFlags struct {
	Percent     int
	MemoryLimit int64
	flags       *pflag.FlagSet
}

func (g *gcFlags) bind(f *pflag.FlagSet) {
	g.flags = f
	f.IntVar(&g.Percent, "gc-percent", DefaultGCPercent,
		"percent the heap may grow past what is live before the garbage collector runs, as GOGC (-1: only at the memory limit)")
	f.Int64Var(&g.MemoryLimit, "gc-memory-limit-byte-size", autoMemoryLimit,
		"bytes of memory near which the garbage collector runs whatever --gc-percent says, as GOMEMLIMIT (0: none; -1: 90% of the container's (cgroup's) memory limit, none without one)")
}

func (g *gcFlags) validate() error {
	if g.Percent < -1 {
		return fmt.Errorf("--gc-percent must be -1 or more, not %d", g.Percent)
	}
	if g.MemoryLimit < autoMemoryLimit {
		return fmt.Errorf("--gc-memory-limit-byte-size must be -1, 0 or a size in bytes, not %d", g.MemoryLimit)
	}
	if g.Percent == -1 && g.limit(os.Getenv, readCgroupLimit) <= 0 {
		return fmt.Errorf("--gc-percent=-1 needs a memory limit (--gc-memory-limit-byte-size, GOMEMLIMIT or a container's): the heap would grow without bound")
	}
	return nil
}

// given reports whether a flag was set on the command line.
func (g *gcFlags) given(name string) bool { return g.flags != nil && g.flags.Changed(name) }

// percent is the GOGC the server runs with, and whether it is the
// environment's.
func (g *gcFlags) percent(getenv func(string) string) (int, bool) {
	if !g.given("gc-percent") && getenv("GOGC") != "" {
		return 0, true
	}
	return g.Percent, false
}

// limit is the memory limit to set in bytes: 0 for none, -1 to leave the
// environment's GOMEMLIMIT.
func (g *gcFlags) limit(getenv func(string) string, cgroup func() int64) int64 {
	if !g.given("gc-memory-limit-byte-size") && getenv("GOMEMLIMIT") != "" {
		return -1
	}
	if g.MemoryLimit != autoMemoryLimit {
		return g.MemoryLimit
	}
	if c := cgroup(); c > 0 {
		return int64(float64(c) * defaultMemoryLimitShare)
	}
	return 0
}

// apply sets the collector's policy and logs it.
func (g *gcFlags) apply(log *serverlog.Logger) {
	var what []string
	if p, env := g.percent(os.Getenv); env {
		what = append(what, "GOGC="+os.Getenv("GOGC")+" (environment)")
	} else {
		debug.SetGCPercent(p)
		what = append(what, fmt.Sprintf("GOGC=%d", p))
	}
	switch l := g.limit(os.Getenv, readCgroupLimit); {
	case l < 0:
		what = append(what, "memory limit GOMEMLIMIT="+os.Getenv("GOMEMLIMIT")+" (environment)")
	case l == 0:
		debug.SetMemoryLimit(math.MaxInt64)
		what = append(what, "no memory limit")
	default:
		debug.SetMemoryLimit(l)
		what = append(what, fmt.Sprintf("memory limit %d bytes", l))
	}
	log.Infof("garbage collector: %s", strings.Join(what, ", "))
}

// readCgroupLimit returns the memory limit of the process's cgroup in
// bytes, 0 when there is none or it cannot be read.
func readCgroupLimit() int64 {
	for _, path := range cgroupMemoryFiles {
		data, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		return parseCgroupLimit(string(data))
	}
	return 0
}

// parseCgroupLimit reads a cgroup memory limit: "max" (version 2) and
// version 1's "no limit" (a page-rounded 2^63) are none (0).
func parseCgroupLimit(s string) int64 {
	s = strings.TrimSpace(s)
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 || n >= math.MaxInt64/2 {
		return 0
	}
	return n
}
