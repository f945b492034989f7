package grpcserver_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/coretest"
	"github.com/tritonhost/tritonhost/internal/frontend/grpcserver"
	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
)

// metadataModels are a decoupled vector model and a batching one with two
// versions loaded.
var metadataModels = []coretest.ModelDir{
	{Name: "dec", Config: vector(decoupled)},
	{Name: "batch", Config: `backend: "go"
max_batch_size: 4
input [ { name: "IN" data_type: TYPE_FP32 dims: [ 3 ] } ]
output [ { name: "OUT" data_type: TYPE_STRING dims: [ 1 ] } ]
version_policy: { all: { } }`, Versions: []int64{1, 2}},
}

// TestHealthAndServerMetadata: a running server is live and ready, over
// Triton's RPCs and grpc.health.v1, and names itself.
func TestHealthAndServerMetadata(t *testing.T) {
	t.Parallel()
	h := newHarness(t, setup{service: grpcserver.Options{ServerName: "th", ServerVersion: "9.9", StrictReadiness: true}}, metadataModels...)
	live, err := h.client.ServerLive(t.Context(), &pb.ServerLiveRequest{})
	if err != nil || !live.GetLive() {
		t.Errorf("ServerLive: %v, %v", live, err)
	}
	ready, err := h.client.ServerReady(t.Context(), &pb.ServerReadyRequest{})
	if err != nil || !ready.GetReady() {
		t.Errorf("ServerReady: %v, %v", ready, err)
	}
	meta, err := h.client.ServerMetadata(t.Context(), &pb.ServerMetadataRequest{})
	if err != nil || meta.GetName() != "th" || meta.GetVersion() != "9.9" || !slices.Contains(meta.GetExtensions(), "statistics") {
		t.Errorf("ServerMetadata: %v, %v", meta, err)
	}
	health, err := healthpb.NewHealthClient(h.conn).Check(t.Context(), &healthpb.HealthCheckRequest{})
	if err != nil || health.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Errorf("health: %v, %v", health, err)
	}
}

// TestModelReadyMetadataAndConfig: per-model RPCs answer for loaded
// versions, refuse malformed names and versions with INVALID_ARGUMENT, and
// unknown models with NOT_FOUND (ModelReady: false).
func TestModelReadyMetadataAndConfig(t *testing.T) {
	t.Parallel()
	h := newHarness(t, setup{}, metadataModels...)
	for _, tc := range []struct {
		name, version string
		ready         bool
		code          codes.Code // of ModelMetadata and ModelConfig
	}{
		{"batch", "", true, codes.OK},
		{"batch", "1", true, codes.OK},
		{"batch", "2", true, codes.OK},
		{"dec", "", true, codes.OK},
		{"batch", "3", false, codes.NotFound},
		{"nope", "", false, codes.NotFound},
		{"batch", "0", false, codes.NotFound},
		{"batch", "x", false, codes.InvalidArgument},
		{"", "", false, codes.NotFound},
	} {
		// As Triton's, ModelReady reports a model or version it does not
		// know as not ready, and refuses only a malformed version.
		ready, err := h.client.ModelReady(t.Context(), &pb.ModelReadyRequest{Name: tc.name, Version: tc.version})
		if tc.code == codes.InvalidArgument {
			if status.Code(err) != codes.InvalidArgument {
				t.Errorf("ModelReady(%q, %q): %v, want INVALID_ARGUMENT", tc.name, tc.version, err)
			}
		} else if err != nil || ready.GetReady() != tc.ready {
			t.Errorf("ModelReady(%q, %q) = %v, %v; want %v", tc.name, tc.version, ready, err, tc.ready)
		}
		_, merr := h.client.ModelMetadata(t.Context(), &pb.ModelMetadataRequest{Name: tc.name, Version: tc.version})
		_, cerr := h.client.ModelConfig(t.Context(), &pb.ModelConfigRequest{Name: tc.name, Version: tc.version})
		if status.Code(merr) != tc.code || status.Code(cerr) != tc.code {
			t.Errorf("ModelMetadata/ModelConfig(%q, %q): %v / %v, want %v", tc.name, tc.version, merr, cerr, tc.code)
		}
	}

	meta, err := h.client.ModelMetadata(t.Context(), &pb.ModelMetadataRequest{Name: "batch"})
	if err != nil {
		t.Fatal(err)
	}
	in, out := meta.GetInputs()[0], meta.GetOutputs()[0]
	if meta.GetPlatform() != "go" || !slices.Equal(meta.GetVersions(), []string{"1", "2"}) ||
		in.GetName() != "IN" || in.GetDatatype() != "FP32" || !slices.Equal(in.GetShape(), []int64{-1, 3}) ||
		out.GetName() != "OUT" || out.GetDatatype() != "BYTES" || !slices.Equal(out.GetShape(), []int64{-1, 1}) {
		t.Errorf("ModelMetadata(batch) = %v; want platform go, versions 1 and 2, the batch dimension as -1", meta)
	}
	cfg, err := h.client.ModelConfig(t.Context(), &pb.ModelConfigRequest{Name: "dec"})
	if err != nil || cfg.GetConfig().GetName() != "dec" || !cfg.GetConfig().GetModelTransactionPolicy().GetDecoupled() {
		t.Errorf("ModelConfig(dec) = %v, %v; want the decoupled configuration", cfg, err)
	}
}

// TestModelStatisticsReportWhatTheCoreRecorded: the RPC carries the
// counts and durations the backend reported, for one model or all.
func TestModelStatisticsReportWhatTheCoreRecorded(t *testing.T) {
	t.Parallel()
	h := newHarness(t, setup{}, metadataModels...)
	h.p.Set("dec", coretest.Async(func(x *coretest.Exec, r *core.Request) {
		start := core.Nanotime() // reported before the response, which the client may see at once
		x.Instance.ReportResponseStatistics(r.Responder(), start, start+5, start+15, core.ResponseSucceeded)
		_ = x.Send(r, coretest.EchoResponse(r), true)
	}))
	h.p.Set("batch", coretest.Reporting(true, coretest.Answering(coretest.FailWith(core.Errorf(core.CodeInternal, "statistics only")))))
	st := h.open(t, true)
	st.send(request("dec", "d", 1))
	st.recv()
	batchReq := &pb.ModelInferRequest{ModelName: "batch", ModelVersion: "2", Id: "b",
		Inputs:           []*pb.ModelInferRequest_InferInputTensor{{Name: "IN", Datatype: "FP32", Shape: []int64{1, 3}}},
		RawInputContents: [][]byte{make([]byte, 12)}}
	if _, err := h.client.ModelInfer(t.Context(), batchReq); status.Code(err) != codes.Internal {
		t.Fatalf("ModelInfer: %v", err)
	}

	resp, err := h.client.ModelStatistics(t.Context(), &pb.ModelStatisticsRequest{Name: "batch", Version: "2"})
	if err != nil || len(resp.GetModelStats()) != 1 {
		t.Fatalf("ModelStatistics(batch, 2): %v, %v", resp, err)
	}
	b := resp.GetModelStats()[0]
	inf := b.GetInferenceStats()
	if b.GetName() != "batch" || b.GetVersion() != "2" || b.GetInferenceCount() != 1 || b.GetExecutionCount() != 1 ||
		inf.GetSuccess().GetCount() != 1 || inf.GetComputeInfer().GetNs() != 20 || len(b.GetBatchStats()) != 1 || b.GetBatchStats()[0].GetComputeOutput().GetNs() != 300 {
		t.Errorf("statistics of batch version 2: %v", b)
	}
	resp, err = h.client.ModelStatistics(t.Context(), &pb.ModelStatisticsRequest{})
	if err != nil || len(resp.GetModelStats()) != 3 {
		t.Fatalf("ModelStatistics of every model: %v, %v; want batch 1, batch 2 and dec", resp, err)
	}
	if d := resp.GetModelStats()[2]; d.GetName() != "dec" || d.GetResponseStats()["0"].GetSuccess().GetCount() != 1 || d.GetResponseStats()["0"].GetComputeOutput().GetNs() != 10 {
		t.Errorf("statistics of dec: %v", d)
	}
	for _, req := range []*pb.ModelStatisticsRequest{{Name: "nope"}, {Name: "batch", Version: "3"}} {
		if _, err := h.client.ModelStatistics(t.Context(), req); status.Code(err) != codes.NotFound {
			t.Errorf("ModelStatistics(%v): %v, want NOT_FOUND", req, err)
		}
	}
	if _, err := h.client.ModelStatistics(t.Context(), &pb.ModelStatisticsRequest{Name: "batch", Version: "x"}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("ModelStatistics with a malformed version: %v, want INVALID_ARGUMENT", err)
	}
}

// TestRepositoryRPCs: the index lists every model version's state, and
// under explicit model control load and unload change it.
func TestRepositoryRPCs(t *testing.T) {
	t.Parallel()
	h := newHarness(t, setup{explicit: true}, metadataModels...)
	index := func() []string {
		t.Helper()
		resp, err := h.client.RepositoryIndex(t.Context(), &pb.RepositoryIndexRequest{})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, m := range resp.GetModels() {
			out = append(out, m.GetName()+":"+m.GetVersion()+":"+m.GetState())
		}
		return out
	}
	if got, want := index(), []string{"batch::UNAVAILABLE", "dec::UNAVAILABLE"}; !slices.Equal(got, want) {
		t.Errorf("index before any load: %v, want %v", got, want)
	}
	if _, err := h.client.RepositoryModelLoad(t.Context(), &pb.RepositoryModelLoadRequest{ModelName: "batch"}); err != nil {
		t.Fatal(err)
	}
	if got, want := index(), []string{"batch:1:READY", "batch:2:READY", "dec::UNAVAILABLE"}; !slices.Equal(got, want) {
		t.Errorf("index after loading batch: %v, want %v", got, want)
	}
	if _, err := h.client.RepositoryModelUnload(t.Context(), &pb.RepositoryModelUnloadRequest{ModelName: "batch"}); err != nil {
		t.Fatal(err)
	}
	if got, want := index(), []string{"batch:1:UNAVAILABLE", "batch:2:UNAVAILABLE", "dec::UNAVAILABLE"}; !slices.Equal(got, want) {
		t.Errorf("index after unloading batch: %v, want %v", got, want)
	}
	_, err := h.client.RepositoryModelLoad(t.Context(), &pb.RepositoryModelLoadRequest{ModelName: "nope"})
	wantStatusPrefix(t, "loading an unknown model", err, codes.Internal, "failed to load 'nope', failed to poll from model repository")
	_, err = h.client.RepositoryIndex(t.Context(), &pb.RepositoryIndexRequest{RepositoryName: "r"})
	wantStatus(t, "index of a named repository", err, codes.Unimplemented, "'repository_name' specification is not supported")
	_, err = h.client.RepositoryModelLoad(t.Context(), &pb.RepositoryModelLoadRequest{RepositoryName: "r", ModelName: "batch"})
	wantStatus(t, "load from a named repository", err, codes.Unimplemented, "'repository_name' specification is not supported")
	_, err = h.client.RepositoryModelUnload(t.Context(), &pb.RepositoryModelUnloadRequest{RepositoryName: "r", ModelName: "batch"})
	wantStatus(t, "unload from a named repository", err, codes.Unimplemented, "'repository_name' specification is not supported")
}

// TestLogSettingsChoosesAFileOnlyWhenTheOperatorAllowsIt: a client may
// switch levels and format, but sending the log to a path on the server's
// machine is refused unless the server was started to allow it; a refused
// request changes nothing.
func TestLogSettingsChoosesAFileOnlyWhenTheOperatorAllowsIt(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "server.log")
	settings := func(verbose uint32, path string) *pb.LogSettingsRequest {
		return &pb.LogSettingsRequest{Settings: map[string]*pb.LogSettingsRequest_SettingValue{
			"log_verbose_level": {ParameterChoice: &pb.LogSettingsRequest_SettingValue_Uint32Param{Uint32Param: verbose}},
			"log_file":          {ParameterChoice: &pb.LogSettingsRequest_SettingValue_StringParam{StringParam: path}},
		}}
	}
	for _, allow := range []bool{false, true} {
		h := newHarness(t, setup{service: grpcserver.Options{AllowLogFile: allow}}, coretest.ModelDir{Name: "m", Config: vector("")})
		resp, err := h.client.LogSettings(t.Context(), settings(2, file))
		if !allow {
			if status.Code(err) != codes.PermissionDenied || !strings.Contains(err.Error(), "--allow-log-file-setting") {
				t.Fatalf("log_file without permission: %v, want PERMISSION_DENIED naming the flag", err)
			}
			if v := h.srv.Logger().VerboseLevel(); v != 0 {
				t.Errorf("the refused request changed the verbose level to %d", v)
			}
			if _, err := os.Stat(file); err == nil {
				t.Error("the refused request created the file")
			}
			continue
		}
		if err != nil {
			t.Fatalf("log_file with permission: %v", err)
		}
		if got := resp.GetSettings()["log_file"].GetStringParam(); got != file {
			t.Errorf("log_file = %q, want %q", got, file)
		}
		if _, err := h.client.LogSettings(t.Context(), settings(0, "")); err != nil {
			t.Fatal(err)
		}
	}
}
