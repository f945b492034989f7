// Package sysmon keeps the Go runtime's system monitor (sysmon) awake in
// the server's processes.
//
// When every processor of a Go process is idle, sysmon parks in a deep
// sleep, and the next system call or cgo call that any goroutine makes
// wakes it with a futex, after which it polls every 20 µs for at least a
// millisecond before it backs off again. A server that idles between
// requests for a few tens of microseconds (the common case under moderate
// load, and always in an isolated model's worker, which waits for the
// server between batches) thus pays a wake-up of another thread and a
// burst of polling per request: about a sixth of the server's CPU on a
// small unary request (docs/performance.md). The runtime skips the deep sleep
// when its scheduler trace is on (GODEBUG=schedtrace); with a period of
// 2^31-1 ms (24.8 days) the trace itself stays silent, except that the
// runtime counts the period from the host's boot: on a host up for longer,
// it writes one line to standard error at start and one per period after.
// sysmon then sleeps from 20 µs up to 10 ms between its rounds, as it
// does whenever a processor is busy.
//
// The setting must be in the environment when a process starts: Env adds
// it to a worker's environment, and Exec re-executes the server with it.
// A GODEBUG that names schedtrace already (schedtrace=0 turns this off)
// is left as it is.
package sysmon

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"syscall"
)

// Setting is the GODEBUG entry that keeps sysmon out of its deep sleep.
const Setting = "schedtrace=2147483647"

// Env returns env (as os.Environ gives it) with Setting added to its
// GODEBUG, and whether it added it: not when GODEBUG names schedtrace
// already. Setting goes first, so the entries the environment had win.
func Env(env []string) ([]string, bool) {
	out := make([]string, 0, len(env)+1)
	found := false
	for _, kv := range env {
		v, ok := strings.CutPrefix(kv, "GODEBUG=")
		if !ok {
			out = append(out, kv)
			continue
		}
		if found { // a repeated variable: the first one counts, as in os.Getenv
			continue
		}
		found = true
		if names(v, "schedtrace") {
			return env, false
		}
		if v == "" {
			out = append(out, "GODEBUG="+Setting)
		} else {
			out = append(out, "GODEBUG="+Setting+","+v)
		}
	}
	if !found {
		out = append(out, "GODEBUG="+Setting)
	}
	return out, true
}

// names reports whether the GODEBUG value godebug sets key.
func names(godebug, key string) bool {
	for _, field := range strings.Split(godebug, ",") {
		if k, _, ok := strings.Cut(field, "="); ok && strings.TrimSpace(k) == key {
			return true
		}
	}
	return false
}

// Active reports whether this process started with Setting in effect:
// its GODEBUG's last schedtrace entry is Setting's.
func Active() bool {
	var last string
	for _, field := range strings.Split(os.Getenv("GODEBUG"), ",") {
		if k, _, ok := strings.Cut(field, "="); ok && strings.TrimSpace(k) == "schedtrace" {
			last = strings.TrimSpace(field)
		}
	}
	return last == Setting
}

// Exec re-executes the running binary, with the same arguments and
// descriptors and Setting added to its environment, unless the
// environment has a schedtrace entry already (then it returns nil at
// once, as it does in the process it started). It returns only on
// failure, with the reason; the caller goes on without the setting.
// Call it before the process starts anything it would lose.
func Exec() error {
	env, changed := Env(os.Environ())
	if !changed {
		return nil
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("re-execute with %s: %w", Setting, err)
	}
	if err := syscall.Exec(exe, os.Args, env); err != nil {
		return fmt.Errorf("re-execute %s with %s: %w", exe, Setting, err)
	}
	return nil // not reached
}

// IsTraceLine reports whether line is one the runtime's scheduler trace
// writes ("SCHED 0ms: gomaxprocs=..."): what Setting prints on a host up
// for more than its period, which a worker's log relay drops.
func IsTraceLine(line []byte) bool {
	rest, ok := bytes.CutPrefix(line, []byte("SCHED "))
	if !ok {
		return false
	}
	ms, rest, ok := bytes.Cut(rest, []byte("ms: gomaxprocs="))
	if !ok || len(ms) == 0 || len(rest) == 0 {
		return false
	}
	for _, c := range ms {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
