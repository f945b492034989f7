package main

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tritonhost/tritonhost/client"
	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// TestSquarePipelineStreamsEveryResponseOnce: the example ensemble
// square_pipeline (identity_int32, then square_int32, decoupled, then
// identity_int32 on each of its responses) answers each of four
// interleaved requests with k responses OUT = k over ModelStreamInfer,
// each exactly once, then one empty final; the statistics count the
// ensemble's requests and each step's.
func TestSquarePipelineStreamsEveryResponseOnce(t *testing.T) {
	srv := startServer(t, "")
	ctx := ctxFor(t)
	s, err := client.OpenStream(ctx, srv.Client)
	if err != nil {
		t.Fatal(err)
	}
	ks := []int32{3, 0, 2, 1}
	for i, k := range ks {
		r := client.Request{Model: "square_pipeline", ID: fmt.Sprint(i), Inputs: []client.Tensor{client.Int32s("IN", []int64{1}, k)},
			Params: map[string]any{client.EmptyFinalParam: true}}
		if err := s.Send(r); err != nil {
			t.Fatal(err)
		}
	}
	s.CloseSend()
	counts, finals := map[string]int{}, map[string]int{}
	for _, r := range collect(t, s) {
		switch {
		case r.err != "":
			t.Fatalf("error response: %+v", r)
		case r.final:
			finals[r.id]++
			if counts[r.id] != int(ks[r.id[0]-'0']) || len(r.names) != 0 {
				t.Errorf("final for %s came after %d responses, or carries outputs %v", r.id, counts[r.id], r.names)
			}
		default:
			counts[r.id]++
			if want := int64(ks[r.id[0]-'0']); len(r.outs["OUT"]) != 1 || r.outs["OUT"][0] != want {
				t.Errorf("response for %s: OUT = %v, want [%d]", r.id, r.outs["OUT"], want)
			}
		}
	}
	if want := map[string]int{"0": 3, "2": 2, "3": 1}; fmt.Sprint(counts) != fmt.Sprint(want) {
		t.Errorf("responses per id = %v, want %v", counts, want)
	}
	if want := map[string]int{"0": 1, "1": 1, "2": 1, "3": 1}; fmt.Sprint(finals) != fmt.Sprint(want) {
		t.Errorf("finals per id = %v, want %v", finals, want)
	}

	stats := func(model string) *pb.ModelStatistics {
		resp, err := srv.Client.ModelStatistics(ctx, &pb.ModelStatisticsRequest{Name: model})
		if err != nil || len(resp.GetModelStats()) != 1 {
			t.Fatalf("ModelStatistics(%s): %v", model, err)
		}
		return resp.GetModelStats()[0]
	}
	// identity_int32 ran once before square_int32 for each request (4) and
	// once after it for each of its responses (3+0+2+1).
	for model, want := range map[string]uint64{"square_pipeline": 4, "identity_int32": 4 + 6} {
		if got := stats(model).GetInferenceStats().GetSuccess().GetCount(); got != want {
			t.Errorf("%s: %d successes, want %d", model, got, want)
		}
	}
	if st := stats("square_pipeline"); st.GetExecutionCount() != 4 || st.GetInferenceStats().GetComputeInfer().GetNs() == 0 {
		t.Errorf("square_pipeline: %d executions, %d ns compute infer; want 4 and its steps' sum", st.GetExecutionCount(), st.GetInferenceStats().GetComputeInfer().GetNs())
	}
}

// TestSquarePipelineIsDecoupled: the loaded configuration says so, the
// unary ModelInfer refuses it as it refuses any decoupled model, and
// `tritonhost infer` streams it.
func TestSquarePipelineIsDecoupled(t *testing.T) {
	srv := startServer(t, "")
	ctx := ctxFor(t)
	cfg, err := srv.Client.ModelConfig(ctx, &pb.ModelConfigRequest{Name: "square_pipeline"})
	if err != nil {
		t.Fatal(err)
	}
	if c := cfg.GetConfig(); c.GetPlatform() != "ensemble" || !c.GetModelTransactionPolicy().GetDecoupled() || len(c.GetEnsembleScheduling().GetStep()) != 3 {
		t.Errorf("config: platform %q, decoupled %v, %d steps; want ensemble, true, 3", c.GetPlatform(), c.GetModelTransactionPolicy().GetDecoupled(), len(c.GetEnsembleScheduling().GetStep()))
	}
	req, err := client.Request{Model: "square_pipeline", Inputs: []client.Tensor{client.Int32s("IN", []int64{1}, 2)}}.Message()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Client.ModelInfer(ctx, req); status.Code(err) != codes.Unimplemented || !strings.Contains(err.Error(), "decoupled") {
		t.Errorf("ModelInfer(square_pipeline): %v, want Unimplemented (decoupled)", err)
	}
	out, err := exec.Command(serverBinary, "infer", "square_pipeline", "-u", srv.Addr, "-i", "IN:INT32:1:3").CombinedOutput()
	if err != nil {
		t.Fatalf("infer: %v\n%s", err, out)
	}
	const want = `id=0 final=false OUT INT32 [1] = [3]
id=0 final=false OUT INT32 [1] = [3]
id=0 final=false OUT INT32 [1] = [3]
id=0 final=true
`
	if string(out) != want {
		t.Errorf("infer printed:\n%s\nwant:\n%s", out, want)
	}
}

// TestBrokenEnsembleIsUnavailableWithTritonsReason: over gRPC, the
// repository index gives an ensemble whose tensor types do not meet
// Triton's message as its reason, and the server still serves the rest.
func TestBrokenEnsembleIsUnavailableWithTritonsReason(t *testing.T) {
	bad := strings.NewReplacer(`"square_pipeline"`, `"bad_pipeline"`, "TYPE_INT32 dims: [ 1 ] } ]\noutput", "TYPE_FP32 dims: [ 1 ] } ]\noutput").
		Replace(testenv.ExampleConfig(t, "square_pipeline"))
	repo := testenv.Repository(t,
		testenv.Model{Name: "identity_int32", Config: testenv.ExampleConfig(t, "identity_int32")},
		testenv.Model{Name: "square_int32", Config: testenv.ExampleConfig(t, "square_int32")},
		testenv.Model{Name: "bad_pipeline", Config: bad})
	srv := startServer(t, repo, "--exit-on-error=false")
	idx, err := srv.Client.RepositoryIndex(ctxFor(t), &pb.RepositoryIndexRequest{})
	if err != nil {
		t.Fatal(err)
	}
	const want = "in ensemble bad_pipeline, ensemble tensor IN: inconsistent data type: TYPE_FP32 is inferred from model bad_pipeline while TYPE_INT32 is inferred from model identity_int32"
	found := false
	for _, m := range idx.GetModels() {
		if m.GetName() == "bad_pipeline" {
			found = true
			if m.GetState() != "UNAVAILABLE" || m.GetReason() != want {
				t.Errorf("bad_pipeline: %s %q, want UNAVAILABLE %q", m.GetState(), m.GetReason(), want)
			}
		}
	}
	if !found {
		t.Fatalf("bad_pipeline is not in the index: %v", idx)
	}
	req, _ := client.Request{Model: "identity_int32", Inputs: []client.Tensor{client.Int32s("INPUT0", []int64{1}, 7)}}.Message()
	if _, err := srv.Client.ModelInfer(ctxFor(t), req); err != nil {
		t.Errorf("identity_int32 beside a broken ensemble: %v", err)
	}
}

// TestEnsembleStepWaitFlag: --ensemble-step-wait-secs reaches the
// ensembles that bound their steps (max_inflight_requests), which stream
// every response once within the bound, and a wait of 0 is refused.
func TestEnsembleStepWaitFlag(t *testing.T) {
	bounded := strings.NewReplacer(`"square_pipeline"`, `"bounded"`, "ensemble_scheduling {", "ensemble_scheduling {\n  max_inflight_requests: 2").
		Replace(testenv.ExampleConfig(t, "square_pipeline"))
	repo := testenv.Repository(t,
		testenv.Model{Name: "identity_int32", Config: testenv.ExampleConfig(t, "identity_int32")},
		testenv.Model{Name: "square_int32", Config: testenv.ExampleConfig(t, "square_int32")},
		testenv.Model{Name: "bounded", Config: bounded})
	srv := startServer(t, repo, "--ensemble-step-wait-secs", "7")
	const want = `ensemble "bounded" version 1 runs steps 0:identity_int32 1:square_int32 2:identity_int32 (decoupled; max_inflight_requests 2, waiting at most 7s for a slot)`
	if !strings.Contains(srv.Log(), want) {
		t.Errorf("the log lacks %q", want)
	}
	s, err := client.OpenStream(ctxFor(t), srv.Client)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Send(client.Request{Model: "bounded", ID: "b", Inputs: []client.Tensor{client.Int32s("IN", []int64{1}, 20)}}); err != nil {
		t.Fatal(err)
	}
	s.CloseSend()
	n := 0
	for _, r := range collect(t, s) {
		if r.err != "" || r.final || len(r.outs["OUT"]) != 1 || r.outs["OUT"][0] != 20 {
			t.Fatalf("unexpected message %+v", r)
		}
		n++
	}
	if n != 20 {
		t.Errorf("got %d responses, want 20", n)
	}

	out, err := exec.Command(serverBinary, "serve", "--model-repository", repo, "--ensemble-step-wait-secs", "0").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "--ensemble-step-wait-secs must be positive") {
		t.Errorf("serve --ensemble-step-wait-secs 0: %v\n%s", err, out)
	}
}
