package grpcserver

import (
	"fmt"
	"testing"

	"google.golang.org/grpc/mem"

	"google.golang.org/protobuf/proto"

	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
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
		if err := proto.Unmarshal(b, &want); err != nil || !proto.Equal(&want, withContents(t, in)) {
			t.Fatalf("accepted a message protobuf reads differently (%v)", err)
		}
	})
}

// withContents is the message decodeInbound accepted, with the typed
// contents it left encoded decoded by protobuf.
func withContents(t *testing.T, in *inboundRequest) *pb.ModelInferRequest {
	t.Helper()
	if len(in.contents) != len(in.msg.GetInputs()) {
		t.Fatalf("%d inputs, contents for %d", len(in.msg.GetInputs()), len(in.contents))
	}
	msg := proto.Clone(in.msg).(*pb.ModelInferRequest)
	for i, c := range in.contents {
		if c == nil {
			continue
		}
		msg.Inputs[i].Contents = new(pb.InferTensorContents)
		for _, occ := range c {
			if err := (proto.UnmarshalOptions{Merge: true}).Unmarshal(occ, msg.Inputs[i].Contents); err != nil {
				t.Fatalf("input %d: the contents decodeInbound kept do not decode: %v", i, err)
			}
		}
	}
	return msg
}

// BenchmarkDecodeRawRequest: the codec receiving a ModelInferRequest with
// one raw input, from 16 KiB buffers as gRPC's transport hands them over.
// The tensor is copied once (into the request's contiguous message) and
// the input's data is a slice of it.
func BenchmarkDecodeRawRequest(b *testing.B) {
	for _, size := range []int{1 << 10, 64 << 20} {
		msg, err := proto.Marshal(&pb.ModelInferRequest{ModelName: "identity", Id: "1",
			Inputs:           []*pb.ModelInferRequest_InferInputTensor{{Name: "INPUT0", Datatype: "UINT8", Shape: []int64{int64(size)}}},
			RawInputContents: [][]byte{make([]byte, size)}})
		if err != nil {
			b.Fatal(err)
		}
		var data mem.BufferSlice
		for rest := msg; len(rest) > 0; {
			n := min(len(rest), 16<<10)
			data = append(data, mem.SliceBuffer(rest[:n]))
			rest = rest[n:]
		}
		codec := newWireCodec(requestLimits{maxMessageBytes: 128 << 20, maxDecodedContents: 128 << 20})
		b.Run(byteSize(size), func(b *testing.B) {
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				in := new(inboundRequest)
				if err := codec.Unmarshal(data, in); err != nil || in.refused != nil || len(in.msg.GetRawInputContents()[0]) != size {
					b.Fatalf("decode: %v %v", err, in.refused)
				}
			}
		})
	}
}

func byteSize(n int) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%dMiB", n>>20)
	}
	return fmt.Sprintf("%dKiB", n>>10)
}

// TestPeekModelReadsTheLeadingNameAndVersion: peekModel finds the model's
// name and version where clients put them, first, and gives up on
// anything else (the message is then received into memory of its own).
func TestPeekModelReadsTheLeadingNameAndVersion(t *testing.T) {
	marshal := func(m *pb.ModelInferRequest) []byte {
		b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	full := marshal(&pb.ModelInferRequest{ModelName: "identity", ModelVersion: "3", Id: "x", RawInputContents: [][]byte{{1, 2}}})
	for _, tc := range []struct {
		name       string
		b          []byte
		model, ver string
		ok         bool
	}{
		{"name and version first", full, "identity", "3", true},
		{"name alone", marshal(&pb.ModelInferRequest{ModelName: "m", Id: "x"}), "m", "", true},
		{"cut inside the name", full[:4], "", "", false},
		{"no name", marshal(&pb.ModelInferRequest{Id: "x"}), "", "", false},
		{"the id first", append(marshal(&pb.ModelInferRequest{Id: "x"}), marshal(&pb.ModelInferRequest{ModelName: "m"})...), "", "", false},
		{"empty", nil, "", "", false},
		{"not protobuf", []byte{0xff, 0xff, 0xff}, "", "", false},
	} {
		model, ver, ok := peekModel(tc.b)
		if model != tc.model || ver != tc.ver || ok != tc.ok {
			t.Errorf("%s: %q %q %v, want %q %q %v", tc.name, model, ver, ok, tc.model, tc.ver, tc.ok)
		}
	}
}
