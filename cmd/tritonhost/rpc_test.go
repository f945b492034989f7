package main

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	rpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"

	"github.com/tritonhost/tritonhost/client"
	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

func TestBadRequestsGetTheRightStatus(t *testing.T) {
	srv := startServer(t, "")
	ctx := ctxFor(t)
	tests := []struct {
		name string
		req  *pb.ModelInferRequest
		code codes.Code
		want string // the whole message
	}{
		{"unknown model", &pb.ModelInferRequest{ModelName: "nope"}, codes.NotFound, "Request for unknown model: 'nope' is not found"},
		{"unknown version", &pb.ModelInferRequest{ModelName: "identity_int32", ModelVersion: "9"}, codes.NotFound,
			"Request for unknown model: 'identity_int32' version 9 is not found"},
		{"bad version", &pb.ModelInferRequest{ModelName: "identity_int32", ModelVersion: "one"}, codes.InvalidArgument,
			"failed to get model version from specified version string 'one' (details: stol), version should be an integral value > 0"},
		{"unknown datatype", &pb.ModelInferRequest{ModelName: "identity_int32", Inputs: []*pb.ModelInferRequest_InferInputTensor{
			{Name: "INPUT0", Datatype: "INT33", Shape: []int64{1}}}}, codes.InvalidArgument, `model "identity_int32": input "INPUT0": unknown datatype "INT33"`},
		{"wrong datatype", &pb.ModelInferRequest{ModelName: "identity_int32", Inputs: []*pb.ModelInferRequest_InferInputTensor{
			{Name: "INPUT0", Datatype: "FP32", Shape: []int64{1}}}, RawInputContents: [][]byte{{0, 0, 0, 0}}}, codes.InvalidArgument,
			"[request id: <id_unknown>] inference input 'INPUT0' data-type is 'FP32', but model 'identity_int32' expects 'INT32'"},
		{"short contents", &pb.ModelInferRequest{ModelName: "identity_int32", Inputs: []*pb.ModelInferRequest_InferInputTensor{
			{Name: "INPUT0", Datatype: "INT32", Shape: []int64{2}}}, RawInputContents: [][]byte{{1, 0, 0, 0}}}, codes.InvalidArgument,
			"[request id: <id_unknown>] input byte size mismatch for input 'INPUT0' for model 'identity_int32'. Expected 8, got 4"},
		{"no data for an input", &pb.ModelInferRequest{ModelName: "identity_int32", Inputs: []*pb.ModelInferRequest_InferInputTensor{
			{Name: "INPUT0", Datatype: "INT32", Shape: []int64{1}}}}, codes.InvalidArgument,
			"unable to find data for input tensor 'INPUT0' for model 'identity_int32' in request."},
		{"wrong contents field", &pb.ModelInferRequest{ModelName: "identity_int32", Inputs: []*pb.ModelInferRequest_InferInputTensor{
			{Name: "INPUT0", Datatype: "INT32", Shape: []int64{1}, Contents: &pb.InferTensorContents{Fp32Contents: []float32{1}}}}},
			codes.InvalidArgument, "unexpected explicit tensor data for input tensor 'INPUT0' for model 'identity_int32' of type 'FP32', expected datatype 'INT32'"},
		{"missing input", &pb.ModelInferRequest{ModelName: "identity_int32"}, codes.InvalidArgument,
			"[request id: <id_unknown>] expected 1 inputs but got 0 inputs for model 'identity_int32'. Got input(s) [], but missing required input(s) ['INPUT0']. Please provide all required input(s)."},
		{"reserved parameter", &pb.ModelInferRequest{ModelName: "identity_int32", Parameters: map[string]*pb.InferParameter{
			"triton_secret": {ParameterChoice: &pb.InferParameter_BoolParam{BoolParam: true}}}}, codes.InvalidArgument,
			`model "identity_int32": parameter "triton_secret": parameters starting with triton_ are reserved`},
		{"shared memory input without a size", &pb.ModelInferRequest{ModelName: "identity_int32", Inputs: []*pb.ModelInferRequest_InferInputTensor{
			{Name: "INPUT0", Datatype: "INT32", Shape: []int64{1}, Parameters: map[string]*pb.InferParameter{
				"shared_memory_region": {ParameterChoice: &pb.InferParameter_StringParam{StringParam: "r"}}}}}},
			codes.InvalidArgument, "'shared_memory_byte_size' must be specified along with 'shared_memory_region' parameter for tensor 'INPUT0'"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := srv.Client.ModelInfer(ctx, tc.req)
			wantStatus(t, "ModelInfer", err, tc.code, tc.want)
		})
	}
	// Raw contents left over are not used, as in Triton.
	if _, err := srv.Client.ModelInfer(ctx, &pb.ModelInferRequest{ModelName: "identity_int32", Inputs: []*pb.ModelInferRequest_InferInputTensor{
		{Name: "INPUT0", Datatype: "INT32", Shape: []int64{1}}}, RawInputContents: [][]byte{{1, 0, 0, 0}, {2, 0, 0, 0}}}); err != nil {
		t.Errorf("an extra raw_input_contents entry: %v", err)
	}
	// The server is unharmed.
	if _, err := srv.Client.ModelInfer(ctx, &pb.ModelInferRequest{ModelName: "identity_int32", Inputs: []*pb.ModelInferRequest_InferInputTensor{
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
	// 64 MiB through a race-instrumented server and client takes a while
	// on a loaded machine: a generous deadline, not a timing assertion.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	// 64 MiB each way with the default limit.
	n := 16 << 20
	big := make([]int32, n)
	for i := range big {
		big[i] = int32(i * 7)
	}
	in := client.Int32s("INPUT0", []int64{int64(n)}, big...)
	msg, _ := client.Request{Model: "identity_int32", Inputs: []client.Tensor{in}}.Message()
	resp, err := srv.Client.ModelInfer(ctx, msg, grpc.MaxCallRecvMsgSize(100<<20), grpc.MaxCallSendMsgSize(100<<20))
	if err != nil {
		t.Fatalf("64 MiB request: %v", err)
	}
	if out, _ := client.Output(resp, "OUTPUT0"); !bytes.Equal(out.Data, in.Data) {
		t.Fatal("64 MiB tensor did not round-trip")
	}

	// BYTES tensors keep their length-prefixed elements.
	words := client.Strings("INPUT0", []int64{3}, "α", "", strings.Repeat("x", 300))
	msg, _ = client.Request{Model: "identity_bytes", Inputs: []client.Tensor{words}}.Message()
	resp, err = srv.Client.ModelInfer(ctx, msg)
	if err != nil {
		t.Fatal(err)
	}
	if out, _ := client.Output(resp, "OUTPUT0"); !bytes.Equal(out.Data, words.Data) || out.Datatype != "BYTES" {
		t.Errorf("BYTES round trip: %+v", out)
	}

	// A server with a 1 MiB limit refuses a 2 MiB message.
	small := startServer(t, repo, "--grpc-max-message-size", "1048576")
	msg, _ = client.Request{Model: "identity_int32", Inputs: []client.Tensor{client.Int32s("INPUT0", []int64{512 << 10}, make([]int32, 512<<10)...)}}.Message()
	_, err = small.Client.ModelInfer(ctx, msg)
	if status.Code(err) != codes.ResourceExhausted {
		t.Errorf("2 MiB message to a 1 MiB server: %v, want RESOURCE_EXHAUSTED", err)
	}
}

func TestMetadataHealthAndStatistics(t *testing.T) {
	srv := startServer(t, "")
	ctx := ctxFor(t)
	if r, err := srv.Client.ServerLive(ctx, &pb.ServerLiveRequest{}); err != nil || !r.GetLive() {
		t.Errorf("ServerLive: %v %v", r, err)
	}
	if r, err := srv.Client.ServerReady(ctx, &pb.ServerReadyRequest{}); err != nil || !r.GetReady() {
		t.Errorf("ServerReady: %v %v", r, err)
	}
	if r, err := srv.Client.ModelReady(ctx, &pb.ModelReadyRequest{Name: "square_int32", Version: "1"}); err != nil || !r.GetReady() {
		t.Errorf("ModelReady: %v %v", r, err)
	}
	if r, err := srv.Client.ModelReady(ctx, &pb.ModelReadyRequest{Name: "nope"}); err != nil || r.GetReady() {
		t.Errorf("ModelReady(nope): %v %v", r, err)
	}
	md, err := srv.Client.ServerMetadata(ctx, &pb.ServerMetadataRequest{})
	if err != nil || md.GetName() != "triton" || !slices.Contains(md.GetExtensions(), "statistics") {
		t.Errorf("ServerMetadata: %v %v", md, err)
	}
	mm, err := srv.Client.ModelMetadata(ctx, &pb.ModelMetadataRequest{Name: "identity_fp32"})
	if err != nil || mm.GetPlatform() != "identity" || !slices.Equal(mm.GetVersions(), []string{"1"}) ||
		len(mm.GetInputs()) != 1 || !slices.Equal(mm.GetInputs()[0].GetShape(), []int64{-1, -1}) || mm.GetInputs()[0].GetDatatype() != "FP32" {
		t.Errorf("ModelMetadata: %v %v", mm, err)
	}
	cfg, err := srv.Client.ModelConfig(ctx, &pb.ModelConfigRequest{Name: "repeat_int32"})
	if err != nil || !cfg.GetConfig().GetModelTransactionPolicy().GetDecoupled() || len(cfg.GetConfig().GetInput()) != 3 {
		t.Errorf("ModelConfig: %v %v", cfg, err)
	}
	idx, err := srv.Client.RepositoryIndex(ctx, &pb.RepositoryIndexRequest{})
	if err != nil || len(idx.GetModels()) != len(exampleTraffic) || idx.GetModels()[0].GetState() != "READY" {
		t.Errorf("RepositoryIndex: %v %v", idx, err)
	}

	s, _ := client.OpenStream(ctx, srv.Client)
	s.Send(repeatRequest("stats", false))
	s.CloseSend()
	collect(t, s)
	var repeat *pb.ModelStatistics
	testenv.WaitUntil(t, "repeat's statistics", func() bool {
		st, err := srv.Client.ModelStatistics(ctx, &pb.ModelStatisticsRequest{Name: "repeat_int32"})
		if err != nil {
			t.Fatal(err)
		}
		repeat = st.GetModelStats()[0]
		return repeat.GetExecutionCount() == 1
	})
	if inf := repeat.GetInferenceStats(); inf.GetSuccess().GetCount() != 1 || inf.GetComputeInfer().GetNs() < 5_000_000 || repeat.GetInferenceCount() != 1 {
		t.Errorf("repeat statistics: %v", repeat)
	}
	if _, err := srv.Client.ModelStatistics(ctx, &pb.ModelStatisticsRequest{Name: "nope"}); status.Code(err) != codes.NotFound {
		t.Errorf("statistics of an unknown model: %v", err)
	}
	if st, err := srv.Client.SystemSharedMemoryStatus(ctx, &pb.SystemSharedMemoryStatusRequest{}); err != nil || len(st.GetRegions()) != 0 {
		t.Errorf("SystemSharedMemoryStatus: %v %v", st, err)
	}
}

func TestReflectionListsTheService(t *testing.T) {
	srv := startServer(t, "")
	conn, err := grpc.NewClient(srv.Addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
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
