package abi

/*
#include "objects.h"
*/
import "C"

import (
	"errors"
	"math"
	"slices"
	"unsafe"

	"github.com/tritonhost/tritonhost/core"
)

// responseBlock holds a converted response with room for the common case
// (two outputs, eight dimensions, 64 bytes of data) in one allocation.
type responseBlock struct {
	resp    core.Response
	outputs [2]core.Output
	shapes  [8]int64
	data    [64]byte
}

// convertResponse copies a C response into Go memory, for a ResponseFunc
// that does not free responses (lent.go lends them to one that does); the
// C response is freed by the caller afterwards. Outputs the client did not request are
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
		limit := uint64(p.MaxTensorBytes()) // larger outputs are refused below, uncopied
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
	r.Parameters = convertParameters(resp)
	return r
}

// convertParameters copies the parameters of a C response into Go memory
// (nil when it has none).
func convertParameters(resp *C.struct_thost_response) []core.Parameter {
	return convertParametersInto(nil, resp)
}

// convertParametersInto is convertParameters into dst, an empty slice
// whose room is used when it holds them all.
func convertParametersInto(dst []core.Parameter, resp *C.struct_thost_response) []core.Parameter {
	pc := int(resp.param_count)
	if pc == 0 {
		return nil
	}
	if pc > cap(dst) {
		dst = make([]core.Parameter, 0, pc)
	}
	params := dst[:pc]
	cps := unsafe.Slice(resp.params, pc)
	for i := range cps {
		p := &cps[i]
		params[i] = parameterOf(parameterStringN(p.name, int(p.name_len)), p._type, p.i, p.b, p.d)
		if params[i].Type == core.ParamString {
			params[i].String = parameterStringN(p.s, int(p.s_len))
		}
	}
	return params
}

// goParameter copies a C parameter of a submitted request into Go memory;
// s, i, b or d holds the value, as typ says. A response's parameters carry
// their strings' lengths, and convertParametersInto reads them so.
func goParameter(name *C.char, typ C.TRITONSERVER_ParameterType, s *C.char, i C.int64_t, b C.bool, d C.double) core.Parameter {
	param := parameterOf(parameterString(name), typ, i, b, d)
	if param.Type == core.ParamString {
		param.String = parameterString(s)
	}
	return param
}

// parameterOf is the parameter name of type typ with i, b or d as its
// value, as typ says; a STRING's value is the caller's to set.
func parameterOf(name string, typ C.TRITONSERVER_ParameterType, i C.int64_t, b C.bool, d C.double) core.Parameter {
	param := core.Parameter{Name: name, Type: core.ParameterType(typ)}
	switch param.Type {
	case core.ParamInt:
		param.Int = int64(i)
	case core.ParamBool:
		param.Bool = bool(b)
	case core.ParamDouble:
		param.Double = float64(d)
	}
	return param
}

// parameterString returns the C string c as a Go string, interned when it
// is short (parameterStrings).
func parameterString(c *C.char) string {
	p := unsafe.Pointer(c)
	n := 0
	for *(*byte)(unsafe.Add(p, n)) != 0 {
		if n++; n > maxParameterStringBytes {
			return C.GoString(c)
		}
	}
	return parameterStringN(c, n)
}

// parameterStringN is parameterString of the n bytes at c (their
// terminating NUL not counted).
func parameterStringN(c *C.char, n int) string { return internString(unsafe.Pointer(c), n) }

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
