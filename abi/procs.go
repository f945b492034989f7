package abi

/*
#include "backend_threads.h"
*/
import "C"

import (
	"context"
	"os"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/tritonhost/tritonhost/core/serverlog"
	"github.com/tritonhost/tritonhost/internal/procs"
)

// DefaultExtraProcs is HostOptions.ExtraProcs's default in the server
// (--backend-thread-extra-procs): two processors more while the backends'
// own threads outnumber the runtime's (docs/performance.md has the
// measurements of 1 and 2).
const DefaultExtraProcs = 2

// MaxExtraProcs bounds HostOptions.ExtraProcs as the server takes it.
const MaxExtraProcs = 64

// extraProcs runs one procs.Policy for the process (the runtime's setting
// is the process's), while hosts that asked for one are open. The first
// such host's ExtraProcs is the one applied.
var extraProcs struct {
	mu    sync.Mutex
	users int
	stop  context.CancelFunc
	done  chan struct{}
}

// extraProcsWake ends the policy's longer waits between samples when a
// backend sends a response (thostResponseSend pokes it).
var extraProcsWake = procs.NewWake()

// startExtraProcs counts a host asking for extra processors, starting the
// policy for the first. GOMAXPROCS set in the environment is the user's
// choice: then nothing starts.
func startExtraProcs(extra int, log *serverlog.Logger) bool {
	if extra <= 0 || os.Getenv("GOMAXPROCS") != "" {
		return false
	}
	extraProcs.mu.Lock()
	defer extraProcs.mu.Unlock()
	if extraProcs.users++; extraProcs.users == 1 {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		extraProcs.stop, extraProcs.done = cancel, done
		go func() {
			defer close(done)
			p := procs.NewPolicy(extra)
			p.Changed = func(n int, s procs.Sample) {
				log.Verbosef(1, "Go processors: %d (%d of the backends' own threads running, %d sending within %v)", n, s.Live, s.Active, procs.Window)
			}
			procs.Run(ctx, p, procs.DefaultTiming, sampleBackendThreads, extraProcsWake)
		}()
	}
	return true
}

// stopExtraProcs is a host's end of startExtraProcs: the last one stops
// the policy, which gives back what it added, and waits for it.
func stopExtraProcs() {
	extraProcs.mu.Lock()
	defer extraProcs.mu.Unlock()
	if extraProcs.users--; extraProcs.users == 0 {
		extraProcs.stop()
		<-extraProcs.done
	}
}

// sampleBackendThreads reports the backends' own threads that are running
// and those that sent since the last sample, and starts the next window.
// C counts them (backend_threads.h); the counters are atomics in C memory.
func sampleBackendThreads() procs.Sample {
	active := atomic.SwapUint32((*uint32)(unsafe.Pointer(&C.thost_backend_threads_active)), 0)
	atomic.AddUint64((*uint64)(unsafe.Pointer(&C.thost_backend_threads_window)), 1)
	return procs.Sample{Live: backendThreadsLive(), Active: int64(active)}
}

// backendThreadsLive is how many of the backends' own threads that have
// sent are running, read without starting a window.
func backendThreadsLive() int64 {
	return atomic.LoadInt64((*int64)(unsafe.Pointer(&C.thost_backend_threads_live)))
}
