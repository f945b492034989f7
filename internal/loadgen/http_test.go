package loadgen

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tritonhost/tritonhost/client"
	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
)

// fakeHTTP answers Triton's HTTP infer route after delay, checking that
// the body is the binary tensor extension's: a JSON header of the length
// the request says, then the inputs' bytes. It refuses every request when
// refuse is set, with Triton's error body.
type fakeHTTP struct {
	delay    time.Duration
	refuse   bool
	bad      atomic.Value // string: the first malformed request
	inflight atomic.Int64
	maxSeen  atomic.Int64
}

func (f *fakeHTTP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := f.inflight.Add(1)
	defer f.inflight.Add(-1)
	for m := f.maxSeen.Load(); n > m && !f.maxSeen.CompareAndSwap(m, n); m = f.maxSeen.Load() {
	}
	body, _ := io.ReadAll(r.Body)
	hlen, err := strconv.Atoi(r.Header.Get("Inference-Header-Content-Length"))
	var h struct {
		Parameters map[string]any `json:"parameters"`
		Inputs     []struct {
			Name       string         `json:"name"`
			Parameters map[string]any `json:"parameters"`
		} `json:"inputs"`
	}
	switch {
	case r.Method != http.MethodPost || r.URL.Path != "/v2/models/m/versions/2/infer":
		f.bad.CompareAndSwap(nil, r.Method+" "+r.URL.Path)
	case err != nil || hlen > len(body) || json.Unmarshal(body[:hlen], &h) != nil:
		f.bad.CompareAndSwap(nil, "header: "+string(body))
	case len(h.Inputs) != 1 || h.Inputs[0].Parameters["binary_data_size"] != float64(3) ||
		!bytes.Equal(body[hlen:], []byte{1, 2, 3}) || h.Parameters["binary_data_output"] != true || h.Parameters["k"] != "v":
		f.bad.CompareAndSwap(nil, "body: "+string(body))
	}
	time.Sleep(f.delay)
	if f.refuse {
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"error":"refused by the model"}`)
		return
	}
	io.WriteString(w, `{"model_name":"m","outputs":[]}`)
}

func httpRequestOf() *pb.ModelInferRequest {
	return &pb.ModelInferRequest{ModelName: "m", ModelVersion: "2",
		Inputs:           []*pb.ModelInferRequest_InferInputTensor{{Name: "IN", Datatype: "UINT8", Shape: []int64{3}}},
		RawInputContents: [][]byte{{1, 2, 3}},
		Parameters:       map[string]*pb.InferParameter{"k": {ParameterChoice: &pb.InferParameter_StringParam{StringParam: "v"}}}}
}

func TestHTTPModeSendsBinaryTensorsAndKeepsItsBounds(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		max  int64 // requests in flight at most
	}{
		{"concurrency", Config{Concurrency: 4, Warmup: 50 * time.Millisecond, Window: 300 * time.Millisecond}, 4},
		{"rate", Config{Rate: 500, MaxOutstanding: 3, Window: 300 * time.Millisecond}, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeHTTP{delay: 5 * time.Millisecond}
			srv := httptest.NewServer(f)
			defer srv.Close()
			cfg := tc.cfg
			cfg.Mode, cfg.Request, cfg.HTTP = HTTP, httpRequestOf(), httpClient(t, srv.URL, int(tc.max))
			res, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if bad := f.bad.Load(); bad != nil {
				t.Fatalf("malformed request: %s", bad)
			}
			if got := f.maxSeen.Load(); got != tc.max {
				t.Errorf("the server saw at most %d requests at once, want %d", got, tc.max)
			}
			if res.Requests == 0 || res.Errors != 0 || res.Responses != res.Requests || res.Latency.P50 < 5*time.Millisecond {
				t.Errorf("result %+v", res)
			}
		})
	}
}

func TestHTTPModeReportsTheServersError(t *testing.T) {
	srv := httptest.NewServer(&fakeHTTP{refuse: true})
	defer srv.Close()
	hc := httpClient(t, srv.URL, 1)
	res, err := Run(context.Background(), Config{Mode: HTTP, Request: httpRequestOf(), HTTP: hc,
		Concurrency: 1, Window: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if res.Errors == 0 || res.Errors != res.Requests || !strings.Contains(res.FirstError, "HTTP 400: refused by the model") {
		t.Errorf("errors %d of %d (%q)", res.Errors, res.Requests, res.FirstError)
	}
	typed := &pb.ModelInferRequest{ModelName: "m", Inputs: []*pb.ModelInferRequest_InferInputTensor{{Name: "IN"}}}
	if _, err := Run(context.Background(), Config{Mode: HTTP, Request: typed, HTTP: hc,
		Concurrency: 1, Window: time.Millisecond}); err == nil || !strings.Contains(err.Error(), "raw_input_contents") {
		t.Errorf("a request without raw contents: %v", err)
	}
	if _, err := Run(context.Background(), Config{Mode: HTTP, Request: typed, Concurrency: 1, Window: time.Millisecond}); err == nil {
		t.Error("HTTP mode ran without a client")
	}
}

// httpClient is a client of the test server at url keeping conns
// connections.
func httpClient(t *testing.T, url string, conns int) *client.HTTP {
	t.Helper()
	c, err := client.NewHTTP(url, conns)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}
