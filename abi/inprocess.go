package abi

/*
#include <stdlib.h>
#include "inprocess.h"
*/
import "C"

import (
	"context"
	"errors"
	"sync"
	"time"
	"unsafe"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/configpb"
)

// Defaults of HostOptions.InProcessMaxPending, InProcessStallTimeout and
// InProcessMaxTensorBytes (2 GiB, the most Triton's gRPC frontend takes).
const (
	DefaultInProcessMaxPending     = 1024
	DefaultInProcessStallTimeout   = 5 * time.Second
	DefaultInProcessMaxTensorBytes = 2 << 30
)

// InProcessMaxTensorSetting is the serve flag that sets
// HostOptions.InProcessMaxTensorBytes, which errors name.
const InProcessMaxTensorSetting = "--inprocess-max-tensor-size"

// errServerNotReady is Triton's answer to the in-process API while the
// server starts (its models load) and, for ModelIsReady, while it stops.
func errServerNotReady() *C.TRITONSERVER_Error {
	return cErrorf(core.CodeUnavailable, "Server not ready")
}

// AttachServer makes s the server that backends reach through the
// in-process API: the handle TRITONBACKEND_ModelServer gives them leads to
// it, for TRITONSERVER_InferenceRequestNew, TRITONSERVER_ServerInferAsync
// and the model queries. Call it once s is created (core.NewServer has
// loaded the models by then); until then those calls answer UNAVAILABLE
// "Server not ready", as Triton's do while its models load.
func (h *Host) AttachServer(s *core.Server) { h.server.Store(s) }

// serverOf returns the attached server of a C server, or an error for the
// backend calling fn.
func serverOf(c *C.struct_thost_host, fn string) (*Host, *core.Server, *C.TRITONSERVER_Error) {
	h := hostOf(c)
	if h == nil {
		return nil, nil, cErrorf(core.CodeUnavailable, "%s: the server has stopped", fn)
	}
	s := h.server.Load()
	if s == nil {
		return nil, nil, errServerNotReady()
	}
	return h, s, nil
}

// serverModel is serverOf followed by the lookup of model name at version (0:
// the latest ready), for the functions that read one model: in the host's
// server, or its upstream's when it has one.
func serverModel(c *C.struct_thost_host, fn string, name *C.char, version C.int64_t) (*core.Server, modelRef, *C.TRITONSERVER_Error) {
	h, srv, cerr := serverOf(c, fn)
	if cerr != nil {
		return nil, modelRef{}, cerr
	}
	m, err := h.findModel(srv, C.GoString(name), int64(version))
	if err != nil {
		return nil, modelRef{}, cError(err)
	}
	return srv, m, nil
}

// modelRef is a model version the in-process API reads: one of the host's
// own server (local), or one its upstream described (up).
type modelRef struct {
	local *core.Model
	up    *UpstreamModel
}

// findModel looks version (0: the newest ready) of model name up where
// the host's in-process API finds models.
func (h *Host) findModel(srv *core.Server, name string, version int64) (modelRef, error) {
	if h.upstream != nil {
		m, err := h.upstream.Model(name, version)
		return modelRef{up: m}, err
	}
	m, err := srv.Model(name, version)
	return modelRef{local: m}, err
}

func (m modelRef) name() string {
	if m.up != nil {
		return m.up.Name
	}
	return m.local.Name()
}

func (m modelRef) version() int64 {
	if m.up != nil {
		return m.up.Version
	}
	return m.local.Version()
}

func (m modelRef) ready() bool {
	if m.up != nil {
		return m.up.Ready
	}
	return m.local.Readiness() == core.ModelReady
}

func (m modelRef) config() (*configpb.ModelConfig, error) {
	if m.up != nil {
		return m.up.Config()
	}
	return m.local.Config(), nil
}

func (m modelRef) configJSON() []byte {
	if m.up != nil {
		return m.up.ConfigJSON
	}
	return m.local.ConfigJSON()
}

// inferCall is one submission of an inference request by a backend
// (TRITONSERVER_ServerInferAsync), from its acceptance until the release
// callback has returned. The server's ResponseFunc and Finished only
// queue what they are given (they may run under the request's responder
// lock); the call's own goroutine, started at submission, calls the
// backend's response and release functions from the queue, one at a time,
// in order, holding no lock. So a callback that blocks holds only that
// goroutine (and its thread); the serving backend's sends wait for room
// in the queue (maxPending) only up to stallTimeout.
type inferCall struct {
	host    *Host
	key     uint64
	creq    *C.struct_thost_infer_request // the caller's; in flight, so not freed
	cb      *C.struct_thost_infer_call    // C memory, owned; freed at the end
	trace   *C.struct_thost_trace         // the caller's trace, the server's until the end; or nil
	model   string                        // the version serving the request
	version int64
	id      string
	cancel  context.CancelFunc

	mu       sync.Mutex
	queue    []delivery
	reserved int                                           // senders admitted, not yet queued
	room     chan struct{}                                 // closed when the queue shrinks, if someone waits
	pending  map[*core.Response]*C.struct_thost_output_set // sent, not yet delivered
	wake     chan struct{}                                 // capacity 1
}

// delivery is one entry of a call's queue.
type delivery struct {
	resp    *core.Response
	set     *C.struct_thost_output_set // the buffers of resp's outputs, if a backend wrote them
	final   bool
	release bool // the request is finished: hand it back
}

var errNoRoom = errors.New("no room")

// callerAllocator returns the allocator of the backend that submitted r, for
// the serving backend's request context; nil for other requests.
func callerAllocator(r *core.Request) *C.struct_thost_caller_alloc {
	if c, ok := r.Origin().(*inferCall); ok {
		return &c.cb.alloc
	}
	return nil
}

// submit runs a request a backend submitted; cb holds its callbacks and
// trace, if not nil, the trace to trace it with (trace.c). On success the
// call owns cb and the trace; on error nothing was submitted, and the
// caller gives the trace back.
func (h *Host) submit(srv *core.Server, creq *C.struct_thost_infer_request, cb *C.struct_thost_infer_call, trace *C.struct_thost_trace) error {
	req, err := readRequest(creq)
	if err != nil {
		return err
	}
	req.TensorLimit = h.maxTensor
	m, err := h.findModel(srv, req.Model, req.Version)
	if err != nil {
		return err
	}
	cfg, err := m.config()
	if err != nil {
		return err
	}
	name, version := m.name(), m.version()
	if err := resolveRawInput(name, cfg, req); err != nil {
		return err
	}
	if trace != nil {
		rec, ok := traceRecordOf(trace)
		if !ok || !bool(C.thost_trace_bind(trace, cstr(name), C.size_t(len(name)), C.int64_t(version),
			cstr(req.ID), C.size_t(len(req.ID)))) {
			return core.Errorf(core.CodeInternal, "request %q to model %q: out of memory tracing it", req.ID, name)
		}
		if m.local != nil {
			req.Trace = rec.tr // an upstream traces the request itself
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := &inferCall{host: h, creq: creq, cb: cb, trace: trace, model: name, version: version, id: req.ID, cancel: cancel,
		pending: map[*core.Response]*C.struct_thost_output_set{}, wake: make(chan struct{}, 1)}
	c.key = h.calls.add(c)
	storeCallKey(creq, c.key) // from here Cancel reaches the call
	req.Origin = c
	req.Finished = c.finished
	if m.up != nil {
		err = h.upstream.Submit(ctx, m.up, req, c.onResponse)
	} else {
		err = srv.Submit(ctx, m.local, req, c.onResponse)
	}
	if err != nil {
		storeCallKey(creq, 0)
		h.calls.take(c.key)
		cancel()
		return err
	}
	go c.run()
	return nil
}

// onResponse is the request's core.ResponseFunc: it queues the response
// with the buffers the serving backend wrote for it.
func (c *inferCall) onResponse(resp *core.Response, final bool) {
	c.mu.Lock()
	d := delivery{resp: resp, final: final}
	if resp != nil {
		d.set = c.pending[resp]
		delete(c.pending, resp)
	}
	c.queue = append(c.queue, d)
	c.mu.Unlock()
	c.signal()
}

// finished is the request's Finished: the release callback comes last.
func (c *inferCall) finished() {
	c.mu.Lock()
	c.queue = append(c.queue, delivery{release: true})
	c.mu.Unlock()
	c.signal()
}

func (c *inferCall) signal() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// run delivers the queue until the request is handed back.
func (c *inferCall) run() {
	for range c.wake {
		for {
			c.mu.Lock()
			if len(c.queue) == 0 {
				c.mu.Unlock()
				break
			}
			d := c.queue[0]
			c.queue[0] = delivery{}
			c.queue = c.queue[1:]
			if c.room != nil {
				close(c.room)
				c.room = nil
			}
			c.mu.Unlock()
			if d.release {
				c.end()
				return
			}
			c.deliver(d)
		}
	}
}

// admit waits, for a serving backend about to send a response that is not
// final, until the queue has room, or stallTimeout passes: then the request
// is cancelled and the send fails. A final response is always admitted.
// Each admission is undone by leave once the send returned.
func (c *inferCall) admit(final bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if final {
		c.reserved++
		return nil
	}
	var timer *time.Timer
	for len(c.queue)+c.reserved >= c.host.maxPending {
		if timer == nil {
			timer = time.NewTimer(c.host.stallTimeout)
			defer timer.Stop()
		}
		if c.room == nil {
			c.room = make(chan struct{})
		}
		room := c.room
		c.mu.Unlock()
		select {
		case <-room:
			c.mu.Lock()
		case <-timer.C:
			c.mu.Lock()
			c.cancel()
			return errNoRoom
		}
	}
	c.reserved++
	return nil
}

func (c *inferCall) leave() {
	c.mu.Lock()
	c.reserved--
	c.mu.Unlock()
}

// send is TRITONBACKEND_ResponseSend for a response of this request: its
// outputs' buffers, which came from the caller's allocator, are taken out
// of the C response and kept until the response is delivered; the server
// sees the outputs without their data.
func (c *inferCall) send(p *core.Responder, resp *C.struct_thost_response, final bool, cerr *C.TRITONSERVER_Error) *C.TRITONSERVER_Error {
	if err := c.admit(final); err != nil {
		return cErrorf(core.CodeUnavailable, "TRITONBACKEND_ResponseSend: the caller of request %q to model %q "+
			"has not taken its last %d responses within %v; the request is cancelled",
			c.id, c.model, c.host.maxPending, c.host.stallTimeout)
	}
	defer c.leave()
	var r *core.Response
	var set *C.struct_thost_output_set
	switch {
	case cerr != nil:
		r = &core.Response{Err: core.Errorf(core.Code(cerr.code), "%s", errorMessage(cerr))}
	default:
		r = describeResponse(resp)
		if resp.output_count > 0 {
			if set = C.thost_output_set_take(resp); set == nil {
				r = &core.Response{Err: core.Errorf(core.CodeInternal, "out of memory taking the outputs of a response")}
			}
		}
	}
	kept := false
	if set != nil {
		c.mu.Lock()
		if c.pending != nil { // nil once the call ended
			c.pending[r] = set
			kept = true
		}
		c.mu.Unlock()
	}
	err := p.Send(r, final)
	switch {
	case set == nil:
	case !kept: // the call had ended, so Send refused r: nobody else has the buffers
		C.thost_output_set_free(set)
	case err != nil: // refused, never to be delivered, unless end already released it
		c.mu.Lock()
		_, still := c.pending[r]
		delete(c.pending, r)
		c.mu.Unlock()
		if still {
			C.thost_output_set_free(set)
		}
	}
	return cError(err)
}

// describeResponse returns the outputs (without data) and parameters of a
// serving backend's response.
func describeResponse(resp *C.struct_thost_response) *core.Response {
	r := &core.Response{}
	if n := int(resp.output_count); n > 0 {
		r.Outputs = make([]core.Output, n)
		for i, o := range unsafe.Slice(resp.outputs, n) {
			r.Outputs[i] = core.Output{Name: C.GoString(o.name), DataType: core.DataType(o.datatype),
				Shape: append([]int64(nil), unsafe.Slice((*int64)(unsafe.Pointer(o.shape)), int(o.dims_count))...)}
		}
	}
	r.Parameters = convertParameters(resp)
	return r
}

// end hands the request back: what was never delivered is released, the
// request leaves flight and the release callback runs.
func (c *inferCall) end() {
	defer recoverLog("TRITONSERVER_InferenceRequestReleaseFn_t")
	c.mu.Lock()
	left := c.pending
	c.pending = nil
	c.mu.Unlock()
	for _, set := range left {
		C.thost_output_set_free(set)
	}
	c.cancel()
	c.host.calls.take(c.key)
	if c.trace != nil {
		endTrace(c.trace, c.creq)
	}
	cb := c.cb
	C.thost_infer_request_landed(c.creq)
	C.thost_infer_call_release(cb)
	C.free(unsafe.Pointer(cb))
}

func storeCallKey(creq *C.struct_thost_infer_request, key uint64) {
	C.thost_infer_request_set_call(creq, C.uint64_t(key))
}
