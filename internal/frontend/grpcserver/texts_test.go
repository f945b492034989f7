package grpcserver_test

import (
	"slices"
	"testing"

	"google.golang.org/grpc/codes"

	"github.com/tritonhost/tritonhost/core/coretest"
	"github.com/tritonhost/tritonhost/internal/frontend/grpcserver"
	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
)

// TestServerMetadataNamesTheServerAndItsExtensions: the server's id
// (Triton's default "triton", or the one given) and the extensions the
// service implements.
func TestServerMetadataNamesTheServerAndItsExtensions(t *testing.T) {
	t.Parallel()
	want := []string{"sequence", "model_repository", "model_repository(unload_dependents)", "schedule_policy", "model_configuration",
		"system_shared_memory", "binary_tensor_data", "parameters", "statistics", "trace", "logging"}
	for _, tc := range []struct{ id, want string }{{"", "triton"}, {"edge-7", "edge-7"}} {
		h := newHarness(t, setup{service: grpcserver.Options{ServerName: tc.id, ServerVersion: "v1"}})
		md, err := h.client.ServerMetadata(t.Context(), &pb.ServerMetadataRequest{})
		if err != nil || md.GetName() != tc.want || md.GetVersion() != "v1" || !slices.Equal(md.GetExtensions(), want) {
			t.Errorf("ServerMetadata with id %q: %v %v; want name %q and extensions %v", tc.id, md, err, tc.want, want)
		}
	}
}

// TestRefusalsUseTritonsWords: requests the frontend refuses get Triton's
// code and exact message, over ModelInfer and as a stream's error_message.
func TestRefusalsUseTritonsWords(t *testing.T) {
	t.Parallel()
	h := newHarness(t, setup{}, coretest.ModelDir{Name: "echo", Config: vector("")}, coretest.ModelDir{Name: "dec", Config: vector(decoupled)})
	req := func(edit func(*pb.ModelInferRequest)) *pb.ModelInferRequest {
		r := request("echo", "r", 1)
		edit(r)
		return r
	}
	str := func(v string) *pb.InferParameter {
		return &pb.InferParameter{ParameterChoice: &pb.InferParameter_StringParam{StringParam: v}}
	}
	shm := func(params map[string]*pb.InferParameter) func(*pb.ModelInferRequest) {
		return func(r *pb.ModelInferRequest) {
			r.RawInputContents = nil
			r.Inputs[0].Parameters = params
		}
	}
	const echoShape = "[request id: r] unexpected shape for input 'INPUT0' for model 'echo'. "
	for _, tc := range []struct {
		name   string
		req    *pb.ModelInferRequest
		code   codes.Code
		want   string
		stream bool // the stream refuses it too (not the decoupled rule)
	}{
		{"a decoupled model", request("dec", "d", 1), codes.Unimplemented, "ModelInfer RPC doesn't support models with decoupled transaction policy", false},
		{"an unknown model", request("nope", "n", 1), codes.NotFound, "Request for unknown model: 'nope' is not found", true},
		{"version 0", req(func(r *pb.ModelInferRequest) { r.ModelVersion = "0" }), codes.NotFound, "Request for unknown model: 'echo' version 0 is not found", true},
		{"a negative version", req(func(r *pb.ModelInferRequest) { r.ModelVersion = "-1" }), codes.InvalidArgument,
			"invalid model version specified '-1' , version should be an integral value > 0", true},
		{"contents with raw_input_contents", req(func(r *pb.ModelInferRequest) { r.Inputs[0].Contents = &pb.InferTensorContents{IntContents: []int32{1}} }),
			codes.InvalidArgument, "contents field must not be specified when using raw_input_contents for 'INPUT0' for model 'echo'", true},
		{"empty contents with raw_input_contents", req(func(r *pb.ModelInferRequest) { r.Inputs[0].Contents = &pb.InferTensorContents{} }),
			codes.InvalidArgument, "contents field must not be specified when using raw_input_contents for 'INPUT0' for model 'echo'", true},
		{"contents of another type", req(func(r *pb.ModelInferRequest) {
			r.RawInputContents, r.Inputs[0].Contents = nil, &pb.InferTensorContents{Fp32Contents: []float32{1}}
		}), codes.InvalidArgument, "unexpected explicit tensor data for input tensor 'INPUT0' for model 'echo' of type 'FP32', expected datatype 'INT32'", true},
		{"two contents fields", req(func(r *pb.ModelInferRequest) {
			r.RawInputContents, r.Inputs[0].Contents = nil, &pb.InferTensorContents{IntContents: []int32{1}, Int64Contents: []int64{1}}
		}), codes.InvalidArgument, "unexpected explicit tensor data for input tensor 'INPUT0' for model 'echo', binary data was already supplied.", true},
		{"no data", req(func(r *pb.ModelInferRequest) { r.RawInputContents = nil }), codes.InvalidArgument,
			"unable to find data for input tensor 'INPUT0' for model 'echo' in request.", true},
		{"contents and shared memory", req(func(r *pb.ModelInferRequest) {
			shm(map[string]*pb.InferParameter{"shared_memory_region": str("r"), "shared_memory_byte_size": intParam(4)})(r)
			r.Inputs[0].Contents = &pb.InferTensorContents{IntContents: []int32{1}}
		}), codes.InvalidArgument, "unexpected 'content' provided when using shared memory for input tensor 'INPUT0' for model 'echo'", true},
		{"a region that is not a string", req(shm(map[string]*pb.InferParameter{"shared_memory_region": intParam(1)})), codes.InvalidArgument,
			"invalid value type for 'shared_memory_region' parameter for tensor 'INPUT0', expected string_param.", true},
		{"an offset without a region", req(shm(map[string]*pb.InferParameter{"shared_memory_offset": intParam(1)})), codes.InvalidArgument,
			"'shared_memory_offset' can not be specified without 'shared_memory_region' parameter for tensor 'INPUT0'", true},
		{"a size without a region", req(shm(map[string]*pb.InferParameter{"shared_memory_byte_size": intParam(1)})), codes.InvalidArgument,
			"'shared_memory_byte_size' can not be specified without 'shared_memory_region' parameter for tensor 'INPUT0'", true},
		{"an offset that is not an int64", req(shm(map[string]*pb.InferParameter{"shared_memory_region": str("r"), "shared_memory_offset": str("1")})), codes.InvalidArgument,
			"invalid value type for 'shared_memory_offset' parameter for tensor 'INPUT0', expected int64_param.", true},
		{"a size that is not an int64", req(shm(map[string]*pb.InferParameter{"shared_memory_region": str("r"), "shared_memory_byte_size": str("4")})), codes.InvalidArgument,
			"invalid value type for 'shared_memory_byte_size' parameter for tensor 'INPUT0', expected int64_param.", true},
		{"an unknown region", req(shm(map[string]*pb.InferParameter{"shared_memory_region": str("r"), "shared_memory_byte_size": intParam(4)})), codes.NotFound,
			"Unable to find shared memory region: 'r'", true},
		{"the wrong data type", req(func(r *pb.ModelInferRequest) { r.Inputs[0].Datatype = "FP32" }), codes.InvalidArgument,
			"[request id: r] inference input 'INPUT0' data-type is 'FP32', but model 'echo' expects 'INT32'", true},
		{"the wrong shape", req(func(r *pb.ModelInferRequest) { r.Inputs[0].Shape = []int64{1, 1} }), codes.InvalidArgument,
			echoShape + "Expected [-1], got [1,1]. ", true},
		{"no input", req(func(r *pb.ModelInferRequest) { r.Inputs, r.RawInputContents = nil, nil }), codes.InvalidArgument,
			"[request id: r] expected 1 inputs but got 0 inputs for model 'echo'. Got input(s) [], but missing required input(s) ['INPUT0']. Please provide all required input(s).", true},
		{"no id", req(func(r *pb.ModelInferRequest) { r.Id, r.Inputs[0].Shape = "", []int64{1, 1} }), codes.InvalidArgument,
			"[request id: <id_unknown>] unexpected shape for input 'INPUT0' for model 'echo'. Expected [-1], got [1,1]. ", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := h.client.ModelInfer(t.Context(), tc.req)
			wantStatus(t, "ModelInfer", err, tc.code, tc.want)
			if !tc.stream {
				return
			}
			st := h.open(t, true)
			st.send(tc.req)
			if m := st.recv(); m.GetErrorMessage() != tc.want || m.GetInferResponse().GetId() != tc.req.GetId() {
				t.Errorf("stream: %s\nwant error_message %q", describe(m), tc.want)
			}
		})
	}
}

// TestModelMetadataAndConfigOfAnUnknownModel: Triton's code and message.
func TestModelMetadataAndConfigOfAnUnknownModel(t *testing.T) {
	t.Parallel()
	h := newHarness(t, setup{}, coretest.ModelDir{Name: "echo", Config: vector("")})
	_, err := h.client.ModelMetadata(t.Context(), &pb.ModelMetadataRequest{Name: "nope"})
	wantStatus(t, "ModelMetadata", err, codes.NotFound, "Request for unknown model: 'nope' is not found")
	_, err = h.client.ModelConfig(t.Context(), &pb.ModelConfigRequest{Name: "nope"})
	wantStatus(t, "ModelConfig", err, codes.NotFound, "Request for unknown model: 'nope' is not found")
	_, err = h.client.ModelConfig(t.Context(), &pb.ModelConfigRequest{Name: "echo", Version: "x1"})
	wantStatus(t, "ModelConfig", err, codes.InvalidArgument,
		"failed to get model version from specified version string 'x1' (details: stol), version should be an integral value > 0")
	if r, err := h.client.ModelReady(t.Context(), &pb.ModelReadyRequest{Name: "nope"}); err != nil || r.GetReady() {
		t.Errorf("ModelReady(nope): %v %v, want not ready and no error", r, err)
	}
	if r, err := h.client.ModelReady(t.Context(), &pb.ModelReadyRequest{Name: "echo", Version: "1 "}); err != nil || !r.GetReady() {
		t.Errorf("ModelReady(echo, \"1 \"): %v %v, want ready: Triton reads the leading integer", r, err)
	}
}
