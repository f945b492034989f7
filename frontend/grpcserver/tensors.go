package grpcserver

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"

	"tritonhost/core"
	pb "tritonhost/frontend/inferencepb"
	"tritonhost/frontend/protocol"
)

// requestOptions are what the frontend itself takes from a request.
type requestOptions = protocol.Options

// resolve turns a received request into what core takes, in an order that
// spends nothing on a request that will be refused: it decodes the header
// and the parameters, looks the model version up (once per request),
// checks typed contents against the request's shapes and the model's
// inputs, and only then converts them.
func (s *Service) resolve(req *pb.ModelInferRequest) (*core.Model, *core.InferenceRequest, requestOptions, error) {
	ir, opts, err := decodeRequest(req)
	if err != nil {
		return nil, nil, opts, err
	}
	m, err := s.core.Model(ir.Model, ir.Version)
	if err != nil {
		return nil, nil, opts, err
	}
	if err := convertContents(m, req, ir); err != nil {
		return nil, nil, opts, err
	}
	return m, ir, opts, nil
}

// decodeRequest turns a ModelInferRequest into a core request. Input
// contents are not copied when they come as raw_input_contents (the
// request message must stay alive until the request completes); typed
// contents are left for convertContents.
func decodeRequest(req *pb.ModelInferRequest) (*core.InferenceRequest, requestOptions, error) {
	var opts requestOptions
	bad := func(format string, args ...any) error {
		return core.Errorf(core.CodeInvalidArg, "model %q: %s", req.GetModelName(), fmt.Sprintf(format, args...))
	}
	if req.GetModelName() == "" {
		return nil, opts, core.Errorf(core.CodeInvalidArg, "model_name is required")
	}
	ir := &core.InferenceRequest{Model: req.GetModelName(), ID: req.GetId()}
	if v := req.GetModelVersion(); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 {
			return nil, opts, bad("model_version %q is not a positive integer", v)
		}
		ir.Version = n
	}
	for name, p := range req.GetParameters() {
		if err := applyParameter(ir, &opts, name, p); err != nil {
			return nil, opts, bad("parameter %q: %v", name, err)
		}
	}
	raw := req.GetRawInputContents()
	if len(raw) > 0 && len(raw) != len(req.GetInputs()) {
		return nil, opts, bad("raw_input_contents has %d entries for %d inputs; give one per input, in input order, or none", len(raw), len(req.GetInputs()))
	}
	ir.Inputs = make([]core.Input, len(req.GetInputs()))
	for i, in := range req.GetInputs() {
		dt := core.ParseDataType(in.GetDatatype())
		if dt == core.TypeInvalid {
			return nil, opts, bad("input %q: unknown datatype %q", in.GetName(), in.GetDatatype())
		}
		if _, ok := in.GetParameters()["shared_memory_region"]; ok {
			return nil, opts, core.Errorf(core.CodeUnsupported, "model %q: input %q: shared-memory inputs are not supported by this server", req.GetModelName(), in.GetName())
		}
		var data []byte
		switch {
		case len(raw) > 0:
			if hasContents(in.GetContents()) {
				return nil, opts, bad("input %q has both contents and raw_input_contents", in.GetName())
			}
			data = raw[i]
		}
		ir.Inputs[i] = core.NewInput(in.GetName(), dt, in.GetShape(), data)
	}
	for _, out := range req.GetOutputs() {
		params := out.GetParameters()
		if _, ok := params["classification"]; ok {
			return nil, opts, core.Errorf(core.CodeUnsupported, "model %q: output %q: the classification extension is not supported by this server", req.GetModelName(), out.GetName())
		}
		if _, ok := params["shared_memory_region"]; ok {
			return nil, opts, core.Errorf(core.CodeUnsupported, "model %q: output %q: shared-memory outputs are not supported by this server", req.GetModelName(), out.GetName())
		}
		ir.Outputs = append(ir.Outputs, out.GetName())
	}
	return ir, opts, nil
}

func applyParameter(ir *core.InferenceRequest, opts *requestOptions, name string, p *pb.InferParameter) error {
	var v protocol.Value
	switch c := p.GetParameterChoice().(type) {
	case *pb.InferParameter_BoolParam:
		v = protocol.Value{Kind: protocol.KindBool, Bool: c.BoolParam}
	case *pb.InferParameter_Int64Param:
		v = protocol.Value{Kind: protocol.KindInt, Int: c.Int64Param}
	case *pb.InferParameter_Uint64Param:
		v = protocol.Value{Kind: protocol.KindUint, Uint: c.Uint64Param}
	case *pb.InferParameter_StringParam:
		v = protocol.Value{Kind: protocol.KindString, String: c.StringParam}
	case *pb.InferParameter_DoubleParam:
		v = protocol.Value{Kind: protocol.KindDouble, Double: c.DoubleParam}
	}
	return protocol.ApplyParameter(ir, opts, name, v)
}

// convertContents converts the typed contents of ir's inputs to their
// little-endian bytes, once the request's model version m is known. An
// input the model does not take as given (unknown name, other data type)
// is left empty for core's validation to refuse with its own words; one
// whose number of values does not match its shape is refused here, before
// anything is allocated for it.
func convertContents(m *core.Model, req *pb.ModelInferRequest, ir *core.InferenceRequest) error {
	if len(req.GetRawInputContents()) > 0 {
		return nil
	}
	for i, in := range req.GetInputs() {
		c := in.GetContents()
		if c == nil {
			continue
		}
		dt := ir.Inputs[i].DataType
		want := core.ElementCount(in.GetShape())
		if !protocol.TakesInput(m, in.GetName(), dt) || want < 0 {
			continue
		}
		n := int64(countContents(c))
		if dt != core.TypeBytes && want != n {
			return core.Errorf(core.CodeInvalidArg, "model %q: input %q: %d values in contents for shape %v, which holds %d",
				req.GetModelName(), in.GetName(), n, in.GetShape(), want)
		}
		data, err := contentsBytes(dt, c)
		if err != nil {
			return core.Errorf(core.CodeInvalidArg, "model %q: input %q: %v", req.GetModelName(), in.GetName(), err)
		}
		ir.Inputs[i].Buffers = [][]byte{data}
	}
	return nil
}

func hasContents(c *pb.InferTensorContents) bool {
	return c != nil && (len(c.BoolContents) > 0 || len(c.IntContents) > 0 || len(c.Int64Contents) > 0 ||
		len(c.UintContents) > 0 || len(c.Uint64Contents) > 0 || len(c.Fp32Contents) > 0 ||
		len(c.Fp64Contents) > 0 || len(c.BytesContents) > 0)
}

// contentsBytes converts typed contents to the tensor's little-endian bytes.
// Each data type reads exactly one contents field, as the protocol says.
func contentsBytes(dt core.DataType, c *pb.InferTensorContents) ([]byte, error) {
	var field string
	var n int
	switch dt {
	case core.TypeBool:
		field, n = "bool_contents", len(c.BoolContents)
	case core.TypeInt8, core.TypeInt16, core.TypeInt32:
		field, n = "int_contents", len(c.IntContents)
	case core.TypeInt64:
		field, n = "int64_contents", len(c.Int64Contents)
	case core.TypeUint8, core.TypeUint16, core.TypeUint32:
		field, n = "uint_contents", len(c.UintContents)
	case core.TypeUint64:
		field, n = "uint64_contents", len(c.Uint64Contents)
	case core.TypeFP32:
		field, n = "fp32_contents", len(c.Fp32Contents)
	case core.TypeFP64:
		field, n = "fp64_contents", len(c.Fp64Contents)
	case core.TypeBytes:
		field, n = "bytes_contents", len(c.BytesContents)
	default:
		return nil, fmt.Errorf("%s tensors have no typed contents; send them in raw_input_contents", dt)
	}
	if total := countContents(c); total != n {
		return nil, fmt.Errorf("a %s tensor takes its values from %s only", dt, field)
	}
	if dt == core.TypeBytes {
		return core.EncodeBytes(c.BytesContents...), nil
	}
	size := dt.ByteSize()
	out := make([]byte, n*size)
	for i := range n {
		b := out[i*size:]
		switch dt {
		case core.TypeBool:
			if c.BoolContents[i] {
				b[0] = 1
			}
		case core.TypeInt8:
			b[0] = byte(int8(c.IntContents[i]))
		case core.TypeInt16:
			binary.LittleEndian.PutUint16(b, uint16(int16(c.IntContents[i])))
		case core.TypeInt32:
			binary.LittleEndian.PutUint32(b, uint32(c.IntContents[i]))
		case core.TypeInt64:
			binary.LittleEndian.PutUint64(b, uint64(c.Int64Contents[i]))
		case core.TypeUint8:
			b[0] = byte(c.UintContents[i])
		case core.TypeUint16:
			binary.LittleEndian.PutUint16(b, uint16(c.UintContents[i]))
		case core.TypeUint32:
			binary.LittleEndian.PutUint32(b, c.UintContents[i])
		case core.TypeUint64:
			binary.LittleEndian.PutUint64(b, c.Uint64Contents[i])
		case core.TypeFP32:
			binary.LittleEndian.PutUint32(b, math.Float32bits(c.Fp32Contents[i]))
		case core.TypeFP64:
			binary.LittleEndian.PutUint64(b, math.Float64bits(c.Fp64Contents[i]))
		}
	}
	return out, nil
}

func countContents(c *pb.InferTensorContents) int {
	return len(c.BoolContents) + len(c.IntContents) + len(c.Int64Contents) + len(c.UintContents) +
		len(c.Uint64Contents) + len(c.Fp32Contents) + len(c.Fp64Contents) + len(c.BytesContents)
}

// responseMessage renders a core response as a ModelInferResponse struct
// (for Go callers of Service.ModelInfer; the RPC path encodes directly, see
// wire.go). Output contents go to raw_output_contents in output order,
// sharing the response's memory.
func responseMessage(h responseHeader, r *core.Response) *pb.ModelInferResponse {
	out := &pb.ModelInferResponse{ModelName: h.model, ModelVersion: h.version, Id: h.id}
	if len(r.Outputs) > 0 {
		tensors := make([]pb.ModelInferResponse_InferOutputTensor, len(r.Outputs))
		out.Outputs = make([]*pb.ModelInferResponse_InferOutputTensor, len(r.Outputs))
		out.RawOutputContents = make([][]byte, len(r.Outputs))
		for i, o := range r.Outputs {
			t := &tensors[i]
			t.Name, t.Datatype, t.Shape = o.Name, o.DataType.String(), o.Shape
			out.Outputs[i] = t
			out.RawOutputContents[i] = o.Data
		}
	}
	if len(r.Parameters) > 0 {
		out.Parameters = make(map[string]*pb.InferParameter, len(r.Parameters)+1)
		for _, p := range r.Parameters {
			out.Parameters[p.Name] = encodeParameter(p)
		}
	}
	return out
}

func encodeParameter(p core.Parameter) *pb.InferParameter {
	switch p.Type {
	case core.ParamInt:
		return &pb.InferParameter{ParameterChoice: &pb.InferParameter_Int64Param{Int64Param: p.Int}}
	case core.ParamBool:
		return &pb.InferParameter{ParameterChoice: &pb.InferParameter_BoolParam{BoolParam: p.Bool}}
	case core.ParamDouble:
		return &pb.InferParameter{ParameterChoice: &pb.InferParameter_DoubleParam{DoubleParam: p.Double}}
	case core.ParamBytes:
		return &pb.InferParameter{ParameterChoice: &pb.InferParameter_StringParam{StringParam: string(p.Bytes)}}
	}
	return &pb.InferParameter{ParameterChoice: &pb.InferParameter_StringParam{StringParam: p.String}}
}
