package client

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
)

// TestHTTPQueriesReadTritonsRoutes: the model queries GET Triton's routes
// and read their JSON into the gRPC protocol's messages; a refusal names
// the route, the status and Triton's error.
func TestHTTPQueriesReadTritonsRoutes(t *testing.T) {
	bodies := map[string]string{
		"/v2/models/m/versions/2":     `{"name":"m","versions":["2"],"platform":"p","inputs":[{"name":"IN","datatype":"INT32","shape":[-1]}]}`,
		"/v2/models/m/config":         `{"name":"m","max_batch_size":8,"model_transaction_policy":{"decoupled":true}}`,
		"/v2/models/m/stats":          `{"model_stats":[{"name":"m","version":"1","inference_count":"3","inference_stats":{"queue":{"count":"3","ns":"1200"}}}]}`,
		"/v2/models/stats":            `{"model_stats":[{"name":"a"},{"name":"b"}]}`,
		"/v2/models/a%20b/versions/1": `{"name":"a b"}`,
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := bodies[r.URL.EscapedPath()]
		if r.Method != http.MethodGet || !ok {
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"error":"Request for unknown model: 'x' is not found"}`)
			return
		}
		io.WriteString(w, body)
	}))
	defer srv.Close()
	h, err := NewHTTP(strings.TrimPrefix(srv.URL, "http://"), 2)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	ctx := context.Background()

	md, err := h.ModelMetadata(ctx, &pb.ModelMetadataRequest{Name: "m", Version: "2"})
	if err != nil || md.GetPlatform() != "p" || md.GetInputs()[0].GetShape()[0] != -1 {
		t.Errorf("ModelMetadata: %v %v", md, err)
	}
	cfg, err := h.ModelConfig(ctx, &pb.ModelConfigRequest{Name: "m"})
	if err != nil || cfg.GetConfig().GetMaxBatchSize() != 8 || !cfg.GetConfig().GetModelTransactionPolicy().GetDecoupled() {
		t.Errorf("ModelConfig: %v %v", cfg, err)
	}
	st, err := h.ModelStatistics(ctx, &pb.ModelStatisticsRequest{Name: "m"})
	if err != nil || st.GetModelStats()[0].GetInferenceCount() != 3 || st.GetModelStats()[0].GetInferenceStats().GetQueue().GetNs() != 1200 {
		t.Errorf("ModelStatistics(m): %v %v", st, err)
	}
	all, err := h.ModelStatistics(ctx, &pb.ModelStatisticsRequest{})
	if err != nil || len(all.GetModelStats()) != 2 {
		t.Errorf("ModelStatistics(every model): %v %v", all, err)
	}
	if md, err := h.ModelMetadata(ctx, &pb.ModelMetadataRequest{Name: "a b", Version: "1"}); err != nil || md.GetName() != "a b" {
		t.Errorf("a name to escape: %v %v", md, err)
	}
	_, err = h.ModelConfig(ctx, &pb.ModelConfigRequest{Name: "x"})
	if err == nil || err.Error() != "GET /v2/models/x/config: HTTP 404: Request for unknown model: 'x' is not found" {
		t.Errorf("an unknown model: %v", err)
	}
}

func TestNewHTTPTakesHostPortOrAnHTTPURL(t *testing.T) {
	for addr, want := range map[string]string{
		"localhost:8000":         "http://localhost:8000",
		"http://127.0.0.1:8000/": "http://127.0.0.1:8000",
		"https://host:443":       "",
		"http://host:1/v2":       "",
		"http://":                "",
	} {
		h, err := NewHTTP(addr, 0)
		switch {
		case want == "" && err == nil:
			t.Errorf("NewHTTP(%q) = %s, want an error", addr, h.URL())
		case want != "" && (err != nil || h.URL() != want):
			t.Errorf("NewHTTP(%q): %v, want %s", addr, err, want)
		}
	}
}
