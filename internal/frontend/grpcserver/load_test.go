package grpcserver_test

import (
	"slices"
	"testing"

	"google.golang.org/grpc/codes"

	"github.com/tritonhost/tritonhost/core/coretest"
	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
)

func loadParam(v any) *pb.ModelRepositoryParameter {
	switch v := v.(type) {
	case string:
		return &pb.ModelRepositoryParameter{ParameterChoice: &pb.ModelRepositoryParameter_StringParam{StringParam: v}}
	case []byte:
		return &pb.ModelRepositoryParameter{ParameterChoice: &pb.ModelRepositoryParameter_BytesParam{BytesParam: v}}
	case bool:
		return &pb.ModelRepositoryParameter{ParameterChoice: &pb.ModelRepositoryParameter_BoolParam{BoolParam: v}}
	}
	panic(v)
}

// TestRepositoryModelLoadTakesTritonsParameters: "config" overrides the
// repository's configuration, "file:<path>" parameters bring the model's
// files; parameters of the wrong type or name get Triton's errors.
func TestRepositoryModelLoadTakesTritonsParameters(t *testing.T) {
	t.Parallel()
	h := newHarness(t, setup{explicit: true}, coretest.ModelDir{Name: "echo", Config: vector("")})
	override := `{"backend":"go","input":[{"name":"INPUT0","data_type":"TYPE_INT32","dims":[2]}],"output":[{"name":"OUTPUT0","data_type":"TYPE_INT32","dims":[2]}]}`
	load := func(name string, params map[string]*pb.ModelRepositoryParameter) error {
		_, err := h.client.RepositoryModelLoad(t.Context(), &pb.RepositoryModelLoadRequest{ModelName: name, Parameters: params})
		return err
	}
	if err := load("echo", map[string]*pb.ModelRepositoryParameter{"config": loadParam(override)}); err != nil {
		t.Fatal(err)
	}
	cfg, err := h.client.ModelConfig(t.Context(), &pb.ModelConfigRequest{Name: "echo"})
	if err != nil || !slices.Equal(cfg.GetConfig().GetInput()[0].GetDims(), []int64{2}) {
		t.Errorf("ModelConfig after the override: %v %v", cfg, err)
	}
	_, err = h.client.ModelInfer(t.Context(), request("echo", "r", 1, 2, 3))
	wantStatus(t, "a request the override refuses", err, codes.InvalidArgument,
		"[request id: r] unexpected shape for input 'INPUT0' for model 'echo'. Expected [2], got [3]. ")

	if err := load("fresh", map[string]*pb.ModelRepositoryParameter{"config": loadParam(override), "file:1/weights": loadParam([]byte{1, 2})}); err != nil {
		t.Fatalf("a model from files: %v", err)
	}
	if _, err := h.client.ModelInfer(t.Context(), request("fresh", "f", 1, 2)); err != nil {
		t.Errorf("infer on the model loaded from files: %v", err)
	}
	for _, tc := range []struct {
		name   string
		params map[string]*pb.ModelRepositoryParameter
		code   codes.Code
		want   string
	}{
		{"a config that is not a string", map[string]*pb.ModelRepositoryParameter{"config": loadParam(true)}, codes.InvalidArgument,
			"invalid value type for load parameter 'config', expected string_param."},
		{"a file that is not bytes", map[string]*pb.ModelRepositoryParameter{"config": loadParam(override), "file:1/x": loadParam("x")}, codes.InvalidArgument,
			"invalid value type for load parameter 'file:1/x', expected bytes_param."},
		{"an unknown parameter", map[string]*pb.ModelRepositoryParameter{"nope": loadParam("x")}, codes.InvalidArgument,
			"unrecognized load parameter 'nope'."},
	} {
		wantStatus(t, tc.name, load("echo", tc.params), tc.code, tc.want)
	}
	wantStatusPrefix(t, "files without a config", load("echo", map[string]*pb.ModelRepositoryParameter{"file:1/x": loadParam([]byte{})}), codes.Internal,
		"failed to load 'echo', failed to poll from model repository: Load parameter 'config' must be specified for model file override")
	_, err = h.client.RepositoryModelUnload(t.Context(), &pb.RepositoryModelUnloadRequest{ModelName: "fresh",
		Parameters: map[string]*pb.ModelRepositoryParameter{"unload_dependents": loadParam("yes")}})
	wantStatus(t, "unload_dependents of the wrong type", err, codes.InvalidArgument, "invalid value type for 'unload_dependents' parameter, expected bool_param.")
	for _, name := range []string{"fresh", "echo"} {
		if _, err := h.client.RepositoryModelUnload(t.Context(), &pb.RepositoryModelUnloadRequest{ModelName: name,
			Parameters: map[string]*pb.ModelRepositoryParameter{"unload_dependents": loadParam(true)}}); err != nil {
			t.Errorf("unload %s: %v", name, err)
		}
	}
}

// TestRepositoryModelLoadBoundsItsParameters: a load request may carry at
// most 1024 parameters.
func TestRepositoryModelLoadBoundsItsParameters(t *testing.T) {
	t.Parallel()
	h := newHarness(t, setup{explicit: true}, coretest.ModelDir{Name: "echo", Config: vector("")})
	params := map[string]*pb.ModelRepositoryParameter{}
	for i := range 1025 {
		params["file:"+string(rune('a'+i%26))+"/"+string(rune('0'+i/26%10))+string(rune('a'+i/260))] = loadParam([]byte{})
	}
	_, err := h.client.RepositoryModelLoad(t.Context(), &pb.RepositoryModelLoadRequest{ModelName: "echo", Parameters: params})
	wantStatus(t, "1025 parameters", err, codes.InvalidArgument, "the load request has more than the 1024 parameters the server accepts")
}
