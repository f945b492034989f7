package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tritonhost/tritonhost/client"
	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

func stringParam(v string) *pb.ModelRepositoryParameter {
	return &pb.ModelRepositoryParameter{ParameterChoice: &pb.ModelRepositoryParameter_StringParam{StringParam: v}}
}

func bytesParam(v []byte) *pb.ModelRepositoryParameter {
	return &pb.ModelRepositoryParameter{ParameterChoice: &pb.ModelRepositoryParameter_BytesParam{BytesParam: v}}
}

var filesDirRE = regexp.MustCompile(`model "from_files": the files of the load request are in (\S+) until the model is unloaded`)

// TestLoadWithConfigOverrideAndFiles: under explicit model control, a
// model loaded with a "config" parameter serves with that configuration;
// a model loaded from "file:" parameters serves from a temporary
// directory, which goes when the model is unloaded; a file that would land
// outside it is refused with Triton's error.
func TestLoadWithConfigOverrideAndFiles(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	repo := testenv.Repository(t, testenv.Model{Name: "identity_fp32", Config: testenv.ExampleConfig(t, "identity_fp32")})
	srv := startServer(t, repo, "--model-control-mode", "explicit")
	ctx := ctxFor(t)
	load := func(name string, params map[string]*pb.ModelRepositoryParameter) error {
		_, err := srv.Client.RepositoryModelLoad(ctx, &pb.RepositoryModelLoadRequest{ModelName: name, Parameters: params})
		return err
	}
	override := `{"name":"identity_fp32","backend":"identity","max_batch_size":0,
		"input":[{"name":"INPUT0","data_type":"TYPE_FP32","dims":[3]}],
		"output":[{"name":"OUTPUT0","data_type":"TYPE_FP32","dims":[3]}],
		"parameters":{"origin":{"string_value":"override"}}}`
	if err := load("identity_fp32", map[string]*pb.ModelRepositoryParameter{"config": stringParam(override)}); err != nil {
		t.Fatalf("load with a config override: %v", err)
	}
	cfg, err := srv.Client.ModelConfig(ctx, &pb.ModelConfigRequest{Name: "identity_fp32"})
	if c := cfg.GetConfig(); err != nil || c.GetMaxBatchSize() != 0 || !slices.Equal(c.GetInput()[0].GetDims(), []int64{3}) ||
		c.GetParameters()["origin"].GetStringValue() != "override" {
		t.Errorf("ModelConfig after the override: %v %v", cfg, err)
	}
	fp32 := func(id string, shape []int64, vals ...float32) *pb.ModelInferRequest {
		msg, err := client.Request{Model: "identity_fp32", ID: id, Inputs: []client.Tensor{client.FP32s("INPUT0", shape, vals...)}}.Message()
		if err != nil {
			t.Fatal(err)
		}
		return msg
	}
	resp, err := srv.Client.ModelInfer(ctx, fp32("ok", []int64{3}, 1, 2.5, -3))
	if err != nil {
		t.Fatalf("infer with the override's shape: %v", err)
	}
	if out, _ := client.Output(resp, "OUTPUT0"); !bytes.Equal(out.Data, client.FP32s("INPUT0", []int64{3}, 1, 2.5, -3).Data) {
		t.Errorf("OUTPUT0 = %v, want the input back", out)
	}
	_, err = srv.Client.ModelInfer(ctx, fp32("batched", []int64{1, 3}, 1, 2, 3))
	wantStatus(t, "a batch the override does not take", err, codes.InvalidArgument,
		"[request id: batched] unexpected shape for input 'INPUT0' for model 'identity_fp32'. Expected [3], got [1,3]. ")

	files := map[string]*pb.ModelRepositoryParameter{
		"config":           stringParam(strings.ReplaceAll(override, `"identity_fp32"`, `"from_files"`)),
		"file:1/notes.txt": bytesParam([]byte("sent with the load request")),
	}
	if err := load("from_files", files); err != nil {
		t.Fatalf("load from files: %v", err)
	}
	// The log line may reach the test's pipe after the RPC's answer.
	testenv.WaitUntil(t, "the server to say where the files are", func() bool { return filesDirRE.MatchString(srv.Log()) })
	m := filesDirRE.FindStringSubmatch(srv.Log())
	if data, err := os.ReadFile(m[1] + "/1/notes.txt"); err != nil || string(data) != "sent with the load request" {
		t.Errorf("the file of the load request: %q %v", data, err)
	}
	req := fp32("f", []int64{3}, 4, 5, 6)
	req.ModelName = "from_files"
	if _, err := srv.Client.ModelInfer(ctx, req); err != nil {
		t.Errorf("infer on the model loaded from files: %v", err)
	}
	if _, err := srv.Client.RepositoryModelUnload(ctx, &pb.RepositoryModelUnloadRequest{ModelName: "from_files"}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(m[1]); !os.IsNotExist(err) {
		t.Errorf("%s is still there after the unload (%v)", m[1], err)
	}

	escape := map[string]*pb.ModelRepositoryParameter{"config": files["config"], "file:../../escape": bytesParam([]byte("x"))}
	err = load("from_files", escape)
	wantPrefix := "failed to load 'from_files', failed to poll from model repository: Invalid file parameter 'file:../../escape' with normalized path '"
	if st := status.Convert(err); st.Code() != codes.Internal || !strings.HasPrefix(st.Message(), wantPrefix) || !strings.HasSuffix(st.Message(), "' must stay within model directory.") {
		t.Errorf("a file outside the model directory: %v\nwant INTERNAL %q...", err, wantPrefix)
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "tritonhost-uploads-*", "server-*", "model-*")); len(left) != 0 {
		t.Errorf("left in TMPDIR: %v", left)
	}
}
