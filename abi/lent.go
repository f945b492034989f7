package abi

/*
#include "objects.h"
*/
import "C"

import (
	"math"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/tritonhost/tritonhost/core"
)

// A response sent to a request whose ResponseFunc frees responses
// (core.Submission.FreesResponses) is not copied into Go: the
// core.Response handed on points into the C response (output data and
// shapes), and the C response lives until the frontend frees it, normally
// once the wire has written the outputs. Names and parameters are copied
// (they are small, and Go strings must not point into C memory that goes
// away).
//
// Ownership: during thostResponseSend the C response is Go's. Free may come
// from any goroutine, before thostResponseSend returns (the frontend copied
// what it needed on the backend's thread) or after. Before: C frees the
// response when thostResponseSend returns, without another crossing. After:
// Free frees it (thost_sent_response_free). state decides which, once.

// States of a lent response.
const (
	lentSending    int32 = iota // inside thostResponseSend
	lentFreedEarly              // freed inside thostResponseSend: C frees it on return
	lentKept                    // thostResponseSend returned; Free frees it
	lentFreed                   // freed after thostResponseSend returned
)

// lentResponse is a sent C response lent to a ResponseFunc, with room for
// the common case (two outputs) in the same allocation as the
// core.Response built over it.
type lentResponse struct {
	c *C.struct_thost_response
	// state is changed with sync/atomic once the response is handed on;
	// newLentResponse sets it with a plain store, as nothing else can see
	// a response taken from the pool (an atomic store costs a fence on
	// every response).
	state   int32
	resp    core.Response
	outputs [2]core.Output
	params  [4]core.Parameter
}

var _ core.LentMemory = (*lentResponse)(nil)

// Free gives the C response back. It is called once (core.Response.Free
// clears Lent): after thostResponseSend returned, the response is then
// over, and its Go side goes back to the pool for another response.
func (l *lentResponse) Free() {
	if atomic.CompareAndSwapInt32(&l.state, lentSending, lentFreedEarly) {
		return
	}
	if atomic.CompareAndSwapInt32(&l.state, lentKept, lentFreed) {
		C.thost_sent_response_free(l.c)
		l.recycle()
	}
}

// settle ends thostResponseSend's ownership: it reports whether the
// response is still lent (C must keep it), or was freed already (C frees
// it now). A response freed already is over (core.Response.Free: nothing
// may use it after), so its Go side goes back to the pool. A response
// kept is counted as lent (LiveObjects.LentResponses) before Free can
// uncount it (thost_sent_response_free), so the count never misses a
// response that is still lent; one freed inside thostResponseSend, the
// common case, is never counted.
func (l *lentResponse) settle() bool {
	if atomic.LoadInt32(&l.state) == lentSending {
		lent := l.lentCount()
		atomic.AddInt64(lent, 1)
		if atomic.CompareAndSwapInt32(&l.state, lentSending, lentKept) {
			return true
		}
		atomic.AddInt64(lent, -1) // freed meanwhile
	}
	l.recycle()
	return false
}

// lentCount is the host's count of lent responses, which Go and C change
// atomically (C memory, for the life of the process: hosts are never
// freed).
func (l *lentResponse) lentCount() *int64 {
	return (*int64)(unsafe.Pointer(&l.c.host.live[C.THOST_COUNT_LENT]))
}

// lentResponses keeps the Go side of responses freed inside
// thostResponseSend for the next ones: a backend streaming small responses
// to a frontend that copies them allocates nothing per response.
var lentResponses = sync.Pool{New: func() any { return new(lentResponse) }}

// newLentResponse returns a lentResponse for c, from the pool.
func newLentResponse(c *C.struct_thost_response) *lentResponse {
	l := lentResponses.Get().(*lentResponse)
	l.c = c
	l.state = lentSending
	return l
}

// recycle clears l and puts it back in the pool.
func (l *lentResponse) recycle() {
	l.c = nil
	l.resp = core.Response{}
	l.outputs = [len(l.outputs)]core.Output{}
	l.params = [len(l.params)]core.Parameter{}
	lentResponses.Put(l)
}

// lendable reports whether a response can be lent: its outputs are in host
// memory the C response owns. Outputs in GPU or pinned memory from the
// server's devices are copied instead (convertResponse), as the memory
// goes back to the devices' pools.
func lendable(resp *C.struct_thost_response) bool {
	for _, o := range unsafe.Slice(resp.outputs, int(resp.output_count)) {
		// Device memory must be copied to the host for the wire; a buffer
		// of a submitting backend's allocator is handed to that backend
		// (such responses do not come here, but the allocator lives only as
		// long as the request, which a lent response outlives).
		if o.device_buffer || o.caller_buffer {
			return false
		}
	}
	return true
}

// lendResponse builds the core.Response of a C response over its memory.
// Outputs the client did not request are left out; an output larger than
// the server holds makes it an error response, and then nothing is lent
// (nil): C frees the response. Output names are taken from names (the
// request's outputs) when they match, so a response allocates no strings.
func lendResponse(resp *C.struct_thost_response, p *core.Responder, names []string) (*core.Response, *lentResponse) {
	l := newLentResponse(resp)
	r := &l.resp
	n := int(resp.output_count)
	r.Outputs = l.outputs[:0:len(l.outputs)]
	if n > len(l.outputs) {
		r.Outputs = make([]core.Output, 0, n)
	}
	for _, o := range unsafe.Slice(resp.outputs, n) {
		name := internName(names, o.name)
		if !p.Requested(name) {
			continue
		}
		var data []byte
		if o.has_buffer {
			if err := p.CheckOutputSize(name, int64(min(uint64(o.byte_size), math.MaxInt64))); err != nil {
				l.recycle()
				return &core.Response{Err: err}, nil
			}
			data = unsafe.Slice((*byte)(o.buffer), int(o.byte_size))
		}
		r.Outputs = append(r.Outputs, core.Output{
			Name:     name,
			DataType: core.DataType(o.datatype),
			Shape:    unsafe.Slice((*int64)(unsafe.Pointer(o.shape)), int(o.dims_count)),
			Data:     data,
		})
	}
	r.Parameters = convertParametersInto(l.params[:0:len(l.params)], resp)
	r.Lent = l
	return r, l
}
