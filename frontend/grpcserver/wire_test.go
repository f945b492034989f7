package grpcserver

import (
	"bytes"
	"testing"

	"google.golang.org/protobuf/proto"

	"tritonhost/core"
	pb "tritonhost/internal/inferencepb"
	"tritonhost/internal/protocol"
)

func boolP(v bool) *pb.InferParameter {
	return &pb.InferParameter{ParameterChoice: &pb.InferParameter_BoolParam{BoolParam: v}}
}

func TestEncodedResponsesDecodeAsProtobuf(t *testing.T) {
	large := bytes.Repeat([]byte{7}, inlineOutputBytes+1)
	h := responseHeader{model: "m", version: "3", id: "req-1"}
	withOutputs := &core.Response{
		Outputs: []core.Output{
			{Name: "OUT", DataType: core.TypeInt32, Shape: []int64{1}, Data: []byte{4, 0, 0, 0}},
			{Name: "BIG", DataType: core.TypeUint8, Shape: []int64{int64(len(large))}, Data: large},
			{Name: "EMPTY", DataType: core.TypeFP32, Shape: []int64{0, 3}},
			{Name: "SCALAR", DataType: core.TypeInt64, Data: make([]byte, 8)},
		},
		Parameters: []core.Parameter{
			core.StringParam("s", "text"), core.StringParam("empty", ""), core.IntParam("i", -5),
			core.BoolParam("b", false), core.DoubleParam("d", 2.5),
		},
	}
	outputs := []*pb.ModelInferResponse_InferOutputTensor{
		{Name: "OUT", Datatype: "INT32", Shape: []int64{1}},
		{Name: "BIG", Datatype: "UINT8", Shape: []int64{int64(len(large))}},
		{Name: "EMPTY", Datatype: "FP32", Shape: []int64{0, 3}},
		{Name: "SCALAR", Datatype: "INT64"},
	}
	params := func(extra map[string]*pb.InferParameter) map[string]*pb.InferParameter {
		m := map[string]*pb.InferParameter{
			"s":     {ParameterChoice: &pb.InferParameter_StringParam{StringParam: "text"}},
			"empty": {ParameterChoice: &pb.InferParameter_StringParam{StringParam: ""}},
			"i":     {ParameterChoice: &pb.InferParameter_Int64Param{Int64Param: -5}},
			"b":     boolP(false),
			"d":     {ParameterChoice: &pb.InferParameter_DoubleParam{DoubleParam: 2.5}},
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	full := &pb.ModelInferResponse{ModelName: "m", ModelVersion: "3", Id: "req-1", Outputs: outputs,
		RawOutputContents: [][]byte{{4, 0, 0, 0}, large, {}, make([]byte, 8)}}

	tests := []struct {
		name     string
		msg      *encodedMessage
		streamed bool
		want     proto.Message
	}{
		{"unary", encodeResponse(h, withOutputs, noFinalParam, false, ""), false,
			func() proto.Message {
				r := proto.Clone(full).(*pb.ModelInferResponse)
				r.Parameters = params(nil)
				return r
			}()},
		{"streamed, not final", encodeResponse(h, withOutputs, notFinal, true, ""), true,
			&pb.ModelStreamInferResponse{InferResponse: func() *pb.ModelInferResponse {
				r := proto.Clone(full).(*pb.ModelInferResponse)
				r.Parameters = params(map[string]*pb.InferParameter{protocol.ParamFinalResponse: boolP(false)})
				return r
			}()}},
		{"streamed, header encoded once", encodeResponse(h.withFields(), withOutputs, notFinal, true, ""), true,
			&pb.ModelStreamInferResponse{InferResponse: func() *pb.ModelInferResponse {
				r := proto.Clone(full).(*pb.ModelInferResponse)
				r.Parameters = params(map[string]*pb.InferParameter{protocol.ParamFinalResponse: boolP(false)})
				return r
			}()}},
		{"empty final", encodeResponse(h, nil, isFinal, true, ""), true,
			&pb.ModelStreamInferResponse{InferResponse: &pb.ModelInferResponse{ModelName: "m", ModelVersion: "3", Id: "req-1",
				Parameters: map[string]*pb.InferParameter{protocol.ParamFinalResponse: boolP(true)}}}},
		{"error", encodeResponse(responseHeader{model: "m"}, nil, isFinal, true, "it broke"), true,
			&pb.ModelStreamInferResponse{ErrorMessage: "it broke", InferResponse: &pb.ModelInferResponse{ModelName: "m",
				Parameters: map[string]*pb.InferParameter{protocol.ParamFinalResponse: boolP(true)}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			wire := tc.msg.bufs.Materialize()
			var got proto.Message = new(pb.ModelInferResponse)
			if tc.streamed {
				got = new(pb.ModelStreamInferResponse)
			}
			if err := proto.Unmarshal(wire, got); err != nil {
				t.Fatal(err)
			}
			if !proto.Equal(got, tc.want) {
				t.Errorf("decoded\n%v\nwant\n%v", got, tc.want)
			}
			if size := proto.Size(tc.want); size != len(wire) {
				t.Errorf("encoded %d bytes, protobuf encodes %d", len(wire), size)
			}
		})
	}
	// Large outputs are referenced, not copied.
	msg := encodeResponse(h, withOutputs, noFinalParam, false, "")
	if len(msg.bufs) != 3 || &msg.bufs[1].ReadOnlyData()[0] != &large[0] {
		t.Errorf("large output was copied: %d buffers", len(msg.bufs))
	}
}

func BenchmarkEncodeStreamResponse(b *testing.B) {
	resp := &core.Response{Outputs: []core.Output{{Name: "OUT", DataType: core.TypeInt32, Shape: []int64{1}, Data: []byte{4, 0, 0, 0}}}}
	h := responseHeader{model: "square_int32", version: "1", id: "0"}.withFields() // as a stream's request
	b.ReportAllocs()
	for b.Loop() {
		encodeResponse(h, resp, notFinal, true, "")
	}
}
