package grpcserver

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/coretest"
	"github.com/tritonhost/tritonhost/core/serverlog"
	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
	"github.com/tritonhost/tritonhost/internal/sharedmem"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// fuzzConfigs are the models FuzzModelInferRequest's requests go to:
// INT32, BYTES and FP32 models that echo their inputs, one that batches,
// and a decoupled one.
var fuzzConfigs = []coretest.ModelDir{
	{Name: "echo", Config: coretest.VectorConfig("")},
	{Name: "dec", Config: coretest.VectorConfig(coretest.Decoupled)},
	{Name: "strings", Config: `backend: "go"
input [ { name: "INPUT0" data_type: TYPE_STRING dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_STRING dims: [ -1 ] } ]
`},
	{Name: "batched", Config: `backend: "go"
max_batch_size: 4
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 2 ] }, { name: "INPUT1" data_type: TYPE_BOOL dims: [ 1, 1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 2 ] }, { name: "OUTPUT1" data_type: TYPE_BOOL dims: [ 1, 1 ] } ]
`},
}

// fuzzRequests are the seeds: requests as Triton's clients send them, with
// typed contents, raw contents, parameters and shared memory, and a few
// that break a rule.
func fuzzRequests(region string) []*pb.ModelInferRequest {
	int64Param := func(v int64) *pb.InferParameter {
		return &pb.InferParameter{ParameterChoice: &pb.InferParameter_Int64Param{Int64Param: v}}
	}
	strParam := func(v string) *pb.InferParameter {
		return &pb.InferParameter{ParameterChoice: &pb.InferParameter_StringParam{StringParam: v}}
	}
	shm := func(offset, size int64) map[string]*pb.InferParameter {
		return map[string]*pb.InferParameter{"shared_memory_region": strParam(region), "shared_memory_offset": int64Param(offset),
			"shared_memory_byte_size": int64Param(size)}
	}
	vec := func(name string, shape ...int64) *pb.ModelInferRequest_InferInputTensor {
		return &pb.ModelInferRequest_InferInputTensor{Name: name, Datatype: "INT32", Shape: shape}
	}
	typed := vec("INPUT0", 3)
	typed.Contents = &pb.InferTensorContents{IntContents: []int32{1, 2, 3}}
	inShm := vec("INPUT0", 4)
	inShm.Parameters = shm(0, 16)
	strs := &pb.ModelInferRequest_InferInputTensor{Name: "INPUT0", Datatype: "BYTES", Shape: []int64{2},
		Contents: &pb.InferTensorContents{BytesContents: [][]byte{[]byte("a"), []byte("\xff\xfe")}}}
	return []*pb.ModelInferRequest{
		{ModelName: "echo", Id: "typed", Inputs: []*pb.ModelInferRequest_InferInputTensor{typed}},
		{ModelName: "echo", Inputs: []*pb.ModelInferRequest_InferInputTensor{vec("INPUT0", 2)}, RawInputContents: [][]byte{{1, 0, 0, 0, 2, 0, 0, 0}},
			Outputs: []*pb.ModelInferRequest_InferRequestedOutputTensor{{Name: "OUTPUT0"}}},
		{ModelName: "echo", Inputs: []*pb.ModelInferRequest_InferInputTensor{inShm},
			Outputs: []*pb.ModelInferRequest_InferRequestedOutputTensor{{Name: "OUTPUT0", Parameters: shm(64, 16)}}},
		{ModelName: "echo", ModelVersion: "1", Inputs: []*pb.ModelInferRequest_InferInputTensor{typed},
			Parameters: map[string]*pb.InferParameter{"sequence_id": int64Param(7), "priority": int64Param(1), "timeout": int64Param(1000),
				"custom": strParam("x")}},
		{ModelName: "strings", Inputs: []*pb.ModelInferRequest_InferInputTensor{strs}},
		{ModelName: "batched", Inputs: []*pb.ModelInferRequest_InferInputTensor{
			{Name: "INPUT0", Datatype: "FP32", Shape: []int64{1, 2}, Contents: &pb.InferTensorContents{Fp32Contents: []float32{0.5, 1e30}}},
			{Name: "INPUT1", Datatype: "BOOL", Shape: []int64{1, 1, 1}, Contents: &pb.InferTensorContents{BoolContents: []bool{true}}}}},
		{ModelName: "dec", Inputs: []*pb.ModelInferRequest_InferInputTensor{typed}},
		{ModelName: "none", Inputs: []*pb.ModelInferRequest_InferInputTensor{typed}},
		{ModelName: "echo", Inputs: []*pb.ModelInferRequest_InferInputTensor{vec("INPUT0", 4611686018427387904)}, RawInputContents: [][]byte{{1, 2, 3, 4}}},
		{ModelName: "echo", Inputs: []*pb.ModelInferRequest_InferInputTensor{typed}, RawInputContents: [][]byte{{1, 2, 3, 4}}},
	}
}

// FuzzModelInferRequest: whatever bytes arrive as a ModelInferRequest, the
// server's codec and its conversion to a core submission (the model, the
// parameters, each input's data from typed contents, raw contents or a
// shared-memory region, the outputs' regions), and the request run on an
// echo model, neither panic nor end in anything but a clean answer: a
// response that protobuf reads, or an error with a status code of
// Triton's and a message. No request leaves shared memory leased.
func FuzzModelInferRequest(f *testing.F) {
	p := coretest.NewProvider()
	srv := coretest.Serve(f, core.Options{Backends: p, Logger: serverlog.New(io.Discard)}, fuzzConfigs...)
	if !srv.Ready() {
		f.Fatalf("a model did not load: %+v", srv.RepositoryIndex())
	}
	for _, m := range []string{"echo", "dec", "strings", "batched"} {
		p.Set(m, coretest.Echo())
	}
	reg := sharedmem.New(sharedmem.Options{})
	f.Cleanup(func() { reg.Close() })
	name := fmt.Sprintf("tritonhost-grpc-fuzz-%d", os.Getpid())
	path := filepath.Join("/dev/shm", name)
	if obj, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600); err == nil {
		f.Cleanup(func() { obj.Close(); os.Remove(path) })
		if err := obj.Truncate(4096); err != nil {
			f.Fatal(err)
		}
		if err := reg.Register("r", "/"+name, 0, 4096); err != nil {
			f.Fatal(err)
		}
	}
	svc := New(srv, Options{SharedMemory: reg, MaxMessageBytes: 1 << 20})
	codec := newWireCodec(requestLimits{maxMessageBytes: 1 << 20, maxDecodedContents: 1 << 20})
	for _, m := range fuzzRequests("r") {
		b, err := proto.Marshal(m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		ctx := context.Background()
		in := &inboundRequest{}
		if err := codec.Unmarshal(mem.BufferSlice{mem.SliceBuffer(b)}, in); err != nil {
			t.Fatalf("the codec failed rather than refusing the request: %v", err)
		}
		// As a stream's request: converted, then let go.
		if in.refused != nil {
			checkStatus(t, "decoding", toStatus(in.refused))
		} else if r, err := svc.resolve(in, false, nil); err == nil {
			r.mem.Release()
		} else {
			checkStatus(t, "resolve", toStatus(err))
		}
		msg, err := svc.modelInferWire(ctx, in)
		if err != nil {
			checkStatus(t, "ModelInfer", err)
		} else {
			var resp pb.ModelInferResponse
			if err := proto.Unmarshal(msg.bufs.Materialize(), &resp); err != nil {
				t.Fatalf("a response protobuf cannot read: %v", err)
			}
			msg.free()
		}
		// A lease is released once core is done with its request, which
		// may be just after the response.
		if !testenv.Eventually(func() bool { return reg.Mapped() <= 1 }) {
			t.Fatalf("%d regions mapped, 1 registered: a request left its lease behind", reg.Mapped())
		}
	})
}

// checkStatus fails the test unless err is a gRPC status of a code Triton
// answers requests with, with a message.
func checkStatus(t *testing.T, what string, err error) {
	t.Helper()
	st, ok := status.FromError(err)
	if !ok || st.Message() == "" {
		t.Fatalf("%s: %v is not a gRPC status with a message", what, err)
	}
	switch st.Code() {
	case codes.InvalidArgument, codes.NotFound, codes.Unavailable, codes.Unimplemented, codes.ResourceExhausted, codes.Internal:
	default:
		t.Fatalf("%s: code %v (%s)", what, st.Code(), st.Message())
	}
}
