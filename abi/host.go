package abi

/*
#include "host.h"
*/
import "C"

import (
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/metrics"
	"github.com/tritonhost/tritonhost/core/serverlog"
	"github.com/tritonhost/tritonhost/loader"
)

// HostOptions configure a Host.
type HostOptions struct {
	// Logger receives the backends' TRITONSERVER_LogMessage output and
	// abi's own (default: discarded).
	Logger *serverlog.Logger
	// Metrics is the registry backends' custom metrics are registered in
	// (default: a new one, see Host.Metrics).
	Metrics *metrics.Registry
	// Devices are the server's GPUs (nil: none; see Devices).
	Devices Devices
	// InProcessMaxPending bounds the responses of one request a backend
	// submitted (TRITONSERVER_ServerInferAsync) that wait for its response
	// callback (default DefaultInProcessMaxPending). A serving backend that
	// sends more waits up to InProcessStallTimeout (default
	// DefaultInProcessStallTimeout) for room, then its send fails and the
	// request is cancelled.
	InProcessMaxPending   int
	InProcessStallTimeout time.Duration
	// InProcessMaxTensorBytes bounds each input and output of those
	// requests (default DefaultInProcessMaxTensorBytes), in place of the
	// server's bound on what its frontends take: a request between two
	// models crosses no network.
	InProcessMaxTensorBytes int64
	// OutputCacheBytes bounds the host memory kept from freed responses
	// for the outputs of the next ones (0: DefaultOutputCacheBytes;
	// negative: none). Outputs sent from where the backend wrote them live
	// until the wire has written them, so those of concurrent requests
	// overlap; without the cache, each large one would take fresh pages
	// from the system, and a page fault for each.
	OutputCacheBytes int64
	// Upstream, if set, answers the in-process API about models in place
	// of the attached server (see Upstream): the worker process of an
	// isolated backend.
	Upstream Upstream
	// ExtraProcs is how many Go processors (Ps) to add to the runtime's
	// default while more of the backends' own threads send responses at
	// once than the runtime has (package internal/procs); 0: none. The
	// setting is the process's: the first open host that asks decides, and
	// it holds until the last such host closes. GOMAXPROCS set in the
	// environment turns it off. Going back, the policy restores the
	// runtime's default (runtime.SetDefaultGOMAXPROCS): a program that
	// sets runtime.GOMAXPROCS itself leaves this 0.
	ExtraProcs int
}

// DefaultOutputCacheBytes is HostOptions.OutputCacheBytes when it is left
// 0: 64 MiB.
const DefaultOutputCacheBytes = 64 << 20

// Host is one server's side of the backend API: the Go objects that C
// handles lead to, the logger backends write to, the registry of their
// custom metrics, and the counters of live objects. Libraries opened
// through it (Open) belong to it. Several hosts may live in one process:
// each serves the objects it created, and what a backend does without
// naming an object (logging, creating a metric family) goes to the host
// whose entry point or request the calling thread works for, or else to the
// newest open host. All methods are safe for concurrent use.
type Host struct {
	c       *C.struct_thost_host
	log     *serverlog.Logger
	metrics *metrics.Registry
	devices Devices

	requests      slotTable[heldRequest]
	models        table[*core.Model]
	instances     slotTable[core.Instance]
	families      table[familyHandle]
	metricHandles table[metricHandle]

	// The in-process API: the server backends reach through
	// TRITONBACKEND_ModelServer (AttachServer), and the requests they
	// submitted that have not been handed back.
	server       atomic.Pointer[core.Server]
	info         atomic.Pointer[ServerInfo] // SetServerInfo
	calls        table[*inferCall]
	maxPending   int
	stallTimeout time.Duration
	maxTensor    core.TensorLimit // each tensor of an in-process request
	upstream     Upstream         // HostOptions.Upstream

	plugins pluginTables // caches' lookups in flight (cache.go)

	extraProcs bool // counted by startExtraProcs, until Close
}

var _ loader.Opener = (*Host)(nil)

// hostRegistry finds the Host of a C server: C passes its key. Keys are
// indexes into byKey and are never reused; a closed host's entry is nil.
var hostRegistry struct {
	mu    sync.Mutex
	byKey atomic.Pointer[[]*Host] // copied on every change
	open  []*Host                 // in creation order
}

// NewHost creates a host. Close it once its server has stopped.
func NewHost(opts HostOptions) *Host {
	if opts.Logger == nil {
		opts.Logger = serverlog.Discard()
	}
	if opts.Metrics == nil {
		opts.Metrics = metrics.NewRegistry()
	}
	if opts.InProcessMaxPending <= 0 {
		opts.InProcessMaxPending = DefaultInProcessMaxPending
	}
	if opts.InProcessStallTimeout <= 0 {
		opts.InProcessStallTimeout = DefaultInProcessStallTimeout
	}
	if opts.InProcessMaxTensorBytes <= 0 {
		opts.InProcessMaxTensorBytes = DefaultInProcessMaxTensorBytes
	}
	h := &Host{log: opts.Logger, metrics: opts.Metrics, devices: opts.Devices,
		maxPending: opts.InProcessMaxPending, stallTimeout: opts.InProcessStallTimeout,
		maxTensor: core.TensorLimit{Bytes: opts.InProcessMaxTensorBytes, Setting: InProcessMaxTensorSetting},
		upstream:  opts.Upstream}
	h.extraProcs = startExtraProcs(opts.ExtraProcs, opts.Logger)

	hostRegistry.mu.Lock()
	defer hostRegistry.mu.Unlock()
	var byKey []*Host
	if p := hostRegistry.byKey.Load(); p != nil {
		byKey = *p
	}
	key := len(byKey)
	outputCache := opts.OutputCacheBytes
	switch {
	case outputCache == 0:
		outputCache = DefaultOutputCacheBytes
	case outputCache < 0:
		outputCache = 0
	}
	h.c = C.thost_host_new(C.uint64_t(key), C.uint64_t(outputCache))
	if h.c == nil {
		panic("abi: out of memory creating a host")
	}
	if h.devices != nil {
		h.c.has_devices = 1 // before any backend runs: no other thread reads it yet
	}
	byKey = append(slices.Clip(byKey), h)
	hostRegistry.byKey.Store(&byKey)
	hostRegistry.open = append(hostRegistry.open, h)
	C.thost_set_newest_host(h.c)

	mirror := func() {
		for _, lv := range []serverlog.Level{serverlog.Info, serverlog.Warning, serverlog.Error, serverlog.Verbose} {
			C.thost_host_set_log(h.c, C.int(lv), C.bool(h.log.Enabled(lv)))
		}
	}
	h.log.OnChange(mirror)
	mirror()
	return h
}

// hostOf returns the Host of a C server, nil once it is closed.
func hostOf(c *C.struct_thost_host) *Host {
	byKey := *hostRegistry.byKey.Load()
	return byKey[c.key]
}

// Close detaches the host: objects of its libraries are refused from now
// on, and calls that name no object go to another open host. Call it after
// the server using it has stopped; it does not close libraries (the loader
// does, as models unload).
func (h *Host) Close() {
	hostRegistry.mu.Lock()
	defer hostRegistry.mu.Unlock()
	byKey := slices.Clone(*hostRegistry.byKey.Load())
	if byKey[h.c.key] == nil {
		return
	}
	byKey[h.c.key] = nil
	hostRegistry.byKey.Store(&byKey)
	hostRegistry.open = slices.DeleteFunc(hostRegistry.open, func(o *Host) bool { return o == h })
	var newest *C.struct_thost_host
	if n := len(hostRegistry.open); n > 0 {
		newest = hostRegistry.open[n-1].c
	}
	C.thost_set_newest_host(newest)
	C.thost_host_close(h.c)
	if h.extraProcs {
		stopExtraProcs()
	}
}

// Logger returns the logger backends write to.
func (h *Host) Logger() *serverlog.Logger { return h.log }

// Metrics returns the registry that backends' custom metrics
// (TRITONSERVER_MetricFamilyNew, TRITONSERVER_MetricNew) are registered in,
// for the server to serve (package frontend/metricsserver serves it at
// /metrics). A family name a backend
// registers with the same kind as an existing family shares that family, as
// in Triton.
func (h *Host) Metrics() *metrics.Registry { return h.metrics }

// LiveObjects counts the live objects of the backend API of one host, for
// leak checks: after its server has stopped, every count is zero.
type LiveObjects struct {
	RequestBlocks      int64 // request handles not yet released
	RequestContexts    int64 // requests a backend still holds anything of
	Factories          int64 // response factories not deleted
	Responses          int64 // responses neither sent nor deleted
	LentResponses      int64 // sent responses not yet freed: being delivered, or lent to a frontend
	ResponseStatistics int64 // response statistics objects not deleted
	HostMessages       int64 // server-owned messages (backend config, host policy)
	States             int64 // implicit-state objects not yet consumed
	InferRequests      int64 // inference requests backends created and did not delete
	InferResponses     int64 // responses delivered to backends and not deleted
	Allocators         int64 // response allocators backends did not delete
	GoRequests         int   // Go request records
	GoModels           int   // Go model records
	GoInstances        int   // Go instance records
	GoInferCalls       int   // submitted inference requests not yet handed back
}

// Live returns the host's current counts.
func (h *Host) Live() LiveObjects {
	n := func(which C.int) int64 { return int64(C.thost_host_live(h.c, which)) }
	return LiveObjects{
		RequestBlocks:      n(C.THOST_COUNT_REQUEST),
		RequestContexts:    n(C.THOST_COUNT_CONTEXT),
		Factories:          n(C.THOST_COUNT_FACTORY),
		Responses:          n(C.THOST_COUNT_RESPONSE),
		LentResponses:      n(C.THOST_COUNT_LENT),
		ResponseStatistics: n(C.THOST_COUNT_RSTATS),
		HostMessages:       n(C.THOST_COUNT_HOST_MESSAGE),
		States:             n(C.THOST_COUNT_STATE),
		InferRequests:      n(C.THOST_COUNT_INFER_REQUEST),
		InferResponses:     n(C.THOST_COUNT_INFER_RESPONSE),
		Allocators:         n(C.THOST_COUNT_ALLOCATOR),
		GoRequests:         h.requests.len(),
		GoModels:           h.models.len(),
		GoInstances:        h.instances.len(),
		GoInferCalls:       h.calls.len(),
	}
}

// Zero reports whether nothing is live.
func (l LiveObjects) Zero() bool { return l == LiveObjects{} }

// OutputCache reports how many buffers, of how many bytes in all, the host
// keeps for outputs (HostOptions.OutputCacheBytes).
func (h *Host) OutputCache() (buffers int, bytes int64) {
	var n, b C.uint64_t
	C.thost_outbuf_stats(&h.c.outbufs, &n, &b)
	return int(n), int64(b)
}

// AwaitLentFreed waits, at most timeout, until no response is lent any
// more (LiveObjects.LentResponses), collecting garbage meanwhile: a
// frontend whose transport dropped a lent response unfreed (gRPC drops the
// frames of a broken connection) frees it from a cleanup once it is
// garbage. It reports whether none is left. For the check at exit.
func (h *Host) AwaitLentFreed(timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for C.thost_host_live(h.c, C.THOST_COUNT_LENT) != 0 {
		if time.Now().After(deadline) {
			return false
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	return true
}

// String lists the counts that are not zero.
func (l LiveObjects) String() string {
	return fmt.Sprintf("request blocks %d, contexts %d, factories %d, responses %d, lent responses %d, response statistics %d, "+
		"host messages %d, states %d, inference requests %d, inference responses %d, allocators %d, "+
		"Go requests %d, Go models %d, Go instances %d, Go inference calls %d",
		l.RequestBlocks, l.RequestContexts, l.Factories, l.Responses, l.LentResponses, l.ResponseStatistics,
		l.HostMessages, l.States, l.InferRequests, l.InferResponses, l.Allocators,
		l.GoRequests, l.GoModels, l.GoInstances, l.GoInferCalls)
}

// MetricObjects counts the live objects of the custom-metrics API of one
// host. Families and metrics a backend never deletes stay counted: they are
// the backend's leak, not the server's, so these counts are not part of
// LiveObjects.
type MetricObjects struct {
	Families   int64 // TRITONSERVER_MetricFamily handles not deleted
	Metrics    int64 // TRITONSERVER_Metric handles not deleted
	Args       int64 // TRITONSERVER_MetricArgs not deleted
	Series     int64 // series in C memory (shared by metrics of the same labels)
	GoFamilies int   // Go family records
	GoMetrics  int   // Go metric records
}

// LiveMetrics returns the host's current counts.
func (h *Host) LiveMetrics() MetricObjects {
	n := func(which C.int) int64 { return int64(C.thost_host_live(h.c, which)) }
	return MetricObjects{
		Families:   n(C.THOST_COUNT_METRIC_FAMILY),
		Metrics:    n(C.THOST_COUNT_METRIC),
		Args:       n(C.THOST_COUNT_METRIC_ARGS),
		Series:     n(C.THOST_COUNT_SERIES),
		GoFamilies: h.families.len(),
		GoMetrics:  h.metricHandles.len(),
	}
}

// Zero reports whether nothing is live.
func (m MetricObjects) Zero() bool { return m == MetricObjects{} }

// LiveHandles returns how many handles are live in the whole process, for
// leak checks in tests that run one host at a time.
func LiveHandles() int64 { return int64(C.thost_handle_live()) }
