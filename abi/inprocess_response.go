package abi

/*
#include "inprocess.h"
*/
import "C"

import (
	"unsafe"

	"github.com/tritonhost/tritonhost/core"
)

// responseFinal is TRITONSERVER_RESPONSE_COMPLETE_FINAL.
const responseFinal = C.uint32_t(C.TRITONSERVER_RESPONSE_COMPLETE_FINAL)

// deliver hands one queued response to the caller's response function, on
// the call's goroutine. The delivered response owns the buffers it took
// from d.set; the rest of the set (outputs the server dropped) is released
// here.
func (c *inferCall) deliver(d delivery) {
	defer recoverLog("TRITONSERVER_InferenceResponseCompleteFn_t")
	flags := C.uint32_t(0)
	if d.final {
		flags = responseFinal
	}
	var handle C.uint64_t
	if d.resp != nil {
		r := c.build(d.resp, d.set)
		if r == nil {
			c.host.log.Errorf("model %q, request %q: out of memory or handles delivering a response", c.model, c.id)
		} else {
			handle = r.handle
			if c.trace != nil {
				C.thost_trace_outputs(c.trace, r)
			}
		}
	}
	C.thost_output_set_free(d.set)
	if handle == 0 && d.resp != nil && !d.final {
		return // nothing to deliver; a final call still goes, without a response
	}
	C.thost_infer_call_respond(c.cb, handle, flags)
}

// build makes the C response the caller receives from what the server
// delivered: its error, or its outputs (the buffers a serving backend wrote
// through the caller's allocator, taken from set with the server's shapes;
// others allocated now and copied in) and parameters. nil when memory or
// handles run out.
func (c *inferCall) build(resp *core.Response, set *C.struct_thost_output_set) *C.struct_thost_infer_response {
	name := c.model
	r := C.thost_iresp_new(c.host.c, cstr(name), C.size_t(len(name)), C.int64_t(c.version),
		cstr(c.id), C.size_t(len(c.id)), C.uint32_t(len(resp.Outputs)), C.uint32_t(len(resp.Parameters)))
	if r == nil {
		return nil
	}
	if resp.Err != nil {
		setError(r, resp.Err)
		return r
	}
	started := false
	for i := range resp.Outputs {
		o := &resp.Outputs[i]
		var shape *C.int64_t
		if len(o.Shape) > 0 {
			shape = (*C.int64_t)(unsafe.Pointer(&o.Shape[0]))
		}
		if C.thost_iresp_take_output(r, set, cstr(o.Name), C.size_t(len(o.Name)), shape, C.uint32_t(len(o.Shape))) {
			continue
		}
		// A typed pointer to bytes: the data may sit in a block that also
		// holds Go pointers (a converted response keeps small outputs
		// beside its slices), which cgo's check of an unsafe.Pointer
		// argument would refuse. C copies it before returning.
		var data *C.char
		if len(o.Data) > 0 {
			data = (*C.char)(unsafe.Pointer(&o.Data[0]))
		}
		cerr := C.thost_iresp_copy_output(r, &c.cb.alloc, C.bool(!started), cstr(o.Name), C.size_t(len(o.Name)),
			C.int(o.DataType), shape, C.uint32_t(len(o.Shape)), data, C.size_t(len(o.Data)))
		started = true
		if cerr != nil { // an error response carries no outputs
			C.thost_iresp_free(r)
			return c.errorResponse(takeError(cerr))
		}
	}
	for _, p := range resp.Parameters {
		C.thost_iresp_add_param(r, cstr(p.Name), C.size_t(len(p.Name)), C.int(p.Type), cstr(p.String),
			C.size_t(len(p.String)), C.int64_t(p.Int), C.bool(p.Bool), C.double(p.Double))
	}
	return r
}

func (c *inferCall) errorResponse(err error) *C.struct_thost_infer_response {
	name := c.model
	r := C.thost_iresp_new(c.host.c, cstr(name), C.size_t(len(name)), C.int64_t(c.version),
		cstr(c.id), C.size_t(len(c.id)), 0, 0)
	if r != nil {
		setError(r, err)
	}
	return r
}

func setError(r *C.struct_thost_infer_response, err error) {
	msg := err.Error()
	C.thost_iresp_set_error(r, C.int(core.CodeOf(err)), cstr(msg), C.size_t(len(msg)))
}
