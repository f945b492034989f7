package abi

/*
#include "inprocess.h"
*/
import "C"

import (
	"encoding/binary"
	"math"
	"time"
	"unsafe"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/configpb"
)

// readRequest turns a backend's inference request into a core request. Ids,
// names, shapes and parameters are copied; the input buffers are not: they
// are the caller's memory (C memory, so Go may hold slices of it), valid
// until the release callback, as the API requires. Host-policy buffers are
// left out (every instance runs with the default buffers); an input that
// has only those is refused.
func readRequest(r *C.struct_thost_infer_request) (*core.Submission, error) {
	req := &core.Submission{
		Model:    C.GoString(r.model_name),
		Version:  int64(r.model_version),
		ID:       C.GoString(r.id),
		Flags:    uint32(r.flags),
		Priority: uint64(r.priority),
		Timeout:  microseconds(uint64(r.timeout_us)),
	}
	if r.correlation_id_string != nil {
		req.CorrelationID = core.CorrelationID{String: C.GoString(r.correlation_id_string), IsString: true}
	} else {
		req.CorrelationID = core.CorrelationID{Uint: uint64(r.correlation_id)}
	}
	for _, in := range unsafe.Slice(r.inputs, int(r.input_count)) {
		input := core.Input{Name: C.GoString(in.name), DataType: core.DataType(in.datatype),
			Shape: append([]int64{}, unsafe.Slice((*int64)(unsafe.Pointer(in.shape)), int(in.dims_count))...)}
		policyOnly := ""
		for _, b := range unsafe.Slice(in.buffers, int(in.buffer_count)) {
			if b.host_policy != nil {
				policyOnly = C.GoString(b.host_policy)
				continue
			}
			input.Buffers = append(input.Buffers, unsafe.Slice((*byte)(b.base), int(b.byte_size)))
		}
		if input.Buffers == nil && policyOnly != "" {
			return nil, core.Errorf(core.CodeInvalidArg, "input '%s' of request %q has data only for host policy %q; "+
				"add its data with TRITONSERVER_InferenceRequestAppendInputData as well", input.Name, req.ID, policyOnly)
		}
		if in.raw {
			input.DataType = core.TypeInvalid // resolveRawInput fills in name, type and shape
			input.Shape = nil
		}
		req.Inputs = append(req.Inputs, input)
	}
	for _, o := range unsafe.Slice(r.outputs, int(r.output_count)) {
		req.Outputs = append(req.Outputs, C.GoString(o))
	}
	for _, p := range unsafe.Slice(r.params, int(r.param_count)) {
		req.Parameters = append(req.Parameters, goParameter(p.name, p._type, p.s, p.i, p.b, p.d))
	}
	return req, nil
}

func microseconds(us uint64) time.Duration {
	if us > math.MaxInt64/uint64(time.Microsecond) {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(us) * time.Microsecond
}

// resolveRawInput gives a raw input (TRITONSERVER_InferenceRequestAddRawInput)
// the name and data type of the model's one input, and the shape its dims
// and the data's size imply, as Triton does: a batching model gets a batch
// of 1, at most one dimension may be -1, and a BYTES input must be a single
// element, whose data gets its 4-byte length put in front.
func resolveRawInput(model string, cfg *configpb.ModelConfig, req *core.Submission) error {
	if len(req.Inputs) != 1 || req.Inputs[0].DataType != core.TypeInvalid {
		return nil
	}
	in := &req.Inputs[0]
	if n := len(cfg.GetInput()); n != 1 {
		return core.Errorf(core.CodeInvalidArg, "[request id: %s] raw request must only have 1 input (found 1) to be "+
			"deduced but got %d inputs in '%s' model configuration", req.ID, n, model)
	}
	ci := cfg.GetInput()[0]
	dt := core.DataType(ci.GetDataType())
	var shape []int64
	if cfg.GetMaxBatchSize() != 0 {
		shape = append(shape, 1)
	}
	dynamic, elems := -1, int64(1)
	for _, d := range ci.GetDims() {
		if d == -1 {
			if dynamic >= 0 {
				return core.Errorf(core.CodeInvalidArg, "[request id: %s] the shape of the raw input '%s' can not be "+
					"deduced because there are more than one variable-sized dimension", req.ID, ci.GetName())
			}
			dynamic = len(shape)
		} else {
			elems *= d
		}
		shape = append(shape, d)
	}
	size := int64(in.ByteSize())
	switch {
	case dt == core.TypeBytes:
		if dynamic >= 0 || elems != 1 {
			return core.Errorf(core.CodeInvalidArg, "[request id: %s] for BYTE datatype raw input '%s', the model "+
				"must have input shape [1]", req.ID, ci.GetName())
		}
		length := binary.LittleEndian.AppendUint32(nil, uint32(min(size, math.MaxUint32)))
		in.Buffers = append([][]byte{length}, in.Buffers...)
	case dynamic >= 0 && elems > 0 && dt.ByteSize() > 0:
		shape[dynamic] = size / elems / int64(dt.ByteSize())
	}
	in.Name, in.DataType, in.Shape = ci.GetName(), dt, shape
	return nil
}
