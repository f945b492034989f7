package abi

// This file holds the Go functions the C side of the API calls for requests
// and responses (//export). cgo allows no C definitions in the preamble of a
// file with //export, so the C code lives in the *.c files and other Go files.

/*
#include "objects.h"
*/
import "C"

import (
	"sync/atomic"
	"unsafe"

	"github.com/tritonhost/tritonhost/core"
)

// requestOf returns the held request of a request context, or an error for
// the backend calling fn.
func requestOf(ctx *C.struct_thost_reqctx, fn string) (*heldRequest, *C.TRITONSERVER_Error) {
	h := hostOf(ctx.host)
	if h == nil {
		return nil, cErrorf(core.CodeNotFound, "%s: the server of the request has stopped", fn)
	}
	st := h.requests.get(uint64(ctx.key))
	if st == nil {
		return nil, cErrorf(core.CodeNotFound, "%s: the request is no longer known to the server", fn)
	}
	return st, nil
}

// thostRequestRelease releases a request block: the statistics reported
// for the request so far (stats, the caller's list) are recorded first,
// then core releases the request. When the block held the context's last
// reference, the context ends here too (*ended): Go takes over that
// reference and does what thostRequestContextDone would, and C frees the
// block and the context without another crossing. Otherwise C frees the
// block and drops its reference as usual.
//
//export thostRequestRelease
func thostRequestRelease(blk *C.struct_thost_request, flags C.uint32_t, stats *C.struct_thost_rstat, batch *C.struct_thost_instance, ended *C.bool) (ret *C.TRITONSERVER_Error) {
	const fn = "TRITONBACKEND_RequestRelease"
	defer recoverError(fn, &ret)
	recordWaitingBatchStats(batch)
	st, cerr := requestOf(blk.ctx, fn)
	if cerr != nil {
		return cerr
	}
	st.recordStats(stats)
	// The block is taken from the request before core decides, so that a
	// rescheduled request's next execution finds none; if core refuses the
	// release, the backend keeps the request and the block goes back.
	st.mu.Lock()
	if st.block != blk {
		st.mu.Unlock()
		return cErrorf(core.CodeInvalidArg, "%s: request %q was already released", fn, st.req.ID())
	}
	st.block = nil
	st.mu.Unlock()
	if err := st.req.Release(uint32(flags)); err != nil {
		st.mu.Lock()
		st.block = blk
		st.mu.Unlock()
		return cError(err)
	}
	st.mu.Lock()
	st.pinner.Unpin()
	st.mu.Unlock()
	// Only the block's reference left: nothing else of the request is held
	// (a factory or an unsent response would hold one), and none can be
	// taken once the count is 0 (tryRef), so the context ends now.
	if atomic.CompareAndSwapInt32((*int32)(unsafe.Pointer(&blk.ctx.refs)), 1, 0) {
		if st.lib.host.requests.take(st.key) == st {
			st.end()
		}
		*ended = true
	}
	return nil
}

//export thostRequestContextDone
func thostRequestContextDone(ctx *C.struct_thost_reqctx, stats *C.struct_thost_rstat) {
	defer recoverLog("request context end")
	h := hostOf(ctx.host)
	if h == nil {
		return
	}
	st := h.requests.take(uint64(ctx.key))
	if st == nil {
		return
	}
	st.recordStats(stats)
	st.end()
}

// end lets go of the request once its context is gone: the backend holds
// nothing of it any more. st has been taken from the host's table.
func (st *heldRequest) end() {
	st.mu.Lock()
	st.dead = true
	st.mu.Unlock()
	st.lib.held.Add(-1)
	st.req.Drop()
}

// thostResponseSend delivers a sent response to its request's Responder.
// The response is Go's for the duration of the call; its handles are
// already gone. When the request's ResponseFunc frees responses, the
// response is lent (lent.go) and, unless it was freed before this returns,
// *kept is set: the lent response frees the C response later. Otherwise
// what the response holds is copied and C frees it on return.
//
//export thostResponseSend
func thostResponseSend(resp *C.struct_thost_response, flags C.uint32_t, cerr *C.TRITONSERVER_Error, stats *C.struct_thost_rstat, batch *C.struct_thost_instance, kept *C.bool) (ret *C.TRITONSERVER_Error) {
	const fn = "TRITONBACKEND_ResponseSend"
	defer recoverError(fn, &ret)
	extraProcsWake.Poke()
	recordWaitingBatchStats(batch)
	st, lookupErr := requestOf(resp.ctx, fn)
	if lookupErr != nil {
		return lookupErr
	}
	st.recordStats(stats)
	f := uint32(flags)
	if f&^core.ResponseCompleteFinal != 0 {
		return cErrorf(core.CodeInvalidArg, "%s: unknown send flags %#x", fn, f)
	}
	p := st.req.Responder()
	if call, ok := st.req.Origin().(*inferCall); ok { // a backend's request (inprocess.go)
		return call.send(p, resp, f&core.ResponseCompleteFinal != 0, cerr)
	}
	var r *core.Response
	switch {
	case cerr != nil:
		r = &core.Response{Err: core.Errorf(core.Code(cerr.code), "%s", errorMessage(cerr))}
	case p.FreesResponses() && lendable(resp):
		var l *lentResponse
		if r, l = lendResponse(resp, p, st.req.RequestedOutputs()); l != nil {
			defer func() { *kept = C.bool(l.settle()) }()
		}
	default:
		r = convertResponse(resp, p, st.req.RequestedOutputs(), st.lib.host.devices)
	}
	return cError(p.Send(r, f&core.ResponseCompleteFinal != 0))
}

//export thostSendFlags
func thostSendFlags(ctx *C.struct_thost_reqctx, flags C.uint32_t, stats *C.struct_thost_rstat, batch *C.struct_thost_instance) (ret *C.TRITONSERVER_Error) {
	const fn = "TRITONBACKEND_ResponseFactorySendFlags"
	defer recoverError(fn, &ret)
	recordWaitingBatchStats(batch)
	st, cerr := requestOf(ctx, fn)
	if cerr != nil {
		return cerr
	}
	st.recordStats(stats)
	f := uint32(flags)
	if f&^core.ResponseCompleteFinal != 0 {
		return cErrorf(core.CodeInvalidArg, "%s: unknown send flags %#x", fn, f)
	}
	if f&core.ResponseCompleteFinal == 0 {
		return nil
	}
	return cError(st.req.Responder().SendFinal())
}
