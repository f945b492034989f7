package server

import (
	"fmt"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"

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
	// AutoMemoryLimit is --gc-memory-limit-byte-size's default: a share of
	// the cgroup's memory limit, none without one.
	AutoMemoryLimit = -1
)

// cgroupMemoryFiles hold the memory limit of the process's cgroup, version
// 2 then version 1 (where "no limit" is a huge number).
var cgroupMemoryFiles = []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}

func (g *GCConfig) validate() error {
	if g.Unmanaged {
		return nil
	}
	if g.Percent != nil && *g.Percent < -1 {
		return fmt.Errorf("--gc-percent must be -1 or more, not %d", *g.Percent)
	}
	if g.MemoryLimit != nil && *g.MemoryLimit < AutoMemoryLimit {
		return fmt.Errorf("--gc-memory-limit-byte-size must be -1, 0 or a size in bytes, not %d", *g.MemoryLimit)
	}
	if p, env := g.percent(os.Getenv); !env && p == -1 && g.limit(os.Getenv, readCgroupLimit) == 0 {
		return fmt.Errorf("--gc-percent=-1 needs a memory limit (--gc-memory-limit-byte-size, GOMEMLIMIT or a container's): the heap would grow without bound")
	}
	return nil
}

// percent is the GOGC the server runs with, and whether it is the
// environment's.
func (g *GCConfig) percent(getenv func(string) string) (int, bool) {
	if g.Percent == nil {
		if getenv("GOGC") != "" {
			return 0, true
		}
		return DefaultGCPercent, false
	}
	return *g.Percent, false
}

// workerPercent is the GOGC of the server's worker processes: the
// server's own percent where the server sets it and it is positive; 0
// (the environment's, inherited, or Go's default) where the environment
// sets it, the program leaves the collector alone, or the server
// collects only at its memory limit, which is the server's, not a
// worker's.
func (g *GCConfig) workerPercent() int {
	if g.Unmanaged {
		return 0
	}
	if p, env := g.percent(os.Getenv); !env && p > 0 {
		return p
	}
	return 0
}

// limit is the memory limit to set in bytes: 0 for none, -1 to leave the
// environment's GOMEMLIMIT.
func (g *GCConfig) limit(getenv func(string) string, cgroup func() int64) int64 {
	l := int64(AutoMemoryLimit)
	switch {
	case g.MemoryLimit != nil:
		l = *g.MemoryLimit
	case getenv("GOMEMLIMIT") != "":
		return -1
	}
	if l != AutoMemoryLimit {
		return l
	}
	if c := cgroup(); c > 0 {
		return int64(float64(c) * defaultMemoryLimitShare)
	}
	return 0
}

// apply sets the collector's policy and logs it.
func (g *GCConfig) apply(log *serverlog.Logger) {
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
