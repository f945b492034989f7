package coretest

import (
	"encoding/binary"
	"slices"
	"strings"

	"github.com/tritonhost/tritonhost/core"
)

// OutputName is the output an input is echoed to: INPUT<x> goes to
// OUTPUT<x> (as Triton's identity backend does); other names are kept.
func OutputName(input string) string {
	if rest, ok := strings.CutPrefix(input, "INPUT"); ok {
		return "OUTPUT" + rest
	}
	return input
}

// EchoResponse returns a response echoing the request's inputs: each input
// whose OutputName the model declares (every input when it declares no
// output) becomes that output, with the input's type, backend-visible shape
// and a copy of its contents. Outputs the client did not ask for are left
// to the server to drop.
func EchoResponse(r *core.Request) *core.Response {
	declared := map[string]bool{}
	for _, o := range r.Model().Config().GetOutput() {
		declared[o.GetName()] = true
	}
	resp := &core.Response{}
	for _, in := range r.Inputs() {
		name := OutputName(in.Name)
		if len(declared) > 0 && !declared[name] {
			continue
		}
		resp.Outputs = append(resp.Outputs, core.Output{Name: name, DataType: in.DataType, Shape: slices.Clone(in.Shape), Data: slices.Concat(in.Buffers...)})
	}
	return resp
}

// Request returns an inference request for the newest version of model.
func Request(model, id string, inputs ...core.Input) *core.Submission {
	return &core.Submission{Model: model, ID: id, Inputs: inputs}
}

// Int32Input returns an INT32 input of the given shape holding values, or
// zeros when no values are given.
func Int32Input(name string, shape []int64, values ...int32) core.Input {
	if len(values) == 0 {
		values = make([]int32, max(core.ElementCount(shape), 0))
	}
	data := make([]byte, 0, 4*len(values))
	for _, v := range values {
		data = binary.LittleEndian.AppendUint32(data, uint32(v))
	}
	return core.NewInput(name, core.TypeInt32, shape, data)
}

// Int32s decodes little-endian INT32 contents.
func Int32s(data []byte) []int32 {
	out := make([]int32, len(data)/4)
	for i := range out {
		out[i] = int32(binary.LittleEndian.Uint32(data[4*i:]))
	}
	return out
}

// OutputOf returns the response's output called name.
func OutputOf(resp *core.Response, name string) (core.Output, bool) {
	for _, o := range resp.Outputs {
		if o.Name == name {
			return o, true
		}
	}
	return core.Output{}, false
}

// Param returns the response's parameter called name.
func Param(resp *core.Response, name string) (core.Parameter, bool) {
	for _, p := range resp.Parameters {
		if p.Name == name {
			return p, true
		}
	}
	return core.Parameter{}, false
}
