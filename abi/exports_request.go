package abi

// This file holds the Go functions the C side of the API calls for requests
// and responses (//export). cgo allows no C definitions in the preamble of a
// file with //export, so the C code lives in the *.c files and other Go files.

/*
#include "objects.h"
*/
import "C"

import (
	"errors"
	"math"
	"slices"
	"unsafe"

	"tritonhost/core"
)

// requestOf returns the held request of a request context, or an error for
// the backend calling fn.
func requestOf(ctx *C.struct_thost_reqctx, fn string) (*heldRequest, *C.TRITONSERVER_Error) {
	h := hostOf(ctx.host)
	if h == nil {
		return nil, cErrorf(core.CodeNotFound, "%s: the server of the request has stopped", fn)
	}
	st, ok := h.requests.get(uint64(ctx.key))
	if !ok {
		return nil, cErrorf(core.CodeNotFound, "%s: the request is no longer known to the server", fn)
	}
	return st, nil
}

//export thostRequestRelease
func thostRequestRelease(blk *C.struct_thost_request, flags C.uint32_t) (ret *C.TRITONSERVER_Error) {
	const fn = "TRITONBACKEND_RequestRelease"
	defer recoverError(fn, &ret)
	st, cerr := requestOf(blk.ctx, fn)
	if cerr != nil {
		return cerr
	}
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
	return nil
}

//export thostRequestContextDone
func thostRequestContextDone(ctx *C.struct_thost_reqctx, stats *C.struct_thost_rstat, nstats C.uint32_t) {
	defer recoverLog("request context end")
	h := hostOf(ctx.host)
	if h == nil {
		return
	}
	st, ok := h.requests.take(uint64(ctx.key))
	if !ok {
		return
	}
	st.recordStats(stats, nstats)
	st.mu.Lock()
	st.dead = true
	st.mu.Unlock()
	st.lib.held.Add(-1)
	st.req.Drop()
}

//export thostResponseSend
func thostResponseSend(resp *C.struct_thost_response, flags C.uint32_t, cerr *C.TRITONSERVER_Error, stats *C.struct_thost_rstat, nstats C.uint32_t) (ret *C.TRITONSERVER_Error) {
	const fn = "TRITONBACKEND_ResponseSend"
	defer recoverError(fn, &ret)
	st, lookupErr := requestOf(resp.ctx, fn)
	if lookupErr != nil {
		return lookupErr
	}
	st.recordStats(stats, nstats)
	f := uint32(flags)
	if f&^core.ResponseCompleteFinal != 0 {
		return cErrorf(core.CodeInvalidArg, "%s: unknown send flags %#x", fn, f)
	}
	p := st.req.Responder()
	if call, ok := st.req.Origin().(*inferCall); ok { // a backend's request (inprocess.go)
		return call.send(p, resp, f&core.ResponseCompleteFinal != 0, cerr)
	}
	var r *core.Response
	if cerr != nil {
		r = &core.Response{Err: core.Errorf(core.Code(cerr.code), "%s", errorMessage(cerr))}
	} else {
		r = convertResponse(resp, p, st.req.RequestedOutputs(), st.lib.host.devices)
	}
	return cError(p.Send(r, f&core.ResponseCompleteFinal != 0))
}

//export thostSendFlags
func thostSendFlags(ctx *C.struct_thost_reqctx, flags C.uint32_t, stats *C.struct_thost_rstat, nstats C.uint32_t) (ret *C.TRITONSERVER_Error) {
	const fn = "TRITONBACKEND_ResponseFactorySendFlags"
	defer recoverError(fn, &ret)
	st, cerr := requestOf(ctx, fn)
	if cerr != nil {
		return cerr
	}
	st.recordStats(stats, nstats)
	f := uint32(flags)
	if f&^core.ResponseCompleteFinal != 0 {
		return cErrorf(core.CodeInvalidArg, "%s: unknown send flags %#x", fn, f)
	}
	if f&core.ResponseCompleteFinal == 0 {
		return nil
	}
	return cError(st.req.Responder().SendFinal())
}

// responseBlock holds a converted response with room for the common case
// (two outputs, eight dimensions, 64 bytes of data) in one allocation.
type responseBlock struct {
	resp    core.Response
	outputs [2]core.Output
	shapes  [8]int64
	data    [64]byte
}

// convertResponse copies a C response into Go memory; the C response is
// freed by the caller afterwards. Outputs the client did not request are
// skipped before anything of them is copied (room is still sized for every
// output: one allocation, none when the response is small). Output names
// are taken from names (the request's outputs) when they match, so a
// response allocates no strings.
//
// GPU outputs are copied from the device through devices, here, when the
// response is sent (the wire needs host memory); pinned outputs are host
// memory and read directly.
func convertResponse(resp *C.struct_thost_response, p *core.Responder, names []string, devices Devices) *core.Response {
	blk := &responseBlock{}
	r := &blk.resp
	if n := int(resp.output_count); n > 0 {
		outs := unsafe.Slice(resp.outputs, n)
		total, dims := 0, 0
		limit := uint64(p.Model().MaxTensorBytes()) // larger outputs are refused below, uncopied
		for _, o := range outs {
			if o.has_buffer && uint64(o.byte_size) <= limit {
				total += int(o.byte_size)
			}
			dims += int(o.dims_count)
		}
		data := blk.data[:0:len(blk.data)]
		if total > len(blk.data) {
			data = make([]byte, 0, total)
		}
		shapes := blk.shapes[:0:len(blk.shapes)]
		if dims > len(blk.shapes) {
			shapes = make([]int64, 0, dims)
		}
		r.Outputs = blk.outputs[:0:len(blk.outputs)]
		if n > len(blk.outputs) {
			r.Outputs = make([]core.Output, 0, n)
		}
		for _, o := range outs {
			name := internName(names, o.name)
			if !p.Requested(name) {
				continue
			}
			if o.has_buffer {
				if err := p.CheckOutputSize(name, int64(min(uint64(o.byte_size), math.MaxInt64))); err != nil {
					return &core.Response{Err: err}
				}
			}
			start := len(shapes)
			shapes = append(shapes, unsafe.Slice((*int64)(unsafe.Pointer(o.shape)), int(o.dims_count))...)
			off := len(data)
			if o.has_buffer {
				if o.attrs.memory_type == C.TRITONSERVER_MEMORY_GPU {
					var err error
					if data, err = copyFromDevice(data, o, devices); err != nil {
						return &core.Response{Err: core.Errorf(core.CodeInternal, "output %q: %v", name, err)}
					}
				} else {
					data = append(data, unsafe.Slice((*byte)(o.buffer), int(o.byte_size))...)
				}
			}
			r.Outputs = append(r.Outputs, core.Output{
				Name:     name,
				DataType: core.DataType(o.datatype),
				Shape:    shapes[start:len(shapes):len(shapes)],
				Data:     data[off:len(data):len(data)],
			})
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

// internName returns the string of names equal to the C string c, or a new
// string when none is.
func internName(names []string, c *C.char) string {
	p := unsafe.Pointer(c)
next:
	for _, n := range names {
		for i := 0; i < len(n); i++ {
			if *(*byte)(unsafe.Add(p, i)) != n[i] {
				continue next
			}
		}
		if *(*byte)(unsafe.Add(p, len(n))) == 0 {
			return n
		}
	}
	return C.GoString(c)
}

// copyFromDevice appends the GPU buffer of o to data.
func copyFromDevice(data []byte, o *C.struct_thost_output, devices Devices) ([]byte, error) {
	if devices == nil {
		return data, errors.New("a GPU buffer on a server without GPUs")
	}
	n := int(o.byte_size)
	start := len(data)
	data = slices.Grow(data, n)[:start+n]
	return data, devices.CopyToHost(data[start:], uintptr(o.buffer), int64(o.attrs.memory_type_id))
}
