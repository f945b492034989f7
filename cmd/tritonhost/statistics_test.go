package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tritonhost/tritonhost/client"
	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// exampleTraffic is a request each example model serves, for the client
// and as `tritonhost perf` flags; decoupled models are called over a
// stream. Every model of examples/models is here (a test checks). The
// sequence model's requests are each a whole sequence (params).
var exampleTraffic = []struct {
	model  string
	inputs []client.Tensor
	params map[string]any
	stream bool
	perf   []string
}{
	{model: "identity_int32", inputs: []client.Tensor{client.Int32s("INPUT0", []int64{16}, make([]int32, 16)...)},
		perf: []string{"--shape", "INPUT0:16"}},
	{model: "identity_fp32", inputs: []client.Tensor{client.FP32s("INPUT0", []int64{1, 16}, make([]float32, 16)...)},
		perf: []string{"--shape", "INPUT0:1,16"}},
	{model: "simple", inputs: []client.Tensor{client.Int32s("INPUT0", []int64{1, 16}, make([]int32, 16)...),
		client.Int32s("INPUT1", []int64{1, 16}, make([]int32, 16)...)}},
	{model: "simple_fp32", inputs: []client.Tensor{client.FP32s("INPUT0", []int64{1, 16}, make([]float32, 16)...),
		client.FP32s("INPUT1", []int64{1, 16}, make([]float32, 16)...)}},
	{model: "simple_int8", inputs: []client.Tensor{{Name: "INPUT0", Datatype: "INT8", Shape: []int64{1, 16}, Data: make([]byte, 16)},
		{Name: "INPUT1", Datatype: "INT8", Shape: []int64{1, 16}, Data: make([]byte, 16)}}},
	{model: "simple_string", inputs: []client.Tensor{client.Strings("INPUT0", []int64{1, 16}, sixteen("3")...),
		client.Strings("INPUT1", []int64{1, 16}, sixteen("-1")...)},
		perf: []string{"-i", "INPUT0:BYTES:1x16:" + strings.Join(sixteen("3"), ","), "-i", "INPUT1:BYTES:1x16:" + strings.Join(sixteen("-1"), ",")}},
	{model: "simple_identity", inputs: []client.Tensor{client.Strings("INPUT0", []int64{1, 2}, "he\x00llo", "")},
		perf: []string{"--shape", "INPUT0:1,16"}},
	{model: "simple_sequence", inputs: []client.Tensor{client.Int32s("INPUT", []int64{1, 1}, 5)},
		params: map[string]any{"sequence_id": int64(7), "sequence_start": true, "sequence_end": true},
		perf:   []string{"-p", "sequence_id=7", "-p", "sequence_start=true", "-p", "sequence_end=true"}},
	{model: "bls_simple", inputs: []client.Tensor{client.Int32s("INPUT0", []int64{1, 16}, make([]int32, 16)...),
		client.Int32s("INPUT1", []int64{1, 16}, make([]int32, 16)...)}},
	{model: "repeat_int32", stream: true, inputs: []client.Tensor{client.Int32s("IN", []int64{2}, 1, 2),
		client.Uint32s("DELAY", []int64{2}, 0, 0), client.Uint32s("WAIT", []int64{1}, 0)},
		perf: []string{"-i", "IN:INT32:2:1,2", "-i", "DELAY:UINT32:2:0,0", "-i", "WAIT:UINT32:1:0"}},
	{model: "square_int32", stream: true, inputs: []client.Tensor{client.Int32s("IN", []int64{1}, 3)},
		perf: []string{"-i", "IN:INT32:1:3"}},
	{model: "bls_square", stream: true, inputs: []client.Tensor{client.Int32s("IN", []int64{1}, 3)},
		perf: []string{"-i", "IN:INT32:1:3"}},
	{model: "square_pipeline", stream: true, inputs: []client.Tensor{client.Int32s("IN", []int64{1}, 3)},
		perf: []string{"-i", "IN:INT32:1:3"}},
}

// checkReported checks one model's statistics after at least n successful
// requests: counted as inferences and executions, with queue and compute
// time.
func checkReported(t *testing.T, via string, st *pb.ModelStatistics, n uint64) {
	t.Helper()
	inf := st.GetInferenceStats()
	if st.GetInferenceCount() < n || st.GetExecutionCount() == 0 || inf.GetSuccess().GetCount() < n ||
		inf.GetQueue().GetNs() == 0 || inf.GetComputeInfer().GetNs() == 0 {
		t.Errorf("%s: %d inferences, %d executions, %d successes, queue %d ns, compute infer %d ns; want at least %d requests counted, with queue and compute time",
			via, st.GetInferenceCount(), st.GetExecutionCount(), inf.GetSuccess().GetCount(), inf.GetQueue().GetNs(), inf.GetComputeInfer().GetNs(), n)
	}
}

// TestEveryExampleModelReportsStatistics: after traffic, every example
// model's statistics (gRPC ModelStatistics, HTTP /stats) count its requests
// as inferences and executions with queue and compute time, and /metrics
// shows its successes and queue time rising: what Triton's perf_analyzer
// and dashboards read, and a model whose backend reports nothing lacks.
func TestEveryExampleModelReportsStatistics(t *testing.T) {
	s := startServer(t, "")
	ctx := ctxFor(t)
	idx, err := s.Client.RepositoryIndex(ctx, &pb.RepositoryIndexRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(idx.GetModels()) != len(exampleTraffic) {
		t.Fatalf("examples/models has %d models, the traffic table %d: give the new one a request", len(idx.GetModels()), len(exampleTraffic))
	}
	httpc, err := client.NewHTTP(s.HTTP, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer httpc.Close()
	const n = 20
	before := s.scrapeMetrics(t)
	for _, tc := range exampleTraffic {
		t.Run(tc.model, func(t *testing.T) {
			req := client.Request{Model: tc.model, Inputs: tc.inputs, Params: tc.params}
			if tc.stream {
				st, err := client.OpenStream(ctx, s.Client)
				if err != nil {
					t.Fatal(err)
				}
				req.Params = map[string]any{client.EmptyFinalParam: true}
				for i := range n {
					req.ID = fmt.Sprint(i)
					if err := st.Send(req); err != nil {
						t.Fatal(err)
					}
				}
				st.CloseSend()
				for _, r := range collect(t, st) {
					if r.err != "" {
						t.Fatalf("request %s: %s", r.id, r.err)
					}
				}
			} else {
				msg, err := req.Message()
				if err != nil {
					t.Fatal(err)
				}
				for range n {
					if _, err := s.Client.ModelInfer(ctx, msg); err != nil {
						t.Fatal(err)
					}
				}
			}
			// A request is counted where its work ends, which for a
			// decoupled model may come just after its final response.
			var grpcStats *pb.ModelStatisticsResponse
			testenv.WaitUntil(t, tc.model+"'s statistics", func() bool {
				grpcStats, err = s.Client.ModelStatistics(ctx, &pb.ModelStatisticsRequest{Name: tc.model})
				return err == nil && grpcStats.GetModelStats()[0].GetInferenceStats().GetSuccess().GetCount() >= n
			})
			checkReported(t, "gRPC ModelStatistics", grpcStats.GetModelStats()[0], n)
			httpStats, err := httpc.ModelStatistics(ctx, &pb.ModelStatisticsRequest{Name: tc.model})
			if err != nil || len(httpStats.GetModelStats()) != 1 {
				t.Fatalf("GET /v2/models/%s/stats: %v %v", tc.model, httpStats, err)
			}
			checkReported(t, "HTTP /stats", httpStats.GetModelStats()[0], n)
		})
	}
	after := s.scrapeMetrics(t)
	for _, tc := range exampleTraffic {
		labels := fmt.Sprintf(`{model=%q,version="1"}`, tc.model)
		if got, was := sample(t, after, "nv_inference_request_success"+labels), sample(t, before, "nv_inference_request_success"+labels); got < was+n {
			t.Errorf("%s: nv_inference_request_success went from %v to %v after %d requests", tc.model, was, got, n)
		}
		if got, was := sample(t, after, "nv_inference_queue_duration_us"+labels), sample(t, before, "nv_inference_queue_duration_us"+labels); got <= was {
			t.Errorf("%s: nv_inference_queue_duration_us stayed at %v after %d requests", tc.model, got, n)
		}
	}
}
