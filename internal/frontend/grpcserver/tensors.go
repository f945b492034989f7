package grpcserver

import (
	"slices"

	"github.com/tritonhost/tritonhost/core"
	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
)

// responseMessage renders a core response as a ModelInferResponse struct
// (for Go callers of Service.ModelInfer; the RPC path encodes directly, see
// wire.go). Output contents go to raw_output_contents in output order,
// sharing the response's memory, unless it is lent (core.Response.Lent):
// then they, and the shapes, are copied, and the caller frees the response.
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
			if r.Lent != nil {
				t.Shape, out.RawOutputContents[i] = slices.Clone(o.Shape), slices.Clone(o.Data)
			}
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
