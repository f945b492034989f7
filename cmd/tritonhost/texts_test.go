package main

import (
	"encoding/json"
	"slices"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// wantStatus checks that err is a gRPC status of code with exactly the
// message want.
func wantStatus(t *testing.T, what string, err error, code codes.Code, want string) {
	t.Helper()
	if st := status.Convert(err); err == nil || st.Code() != code || st.Message() != want {
		t.Errorf("%s: %v\nwant code %v and the message %q", what, err, code, want)
	}
}

// tensor is an input of raw INT32 or FP32 zeros of shape, to be put in
// raw_input_contents.
func tensor(name, datatype string, shape ...int64) (*pb.ModelInferRequest_InferInputTensor, []byte) {
	n := int64(1)
	for _, d := range shape {
		n *= d
	}
	return &pb.ModelInferRequest_InferInputTensor{Name: name, Datatype: datatype, Shape: shape}, make([]byte, 4*n)
}

func inferRequest(model, id string, inputs ...any) *pb.ModelInferRequest {
	req := &pb.ModelInferRequest{ModelName: model, Id: id}
	for i := 0; i < len(inputs); i += 2 {
		req.Inputs = append(req.Inputs, inputs[i].(*pb.ModelInferRequest_InferInputTensor))
		req.RawInputContents = append(req.RawInputContents, inputs[i+1].([]byte))
	}
	return req
}

func pair(in *pb.ModelInferRequest_InferInputTensor, raw []byte) []any { return []any{in, raw} }

// optionalConfig is an identity model with a required and an optional
// input, for Triton's second form of the missing-input message.
const optionalConfig = `name: "optional"
backend: "identity"
max_batch_size: 0
input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ -1 ] },
        { name: "INPUT1" data_type: TYPE_INT32 dims: [ -1 ] optional: true } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ -1 ] },
         { name: "OUTPUT1" data_type: TYPE_INT32 dims: [ -1 ] } ]
`

// TestTritonsMessagesFromTheBinary: what Triton's clients and QA tests
// match, word for word, from the real server: the codes and messages of
// the refusals, over ModelInfer and a stream's error_message.
func TestTritonsMessagesFromTheBinary(t *testing.T) {
	repo := testenv.Repository(t,
		testenv.Model{Name: "square_int32", Config: testenv.ExampleConfig(t, "square_int32")},
		testenv.Model{Name: "identity_fp32", Config: testenv.ExampleConfig(t, "identity_fp32")},
		testenv.Model{Name: "simple", Config: testenv.ExampleConfig(t, "simple")},
		testenv.Model{Name: "optional", Config: optionalConfig})
	srv := startServer(t, repo)
	ctx := ctxFor(t)
	const note = "NOTE: Setting a non-zero max_batch_size in the model config requires a batch dimension to be prepended to each input shape. If you want to specify the full shape including the batch dim in your input dims config, try setting max_batch_size to zero. See the model configuration docs for more info on max_batch_size."
	contents := inferRequest("simple", "c", pair(tensor("INPUT0", "INT32", 1, 16))...)
	contents.Inputs[0].Contents = &pb.InferTensorContents{IntContents: make([]int32, 16)}
	tests := []struct {
		name string
		req  *pb.ModelInferRequest
		code codes.Code
		want string
		rpcs string // "unary", "stream" or "both": square_int32 is decoupled, so ModelInfer refuses it for that first
	}{
		{"a decoupled model", inferRequest("square_int32", "d", pair(tensor("IN", "INT32", 1))...), codes.Unimplemented,
			"ModelInfer RPC doesn't support models with decoupled transaction policy", "unary"},
		{"an unknown model", inferRequest("nope", "n"), codes.NotFound,
			"Request for unknown model: 'nope' is not found", "both"},
		{"the wrong shape", inferRequest("square_int32", "s", pair(tensor("IN", "INT32", 2))...), codes.InvalidArgument,
			"[request id: s] unexpected shape for input 'IN' for model 'square_int32'. Expected [1], got [2]. ", "stream"},
		{"the wrong shape, no id", inferRequest("square_int32", "", pair(tensor("IN", "INT32", 2))...), codes.InvalidArgument,
			"[request id: <id_unknown>] unexpected shape for input 'IN' for model 'square_int32'. Expected [1], got [2]. ", "stream"},
		{"the wrong shape for a batching model", inferRequest("simple", "b", slices.Concat(pair(tensor("INPUT0", "INT32", 2, 8)), pair(tensor("INPUT1", "INT32", 2, 8)))...),
			codes.InvalidArgument, "[request id: b] unexpected shape for input 'INPUT0' for model 'simple'. Expected [-1,16], got [2,8]. " + note, "both"},
		{"the wrong data type", inferRequest("identity_fp32", "t", pair(tensor("INPUT0", "INT32", 1, 3))...), codes.InvalidArgument,
			"[request id: t] inference input 'INPUT0' data-type is 'INT32', but model 'identity_fp32' expects 'FP32'", "both"},
		{"a missing input", inferRequest("square_int32", "m"), codes.InvalidArgument,
			"[request id: m] expected 1 inputs but got 0 inputs for model 'square_int32'. Got input(s) [], but missing required input(s) ['IN']. Please provide all required input(s).", "stream"},
		{"a missing input of a model with an optional one", inferRequest("optional", "o", pair(tensor("INPUT1", "INT32", 1))...), codes.InvalidArgument,
			"[request id: o] expected number of inputs between 1 and 2 but got 1 inputs for model 'optional'. Got input(s) ['INPUT1'], but missing required input(s) ['INPUT0']. Please provide all required input(s).", "both"},
		{"contents with raw_input_contents", contents, codes.InvalidArgument,
			"contents field must not be specified when using raw_input_contents for 'INPUT0' for model 'simple'", "both"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.rpcs != "stream" {
				_, err := srv.Client.ModelInfer(ctx, tc.req)
				wantStatus(t, "ModelInfer", err, tc.code, tc.want)
			}
			if tc.rpcs == "unary" {
				return
			}
			s, err := srv.Client.ModelStreamInfer(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer s.CloseSend()
			if err := s.Send(tc.req); err != nil {
				t.Fatal(err)
			}
			m, err := s.Recv()
			if err != nil || m.GetErrorMessage() != tc.want || m.GetInferResponse().GetId() != tc.req.GetId() {
				t.Errorf("stream: %v %v\nwant error_message %q", m, err, tc.want)
			}
		})
	}

	_, err := srv.Client.ModelMetadata(ctx, &pb.ModelMetadataRequest{Name: "nope"})
	wantStatus(t, "ModelMetadata(nope)", err, codes.NotFound, "Request for unknown model: 'nope' is not found")
	_, err = srv.Client.ModelConfig(ctx, &pb.ModelConfigRequest{Name: "nope"})
	wantStatus(t, "ModelConfig(nope)", err, codes.NotFound, "Request for unknown model: 'nope' is not found")
	if r, err := srv.Client.ModelReady(ctx, &pb.ModelReadyRequest{Name: "nope"}); err != nil || r.GetReady() {
		t.Errorf("ModelReady(nope): %v %v, want not ready without an error, as Triton answers", r, err)
	}
	_, err = srv.Client.ModelReady(ctx, &pb.ModelReadyRequest{Name: "simple", Version: "one"})
	wantStatus(t, "ModelReady with a malformed version", err, codes.InvalidArgument,
		"failed to get model version from specified version string 'one' (details: stol), version should be an integral value > 0")

	// The server is unharmed.
	good := inferRequest("simple", "g", slices.Concat(pair(tensor("INPUT0", "INT32", 1, 16)), pair(tensor("INPUT1", "INT32", 1, 16)))...)
	if _, err := srv.Client.ModelInfer(ctx, good); err != nil {
		t.Errorf("a good request after the refusals: %v", err)
	}
}

// TestServerMetadataNamesTheServerByItsID: --id names the server, Triton's
// default "triton" otherwise, and the extensions are those implemented by
// a server without GPUs (one with GPUs adds cuda_shared_memory:
// TestGPUExamplesServeOnTheRealGPU); gRPC and HTTP say the same.
func TestServerMetadataNamesTheServerByItsID(t *testing.T) {
	want := []string{"sequence", "model_repository", "model_repository(unload_dependents)", "schedule_policy", "model_configuration",
		"system_shared_memory", "binary_tensor_data", "parameters", "statistics", "trace", "logging"}
	repo := testenv.Repository(t, testenv.Model{Name: "simple", Config: testenv.ExampleConfig(t, "simple")})
	for _, tc := range []struct {
		args []string
		name string
	}{{nil, "triton"}, {[]string{"--id", "edge-7"}, "edge-7"}} {
		srv := startServer(t, repo, append(slices.Clone(withoutGPUs), tc.args...)...)
		md, err := srv.Client.ServerMetadata(ctxFor(t), &pb.ServerMetadataRequest{})
		if err != nil || md.GetName() != tc.name || !slices.Equal(md.GetExtensions(), want) || md.GetVersion() == "" {
			t.Errorf("ServerMetadata with %v: %v %v; want name %q and extensions %v", tc.args, md, err, tc.name, want)
		}
		var hmd struct {
			Name, Version string
			Extensions    []string
		}
		status, _, body := srv.httpCall(t, "GET", "/v2", nil)
		if err := json.Unmarshal(body, &hmd); err != nil || status != 200 || hmd.Name != tc.name || hmd.Version != md.GetVersion() || !slices.Equal(hmd.Extensions, want) {
			t.Errorf("GET /v2 with %v: %d %s; want name %q and extensions %v", tc.args, status, body, tc.name, want)
		}
	}
}
