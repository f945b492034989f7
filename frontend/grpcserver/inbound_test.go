package grpcserver

import (
	"testing"

	"google.golang.org/protobuf/proto"

	pb "tritonhost/frontend/inferencepb"
)

// FuzzDecodeInbound: whatever bytes arrive, decoding neither panics nor
// fails (a bad message is refused, with its header when it has one), and a
// message it accepts is one protobuf decodes the same way.
func FuzzDecodeInbound(f *testing.F) {
	for _, m := range []*pb.ModelInferRequest{
		{ModelName: "m", Id: "1", Inputs: []*pb.ModelInferRequest_InferInputTensor{{Name: "IN", Datatype: "INT32", Shape: []int64{2},
			Contents: &pb.InferTensorContents{IntContents: []int32{1, 2}}}}},
		{ModelName: "m", RawInputContents: [][]byte{{1, 2, 3, 4}}, Inputs: []*pb.ModelInferRequest_InferInputTensor{{Name: "IN", Shape: []int64{1}}}},
		{ModelName: "m", Parameters: map[string]*pb.InferParameter{"p": {ParameterChoice: &pb.InferParameter_BoolParam{BoolParam: true}}}},
	} {
		b, err := proto.Marshal(m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	lim := requestLimits{maxMessageBytes: 1 << 16, maxDecodedContents: 1 << 16}
	f.Fuzz(func(t *testing.T, b []byte) {
		in := &inboundRequest{}
		if err := decodeInbound(b, in, lim); err != nil {
			t.Fatalf("decodeInbound failed: %v", err)
		}
		if in.refused != nil {
			return
		}
		var want pb.ModelInferRequest
		if err := proto.Unmarshal(b, &want); err != nil || !proto.Equal(&want, in.msg) {
			t.Fatalf("accepted a message protobuf reads differently (%v)", err)
		}
	})
}
