package abi

// This file holds the Go functions the C side of the API calls for requests
// and responses (//export). cgo allows no C definitions in the preamble of a
// file with //export, so the C code lives in the *.c files and other Go files.

/*
#include "handles.h"
*/
import "C"

import (
	"unsafe"

	"tritonhost/core"
)

//export thostRequestRelease
func thostRequestRelease(blk *C.TRITONBACKEND_Request, flags C.uint32_t) (ret *C.TRITONSERVER_Error) {
	defer recoverError("TRITONBACKEND_RequestRelease", &ret)
	st, ok := requests.get(uint64(blk.ctx.key))
	if !ok {
		return cErrorf(core.CodeNotFound, "TRITONBACKEND_RequestRelease: the request is no longer known to the server")
	}
	f := uint32(flags)
	if f == 0 || f&^(core.ReleaseAll|core.ReleaseReschedule) != 0 {
		return cErrorf(core.CodeInvalidArg, "TRITONBACKEND_RequestRelease: unknown release flags %#x", f)
	}
	st.mu.Lock()
	if st.block != blk {
		st.mu.Unlock()
		return cErrorf(core.CodeInvalidArg, "TRITONBACKEND_RequestRelease: request %q was already released", st.req.ID())
	}
	st.block = nil
	st.pinner.Unpin()
	st.mu.Unlock()
	if err := st.req.Release(f); err != nil {
		logger.Load().Errorf("release request %q of model %q: %v", st.req.ID(), st.req.Model().Name(), err)
	}
	return nil
}

//export thostRequestContextDone
func thostRequestContextDone(key C.uint64_t) {
	st, ok := requests.take(uint64(key))
	if !ok {
		return
	}
	st.mu.Lock()
	st.dead = true
	failed := st.executeFailed
	st.mu.Unlock()
	st.backend.live.Add(-1)
	r := st.req
	if !failed && r.Released() && !r.Responder().Done() {
		r.Responder().Fail(core.Errorf(core.CodeInternal,
			"model %q released request %q and dropped every response factory without sending a final response",
			r.Model().Name(), r.ID()))
	}
}

//export thostResponseSend
func thostResponseSend(resp *C.TRITONBACKEND_Response, flags C.uint32_t, cerr *C.TRITONSERVER_Error) (ret *C.TRITONSERVER_Error) {
	defer recoverError("TRITONBACKEND_ResponseSend", &ret)
	st, ok := requests.get(uint64(resp.ctx.key))
	if !ok {
		return cErrorf(core.CodeNotFound, "TRITONBACKEND_ResponseSend: the response's request is no longer known to the server")
	}
	f := uint32(flags)
	if f&^core.ResponseCompleteFinal != 0 {
		return cErrorf(core.CodeInvalidArg, "TRITONBACKEND_ResponseSend: unknown send flags %#x", f)
	}
	r := convertResponse(resp)
	if cerr != nil {
		r.Outputs = nil
		r.Err = core.Errorf(core.Code(cerr.code), "%s", errorMessage(cerr))
	}
	return cError(st.req.Responder().Send(r, f&core.ResponseCompleteFinal != 0))
}

//export thostSendFlags
func thostSendFlags(key C.uint64_t, flags C.uint32_t) (ret *C.TRITONSERVER_Error) {
	defer recoverError("TRITONBACKEND_ResponseFactorySendFlags", &ret)
	st, ok := requests.get(uint64(key))
	if !ok {
		return cErrorf(core.CodeNotFound, "TRITONBACKEND_ResponseFactorySendFlags: the factory's request is no longer known to the server")
	}
	f := uint32(flags)
	if f&^core.ResponseCompleteFinal != 0 {
		return cErrorf(core.CodeInvalidArg, "TRITONBACKEND_ResponseFactorySendFlags: unknown send flags %#x", f)
	}
	if f&core.ResponseCompleteFinal == 0 {
		return nil
	}
	return cError(st.req.Responder().SendFinal())
}

// convertResponse copies a C response into Go memory: the outputs' data go
// into one allocation. The C response is freed by the caller afterwards.
func convertResponse(resp *C.TRITONBACKEND_Response) *core.Response {
	n := int(resp.output_count)
	r := &core.Response{}
	if n > 0 {
		outs := unsafe.Slice(resp.outputs, n)
		total := 0
		for _, o := range outs {
			if o.has_buffer {
				total += int(o.byte_size)
			}
		}
		data := make([]byte, total)
		r.Outputs = make([]core.Output, n)
		off := 0
		for i, o := range outs {
			dims := int(o.dims_count)
			shape := make([]int64, dims)
			if dims > 0 {
				copy(shape, unsafe.Slice((*int64)(unsafe.Pointer(o.shape)), dims))
			}
			size := 0
			if o.has_buffer {
				size = int(o.byte_size)
				copy(data[off:off+size], unsafe.Slice((*byte)(o.buffer), size))
			}
			r.Outputs[i] = core.Output{
				Name:     C.GoString(o.name),
				DataType: core.DataType(o.datatype),
				Shape:    shape,
				Data:     data[off : off+size : off+size],
			}
			off += size
		}
	}
	if pc := int(resp.param_count); pc > 0 {
		r.Parameters = make([]core.Parameter, pc)
		for i, p := range unsafe.Slice(resp.params, pc) {
			param := core.Parameter{Name: C.GoString(p.name), Type: core.ParameterType(p._type)}
			switch param.Type {
			case core.ParamString:
				param.String = C.GoString(p.s)
			case core.ParamInt:
				param.Int = int64(p.i)
			case core.ParamBool:
				param.Bool = bool(p.b)
			case core.ParamDouble:
				param.Double = float64(p.d)
			}
			r.Parameters[i] = param
		}
	}
	return r
}
