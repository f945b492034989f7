package main

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/tritonhost/tritonhost/client"
	"github.com/tritonhost/tritonhost/core"
	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// The modelcontrol backend (backends_c/modelcontrol) calls the server as
// Triton's python backend does for a Python model: it loads models with
// TRITONSERVER_ServerLoadModelWithParameters, unloads them (with their
// dependents or not), asks whether a model is decoupled
// (TRITONSERVER_ServerModelTransactionProperties), and calls another model
// with a child of its request's trace. Here the binary serves it over gRPC
// and HTTP, under explicit model control.

// grpcCommand runs a command on the control model with ModelInfer.
func grpcCommand(t *testing.T, srv *serverProcess, cmd map[string]any) map[string]any {
	t.Helper()
	js, _ := json.Marshal(cmd)
	msg, err := client.Request{Model: "control", ID: "cmd", Inputs: []client.Tensor{client.Strings("COMMAND", []int64{1}, string(js))}}.Message()
	if err != nil {
		t.Fatal(err)
	}
	resp, err := srv.Client.ModelInfer(ctxFor(t), msg)
	if err != nil {
		t.Fatalf("ModelInfer %s: %v", js, err)
	}
	out, err := client.Output(resp, "REPORT")
	if err != nil {
		t.Fatal(err)
	}
	elems, err := core.DecodeBytes(out.Data)
	if err != nil || len(elems) != 1 {
		t.Fatalf("REPORT %q: %v", out.Data, err)
	}
	return decodeReport(t, elems[0])
}

// httpCommand runs a command on the control model with POST .../infer.
func httpCommand(t *testing.T, srv *serverProcess, cmd map[string]any) map[string]any {
	t.Helper()
	js, _ := json.Marshal(cmd)
	body, _ := json.Marshal(map[string]any{"inputs": []any{map[string]any{
		"name": "COMMAND", "datatype": "BYTES", "shape": []int{1}, "data": []string{string(js)}}}})
	status, _, out := srv.httpCall(t, "POST", "/v2/models/control/infer", body)
	if status != http.StatusOK {
		t.Fatalf("infer %s: %d %s", js, status, out)
	}
	var resp struct {
		Outputs []struct {
			Name string   `json:"name"`
			Data []string `json:"data"`
		} `json:"outputs"`
	}
	if err := json.Unmarshal(out, &resp); err != nil || len(resp.Outputs) != 1 || len(resp.Outputs[0].Data) != 1 {
		t.Fatalf("response %s: %v", out, err)
	}
	return decodeReport(t, []byte(resp.Outputs[0].Data[0]))
}

func decodeReport(t *testing.T, js []byte) map[string]any {
	t.Helper()
	var r map[string]any
	if err := json.Unmarshal(js, &r); err != nil {
		t.Fatalf("report %q: %v", js, err)
	}
	return r
}

func TestModelControlBackendOverGRPCAndHTTP(t *testing.T) {
	repo := testenv.ModelControlRepository(t)
	srv := startServer(t, repo, "--model-control-mode", "explicit", "--load-model", "control", "--load-model", "probe")
	override := `{"name":"identity_fp32","backend":"identity","max_batch_size":0,
		"input":[{"name":"INPUT0","data_type":"TYPE_FP32","dims":[3]}],
		"output":[{"name":"OUTPUT0","data_type":"TYPE_FP32","dims":[3]}]}`
	for _, proto := range []struct {
		name string
		run  func(*testing.T, *serverProcess, map[string]any) map[string]any
	}{{"grpc", grpcCommand}, {"http", httpCommand}} {
		t.Run(proto.name, func(t *testing.T) {
			run := func(cmd map[string]any) map[string]any { return proto.run(t, srv, cmd) }
			ready := func(model string) any { return run(map[string]any{"op": "ready", "model": model})["ready"] }
			if ready("identity_fp32") != false {
				t.Fatalf("identity_fp32 is loaded before the test loads it")
			}
			if r := run(map[string]any{"op": "load", "model": "identity_fp32", "config": override}); r["ok"] != true {
				t.Fatalf("load with a config: %v", r)
			}
			cfg, err := srv.Client.ModelConfig(ctxFor(t), &pb.ModelConfigRequest{Name: "identity_fp32"})
			if err != nil || cfg.GetConfig().GetMaxBatchSize() != 0 || !slices.Equal(cfg.GetConfig().GetInput()[0].GetDims(), []int64{3}) {
				t.Errorf("the configuration loaded: %v %v", cfg, err)
			}
			if r := run(map[string]any{"op": "txn", "model": "identity_fp32"}); r["flags"] != 1.0 {
				t.Errorf("txn identity_fp32: %v", r)
			}
			// What the server says of itself and of a model, as the endpoints say it.
			r := run(map[string]any{"op": "server"})
			md, _ := r["metadata"].(map[string]any)
			if r["live"] != true || r["ready"] != true || r["metrics_count_requests"] != true ||
				md["name"] != "triton" || md["version"] == "" || len(md["extensions"].([]any)) == 0 {
				t.Errorf("server: %v", r)
			}
			var loaded []string
			for _, m := range r["index"].([]any) {
				loaded = append(loaded, m.(map[string]any)["name"].(string))
			}
			if !slices.Equal(loaded, []string{"control", "identity_fp32", "probe"}) {
				t.Errorf("ready models %v", loaded)
			}
			r = run(map[string]any{"op": "model", "model": "identity_fp32", "version": 1})
			stats, _ := r["statistics"].(map[string]any)["model_stats"].([]any)
			if r["batch_flags"] != 1.0 || len(stats) != 1 || stats[0].(map[string]any)["name"] != "identity_fp32" {
				t.Errorf("model identity_fp32: %v", r)
			}
			if r := run(map[string]any{"op": "model", "model": "identity_fp32", "version": 3}); r["code"] != "INVALID_ARG" ||
				r["message"] != "requested model version is not available for model 'identity_fp32'" {
				t.Errorf("statistics of a version not loaded: %v", r)
			}
			if r := run(map[string]any{"op": "load", "model": "square_pipeline"}); r["ok"] != true {
				t.Fatalf("load square_pipeline: %v", r)
			}
			if r := run(map[string]any{"op": "txn", "model": "square_pipeline"}); r["flags"] != 2.0 {
				t.Errorf("txn square_pipeline: %v", r)
			}
			if r := run(map[string]any{"op": "load", "model": "nope"}); r["code"] != "INTERNAL" ||
				!strings.HasPrefix(r["message"].(string), "failed to load 'nope', failed to poll from model repository") {
				t.Errorf("load an unknown model: %v", r)
			}

			r = run(map[string]any{"op": "trace", "model": "probe", "context": "ctx-" + proto.name})
			if r["ok"] != true || r["trace_released"] != true || r["released_trace_id"] != r["child_id"] || r["child_parent_id"] != r["parent_id"] {
				t.Errorf("trace: %v", r)
			}
			var names []string
			for _, a := range r["activities"].([]any) {
				names = append(names, a.(string))
			}
			want := []string{"REQUEST_START", "QUEUE_START", "COMPUTE_START", "COMPUTE_INPUT_END",
				"probe_step", "COMPUTE_OUTPUT_START", "COMPUTE_END", "REQUEST_END"}
			if !slices.Equal(names, want) {
				t.Errorf("activities %v, want %v", names, want)
			}
			if p, _ := r["probe"].(map[string]any); p["traced"] != true || p["id"] != r["child_id"] || p["parent_id"] != r["parent_id"] ||
				p["context"] != "ctx-"+proto.name || p["model"] != "probe" {
				t.Errorf("the callee saw %v", p)
			}

			if r := run(map[string]any{"op": "unload", "model": "square_pipeline", "dependents": true}); r["ok"] != true {
				t.Errorf("unload with dependents: %v", r)
			}
			if r := run(map[string]any{"op": "unload", "model": "identity_fp32"}); r["ok"] != true {
				t.Errorf("unload: %v", r)
			}
			testenv.WaitUntil(t, "the models to unload", func() bool {
				idx, err := srv.Client.RepositoryIndex(ctxFor(t), &pb.RepositoryIndexRequest{Ready: true})
				if err != nil {
					t.Fatal(err)
				}
				var loaded []string
				for _, m := range idx.GetModels() {
					loaded = append(loaded, m.GetName())
				}
				return slices.Equal(loaded, []string{"control", "probe"})
			})
		})
	}
}
