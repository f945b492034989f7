// Package abi is the C API that Triton-style backends call back into: every
// TRITONSERVER_* and TRITONBACKEND_* function the headers in include/ declare
// for backends, with their exact signatures.
//
// The functions live in C (the *.c files of this package) and are exported
// from the executable's dynamic symbol table: the C files are compiled with
// -fvisibility=hidden and the headers' DECLSPEC macros give only the API
// default visibility, and the package links with -rdynamic. A backend opened
// with dlopen(RTLD_NOW|RTLD_LOCAL) therefore resolves them from the host.
//
// Data lives in C: a request is one C block filled by Go before Execute, so a
// backend's getters never cross into Go; a response is built in C and crosses
// into Go once, when it is sent. Go is reached only for routing (send,
// release), statistics, configuration changes and logging, through the
// //export functions in exports_*.go. No Go pointer is kept in C memory except
// input buffers, which are pinned while their request block lives.
//
// The loader package uses this package's Go API (Backend, Model, Instance and
// the Call* functions) to create the handles and call a backend's entry points.
package abi

/*
#cgo CFLAGS: -I${SRCDIR}/../include -fvisibility=hidden -D_COMPILING_TRITONSERVER -D_COMPILING_TRITONBACKEND -O2 -Wall
#cgo LDFLAGS: -rdynamic
#include "handles.h"
*/
import "C"

import (
	"sync"
	"sync/atomic"

	"tritonhost/core/serverlog"
)

// table maps keys to Go objects that C handles refer to. Keys are never
// reused, so a handle that outlived its object finds nothing instead of
// another object. Lookups are lock-free (sync.Map).
type table[T any] struct {
	next atomic.Uint64
	m    sync.Map
	n    atomic.Int64
}

func (t *table[T]) add(v T) uint64 {
	k := t.next.Add(1)
	t.m.Store(k, v)
	t.n.Add(1)
	return k
}

func (t *table[T]) get(k uint64) (T, bool) {
	v, ok := t.m.Load(k)
	if !ok {
		var zero T
		return zero, false
	}
	return v.(T), true
}

func (t *table[T]) take(k uint64) (T, bool) {
	v, ok := t.m.LoadAndDelete(k)
	if !ok {
		var zero T
		return zero, false
	}
	t.n.Add(-1)
	return v.(T), true
}

func (t *table[T]) len() int { return int(t.n.Load()) }

var logger atomic.Pointer[serverlog.Logger]

func init() { SetLogger(serverlog.Discard()) }

// SetLogger sets where backends' TRITONSERVER_LogMessage output goes. The
// enabled levels are mirrored into C so disabled messages cost no crossing.
func SetLogger(l *serverlog.Logger) {
	logger.Store(l)
	sync := func() {
		if logger.Load() != l {
			return
		}
		for _, lv := range []serverlog.Level{serverlog.Info, serverlog.Warning, serverlog.Error, serverlog.Verbose} {
			C.thost_log_set_enabled(C.int(lv), C.bool(l.Enabled(lv)))
		}
	}
	l.OnChange(sync)
	sync()
}

// LiveObjects counts the live objects of the backend API, for leak checks:
// after a server has stopped, every count is zero.
type LiveObjects struct {
	RequestBlocks      int64 // request handles not yet released
	RequestContexts    int64 // requests a backend still holds anything of
	Factories          int64 // response factories not deleted
	Responses          int64 // responses neither sent nor deleted
	ResponseStatistics int64 // response statistics objects not deleted
	HostMessages       int64 // host-owned messages (backend config, host policy)
	States             int64 // implicit-state objects not yet consumed
	GoRequests         int   // Go request states
	GoModels           int   // Go model handles
	GoInstances        int   // Go instance handles
}

// Live returns the current counts.
func Live() LiveObjects {
	load := func(i int) int64 { return int64(C.thost_live_count(C.int(i))) }
	return LiveObjects{
		RequestBlocks:      load(C.THOST_COUNT_REQUEST),
		RequestContexts:    load(C.THOST_COUNT_CONTEXT),
		Factories:          load(C.THOST_COUNT_FACTORY),
		Responses:          load(C.THOST_COUNT_RESPONSE),
		ResponseStatistics: load(C.THOST_COUNT_RSTATS),
		HostMessages:       load(C.THOST_COUNT_HOST_MESSAGE),
		States:             load(C.THOST_COUNT_STATE),
		GoRequests:         requests.len(),
		GoModels:           models.len(),
		GoInstances:        instances.len(),
	}
}

// Zero reports whether nothing is live.
func (l LiveObjects) Zero() bool { return l == LiveObjects{} }
