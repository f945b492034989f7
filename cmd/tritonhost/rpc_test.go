package main

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	rpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"

	"tritonhost/client"
	pb "tritonhost/frontend/inferencepb"
	"tritonhost/internal/testenv"
)

func TestBadRequestsGetTheRightStatus(t *testing.T) {
	srv := startServer(t, "")
	ctx := ctxFor(t)
	tests := []struct {
		name string
		req  *pb.ModelInferRequest
		code codes.Code
		want []string
	}{
		{"unknown model", &pb.ModelInferRequest{ModelName: "nope"}, codes.NotFound, []string{`"nope"`}},
		{"unknown version", &pb.ModelInferRequest{ModelName: "identity_int32", ModelVersion: "9"}, codes.NotFound, []string{`"identity_int32"`, "9"}},
		{"bad version", &pb.ModelInferRequest{ModelName: "identity_int32", ModelVersion: "one"}, codes.InvalidArgument, []string{`"one"`}},
		{"unknown datatype", &pb.ModelInferRequest{ModelName: "identity_int32", Inputs: []*pb.ModelInferRequest_InferInputTensor{
			{Name: "INPUT0", Datatype: "INT33", Shape: []int64{1}}}}, codes.InvalidArgument, []string{`"INPUT0"`, "INT33"}},
		{"wrong datatype", &pb.ModelInferRequest{ModelName: "identity_int32", Inputs: []*pb.ModelInferRequest_InferInputTensor{
			{Name: "INPUT0", Datatype: "FP32", Shape: []int64{1}}}, RawInputContents: [][]byte{{0, 0, 0, 0}}}, codes.InvalidArgument,
			[]string{`"identity_int32"`, `"INPUT0"`, "FP32"}},
		{"short contents", &pb.ModelInferRequest{ModelName: "identity_int32", Inputs: []*pb.ModelInferRequest_InferInputTensor{
			{Name: "INPUT0", Datatype: "INT32", Shape: []int64{2}}}, RawInputContents: [][]byte{{1, 0, 0, 0}}}, codes.InvalidArgument,
			[]string{`"INPUT0"`, "4 bytes", "needs 8"}},
		{"raw count mismatch", &pb.ModelInferRequest{ModelName: "identity_int32", Inputs: []*pb.ModelInferRequest_InferInputTensor{
			{Name: "INPUT0", Datatype: "INT32", Shape: []int64{1}}}, RawInputContents: [][]byte{{1, 0, 0, 0}, {}}}, codes.InvalidArgument,
			[]string{"raw_input_contents"}},
		{"wrong contents field", &pb.ModelInferRequest{ModelName: "identity_int32", Inputs: []*pb.ModelInferRequest_InferInputTensor{
			{Name: "INPUT0", Datatype: "INT32", Shape: []int64{1}, Contents: &pb.InferTensorContents{Fp32Contents: []float32{1}}}}},
			codes.InvalidArgument, []string{`"INPUT0"`, "int_contents"}},
		{"missing input", &pb.ModelInferRequest{ModelName: "identity_int32"}, codes.InvalidArgument, []string{`"INPUT0"`, "missing"}},
		{"reserved parameter", &pb.ModelInferRequest{ModelName: "identity_int32", Parameters: map[string]*pb.InferParameter{
			"triton_secret": {ParameterChoice: &pb.InferParameter_BoolParam{BoolParam: true}}}}, codes.InvalidArgument, []string{"triton_secret"}},
		{"shared memory input", &pb.ModelInferRequest{ModelName: "identity_int32", Inputs: []*pb.ModelInferRequest_InferInputTensor{
			{Name: "INPUT0", Datatype: "INT32", Shape: []int64{1}, Parameters: map[string]*pb.InferParameter{
				"shared_memory_region": {ParameterChoice: &pb.InferParameter_StringParam{StringParam: "r"}}}}}},
			codes.Unimplemented, []string{"shared-memory"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := srv.client.ModelInfer(ctx, tc.req)
			if status.Code(err) != tc.code {
				t.Fatalf("got %v, want %v", err, tc.code)
			}
			for _, w := range tc.want {
				if !strings.Contains(status.Convert(err).Message(), w) {
					t.Errorf("message %q does not mention %s", status.Convert(err).Message(), w)
				}
			}
		})
	}
	// The server is unharmed.
	if _, err := srv.client.ModelInfer(ctx, &pb.ModelInferRequest{ModelName: "identity_int32", Inputs: []*pb.ModelInferRequest_InferInputTensor{
		{Name: "INPUT0", Datatype: "INT32", Shape: []int64{1}}}, RawInputContents: [][]byte{{1, 0, 0, 0}}}); err != nil {
		t.Fatalf("good request after bad ones: %v", err)
	}
}

func TestLargeTensorsAndTheMessageLimit(t *testing.T) {
	bytesCfg := `name: "identity_bytes"
backend: "identity"
max_batch_size: 0
input [ { name: "INPUT0" data_type: TYPE_STRING dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_STRING dims: [ -1 ] } ]
`
	repo := testenv.Repository(t,
		testenv.Model{Name: "identity_int32", Config: testenv.ExampleConfig(t, "identity_int32")},
		testenv.Model{Name: "identity_bytes", Config: bytesCfg})
	srv := startServer(t, repo)
	ctx := ctxFor(t)

	// 64 MiB each way with the default limit.
	n := 16 << 20
	big := make([]int32, n)
	for i := range big {
		big[i] = int32(i * 7)
	}
	in := client.Int32s("INPUT0", []int64{int64(n)}, big...)
	msg, _ := client.Request{Model: "identity_int32", Inputs: []client.Tensor{in}}.Message()
	resp, err := srv.client.ModelInfer(ctx, msg, grpc.MaxCallRecvMsgSize(100<<20), grpc.MaxCallSendMsgSize(100<<20))
	if err != nil {
		t.Fatalf("64 MiB request: %v", err)
	}
	if out, _ := client.Output(resp, "OUTPUT0"); !bytes.Equal(out.Data, in.Data) {
		t.Fatal("64 MiB tensor did not round-trip")
	}

	// BYTES tensors keep their length-prefixed elements.
	words := client.Strings("INPUT0", []int64{3}, "α", "", strings.Repeat("x", 300))
	msg, _ = client.Request{Model: "identity_bytes", Inputs: []client.Tensor{words}}.Message()
	resp, err = srv.client.ModelInfer(ctx, msg)
	if err != nil {
		t.Fatal(err)
	}
	if out, _ := client.Output(resp, "OUTPUT0"); !bytes.Equal(out.Data, words.Data) || out.Datatype != "BYTES" {
		t.Errorf("BYTES round trip: %+v", out)
	}

	// A server with a 1 MiB limit refuses a 2 MiB message.
	small := startServer(t, repo, "--grpc-max-message-size", "1048576")
	msg, _ = client.Request{Model: "identity_int32", Inputs: []client.Tensor{client.Int32s("INPUT0", []int64{512 << 10}, make([]int32, 512<<10)...)}}.Message()
	_, err = small.client.ModelInfer(ctx, msg)
	if status.Code(err) != codes.ResourceExhausted {
		t.Errorf("2 MiB message to a 1 MiB server: %v, want RESOURCE_EXHAUSTED", err)
	}
}

func TestMetadataHealthAndStatistics(t *testing.T) {
	srv := startServer(t, "")
	ctx := ctxFor(t)
	if r, err := srv.client.ServerLive(ctx, &pb.ServerLiveRequest{}); err != nil || !r.GetLive() {
		t.Errorf("ServerLive: %v %v", r, err)
	}
	if r, err := srv.client.ServerReady(ctx, &pb.ServerReadyRequest{}); err != nil || !r.GetReady() {
		t.Errorf("ServerReady: %v %v", r, err)
	}
	if r, err := srv.client.ModelReady(ctx, &pb.ModelReadyRequest{Name: "square_int32", Version: "1"}); err != nil || !r.GetReady() {
		t.Errorf("ModelReady: %v %v", r, err)
	}
	if r, err := srv.client.ModelReady(ctx, &pb.ModelReadyRequest{Name: "nope"}); err != nil || r.GetReady() {
		t.Errorf("ModelReady(nope): %v %v", r, err)
	}
	md, err := srv.client.ServerMetadata(ctx, &pb.ServerMetadataRequest{})
	if err != nil || md.GetName() != "tritonhost" || !slices.Contains(md.GetExtensions(), "statistics") {
		t.Errorf("ServerMetadata: %v %v", md, err)
	}
	mm, err := srv.client.ModelMetadata(ctx, &pb.ModelMetadataRequest{Name: "identity_fp32"})
	if err != nil || mm.GetPlatform() != "identity" || !slices.Equal(mm.GetVersions(), []string{"1"}) ||
		len(mm.GetInputs()) != 1 || !slices.Equal(mm.GetInputs()[0].GetShape(), []int64{-1, -1}) || mm.GetInputs()[0].GetDatatype() != "FP32" {
		t.Errorf("ModelMetadata: %v %v", mm, err)
	}
	cfg, err := srv.client.ModelConfig(ctx, &pb.ModelConfigRequest{Name: "repeat_int32"})
	if err != nil || !cfg.GetConfig().GetModelTransactionPolicy().GetDecoupled() || len(cfg.GetConfig().GetInput()) != 3 {
		t.Errorf("ModelConfig: %v %v", cfg, err)
	}
	idx, err := srv.client.RepositoryIndex(ctx, &pb.RepositoryIndexRequest{})
	if err != nil || len(idx.GetModels()) != 7 || idx.GetModels()[0].GetState() != "READY" {
		t.Errorf("RepositoryIndex: %v %v", idx, err)
	}

	s, _ := client.OpenStream(ctx, srv.client)
	s.Send(repeatRequest("stats", false))
	s.CloseSend()
	collect(t, s)
	var repeat *pb.ModelStatistics
	waitUntil(t, "repeat's statistics", func() bool {
		st, err := srv.client.ModelStatistics(ctx, &pb.ModelStatisticsRequest{Name: "repeat_int32"})
		if err != nil {
			t.Fatal(err)
		}
		repeat = st.GetModelStats()[0]
		return repeat.GetExecutionCount() == 1
	})
	if inf := repeat.GetInferenceStats(); inf.GetSuccess().GetCount() != 1 || inf.GetComputeInfer().GetNs() < 5_000_000 || repeat.GetInferenceCount() != 1 {
		t.Errorf("repeat statistics: %v", repeat)
	}
	if _, err := srv.client.ModelStatistics(ctx, &pb.ModelStatisticsRequest{Name: "nope"}); status.Code(err) != codes.NotFound {
		t.Errorf("statistics of an unknown model: %v", err)
	}
	if _, err := srv.client.SystemSharedMemoryStatus(ctx, &pb.SystemSharedMemoryStatusRequest{}); status.Code(err) != codes.Unimplemented ||
		!strings.Contains(err.Error(), "SystemSharedMemoryStatus") {
		t.Errorf("SystemSharedMemoryStatus: %v", err)
	}
}

func TestReflectionListsTheService(t *testing.T) {
	srv := startServer(t, "")
	conn, err := grpc.NewClient(srv.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	stream, err := rpb.NewServerReflectionClient(conn).ServerReflectionInfo(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.Send(&rpb.ServerReflectionRequest{MessageRequest: &rpb.ServerReflectionRequest_ListServices{}}); err != nil {
		t.Fatal(err)
	}
	resp, err := stream.Recv()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range resp.GetListServicesResponse().GetService() {
		names = append(names, s.GetName())
	}
	if !slices.Contains(names, "inference.GRPCInferenceService") || !slices.Contains(names, "grpc.health.v1.Health") {
		t.Errorf("reflection lists %v", names)
	}
	stream.CloseSend()
}
