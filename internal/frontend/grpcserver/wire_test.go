package grpcserver

import (
	"bytes"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/tritonhost/tritonhost/core"
	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
	"github.com/tritonhost/tritonhost/internal/protocol"
)

func boolP(v bool) *pb.InferParameter {
	return &pb.InferParameter{ParameterChoice: &pb.InferParameter_BoolParam{BoolParam: v}}
}

func TestEncodedResponsesDecodeAsProtobuf(t *testing.T) {
	large := bytes.Repeat([]byte{7}, inlineOutputBytes+1)
	mid := bytes.Repeat([]byte{5}, 2048) // copied into the message, which gRPC then counts references to
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
		msg      func(a *streamArena) *encodedMessage
		streamed bool
		want     proto.Message
	}{
		{"unary", func(a *streamArena) *encodedMessage { return encodeIn(a, h, withOutputs, noFinalParam, false, "") }, false,
			func() proto.Message {
				r := proto.Clone(full).(*pb.ModelInferResponse)
				r.Parameters = params(nil)
				return r
			}()},
		{"unary, one buffer above gRPC's pooling threshold", func(a *streamArena) *encodedMessage {
			return encodeIn(a, h, &core.Response{Outputs: []core.Output{{Name: "MID", DataType: core.TypeUint8, Shape: []int64{2048}, Data: mid}}}, noFinalParam, false, "")
		}, false,
			&pb.ModelInferResponse{ModelName: "m", ModelVersion: "3", Id: "req-1",
				Outputs:           []*pb.ModelInferResponse_InferOutputTensor{{Name: "MID", Datatype: "UINT8", Shape: []int64{2048}}},
				RawOutputContents: [][]byte{mid}}},
		{"streamed, not final", func(a *streamArena) *encodedMessage { return encodeIn(a, h, withOutputs, notFinal, true, "") }, true,
			&pb.ModelStreamInferResponse{InferResponse: func() *pb.ModelInferResponse {
				r := proto.Clone(full).(*pb.ModelInferResponse)
				r.Parameters = params(map[string]*pb.InferParameter{protocol.ParamFinalResponse: boolP(false)})
				return r
			}()}},
		{"streamed, header encoded once", func(a *streamArena) *encodedMessage {
			return encodeIn(a, h.withFields(), withOutputs, notFinal, true, "")
		}, true,
			&pb.ModelStreamInferResponse{InferResponse: func() *pb.ModelInferResponse {
				r := proto.Clone(full).(*pb.ModelInferResponse)
				r.Parameters = params(map[string]*pb.InferParameter{protocol.ParamFinalResponse: boolP(false)})
				return r
			}()}},
		{"streamed, small", func(a *streamArena) *encodedMessage {
			return encodeIn(a, h.withFields(), &core.Response{Outputs: withOutputs.Outputs[:1]}, notFinal, true, "")
		}, true,
			&pb.ModelStreamInferResponse{InferResponse: &pb.ModelInferResponse{ModelName: "m", ModelVersion: "3", Id: "req-1",
				Parameters: map[string]*pb.InferParameter{protocol.ParamFinalResponse: boolP(false)},
				Outputs:    outputs[:1], RawOutputContents: [][]byte{{4, 0, 0, 0}}}}},
		{"streamed, own bytes larger than an arena's message", func(a *streamArena) *encodedMessage {
			return encodeIn(a, h, nil, isFinal, true, strings.Repeat("e", arenaMaxMessageBytes))
		}, true,
			&pb.ModelStreamInferResponse{ErrorMessage: strings.Repeat("e", arenaMaxMessageBytes), InferResponse: &pb.ModelInferResponse{ModelName: "m", ModelVersion: "3", Id: "req-1",
				Parameters: map[string]*pb.InferParameter{protocol.ParamFinalResponse: boolP(true)}}}},
		{"empty final", func(a *streamArena) *encodedMessage { return encodeIn(a, h, nil, isFinal, true, "") }, true,
			&pb.ModelStreamInferResponse{InferResponse: &pb.ModelInferResponse{ModelName: "m", ModelVersion: "3", Id: "req-1",
				Parameters: map[string]*pb.InferParameter{protocol.ParamFinalResponse: boolP(true)}}}},
		{"error", func(a *streamArena) *encodedMessage {
			return encodeIn(a, responseHeader{model: "m"}, nil, isFinal, true, "it broke")
		}, true,
			&pb.ModelStreamInferResponse{ErrorMessage: "it broke", InferResponse: &pb.ModelInferResponse{ModelName: "m",
				Parameters: map[string]*pb.InferParameter{protocol.ParamFinalResponse: boolP(true)}}}},
	}
	for _, tc := range tests {
		for _, where := range []string{"standalone", "arena"} {
			t.Run(tc.name+", "+where, func(t *testing.T) {
				var a *streamArena
				if where == "arena" {
					a = new(streamArena)
				}
				msg := tc.msg(a)
				wire := msg.bufs.Materialize()
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
				if a == nil {
					msg.free() // a pooled message goes back to its pool
					return
				}
				if !msg.tracked {
					t.Error("a message of an arena is not tracked")
				}
				if n := a.inFlight(); n != int64(len(wire)+messageHeaderBytes) {
					t.Errorf("the arena counts %d bytes in flight, want %d", n, len(wire)+messageHeaderBytes)
				}
				msg.free()
				if n := a.inFlight(); n != 0 {
					t.Errorf("%d bytes still in flight after the message was freed", n)
				}
			})
		}
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
