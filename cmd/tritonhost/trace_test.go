package main

import (
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"

	"github.com/tritonhost/tritonhost/client"
	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
	"github.com/tritonhost/tritonhost/internal/testenv"
	"github.com/tritonhost/tritonhost/internal/trace/tracetest"
)

var simpleInputs = `{"inputs":[{"name":"INPUT0","datatype":"INT32","shape":[1,16],"data":[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15]},` +
	`{"name":"INPUT1","datatype":"INT32","shape":[1,16],"data":[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]}]}`

// TestTraceModeTritonWritesTritonsTraceFile serves with --trace-config as
// Triton's trace tests do (mode triton, a file, log-frequency 2): the
// settings read the same over both protocols, every two traces go to a new
// file, an ensemble's steps name it as their parent, a setting changed over
// HTTP takes effect (the replaced setting's last trace written to a file
// of its own), and the drop counter is on /metrics.
func TestTraceModeTritonWritesTritonsTraceFile(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "trace.json")
	s := startServer(t, "", "--trace-config", "triton,file="+file, "--trace-config", "triton,log-frequency=2",
		"--trace-config", "level=TIMESTAMPS", "--trace-config", "rate=1")
	want := `{"trace_level":["TIMESTAMPS"],"trace_rate":"1","trace_count":"-1","log_frequency":"2","trace_file":"` + file + `","trace_mode":"triton"}`
	if status, _, body := s.httpCall(t, "GET", "/v2/models/simple/trace/setting", nil); status != 200 || string(body) != want {
		t.Errorf("HTTP settings: %d %s\nwant %s", status, body, want)
	}
	resp, err := s.Client.TraceSetting(ctxFor(t), &pb.TraceSettingRequest{})
	if err != nil || strings.Join(resp.GetSettings()["trace_file"].GetValue(), "") != file || resp.GetSettings()["trace_mode"].GetValue()[0] != "triton" {
		t.Errorf("gRPC settings: %v, %v", resp, err)
	}
	// simple, then square_pipeline (an ensemble of three steps): two traces
	// of simple, one of the ensemble with its three steps' children.
	for range 2 {
		if status, _, body := s.httpCall(t, "POST", "/v2/models/simple/infer", []byte(simpleInputs)); status != 200 {
			t.Fatalf("infer: %d %s", status, body)
		}
	}
	st, err := client.OpenStream(ctxFor(t), s.Client)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Send(client.Request{Model: "square_pipeline", ID: "p1", Inputs: []client.Tensor{client.Int32s("IN", []int64{1}, 2)}}); err != nil {
		t.Fatal(err)
	}
	st.CloseSend()
	collect(t, st)
	// Tracing off over HTTP: the setting replaced, its last trace (seven
	// in all, two a file) goes to a file of its own, as Triton writes it.
	if status, _, body := s.httpCall(t, "POST", "/v2/trace/setting", []byte(`{"trace_level":["OFF"]}`)); status != 200 || !strings.Contains(string(body), `"trace_level":["OFF"]`) {
		t.Errorf("turning tracing off: %d %s", status, body)
	}
	testenv.WaitUntil(t, "four indexed trace files", func() bool {
		_, err := os.Stat(file + ".3")
		return err == nil
	})
	byModel := map[string][]map[string]any{}
	for i := range 4 {
		objs := tracetest.ReadFile(t, fmt.Sprintf("%s.%d", file, i))
		for _, o := range objs {
			if name, ok := o["model_name"].(string); ok {
				byModel[name] = append(byModel[name], o)
			}
		}
	}
	if len(byModel["simple"]) != 2 || len(byModel["square_pipeline"]) != 1 || len(byModel["identity_int32"]) != 3 || len(byModel["square_int32"]) != 1 {
		t.Fatalf("traces by model %v", byModel)
	}
	ens := byModel["square_pipeline"][0]
	for _, step := range append(byModel["identity_int32"], byModel["square_int32"]...) {
		if step["parent_id"] != ens["id"] || step["request_id"] != "p1" {
			t.Errorf("step trace %v should name the ensemble's %v as its parent", step, ens["id"])
		}
	}
	if status, _, _ := s.httpCall(t, "POST", "/v2/models/simple/infer", []byte(simpleInputs)); status != 200 {
		t.Fatal("infer after tracing stopped")
	}
	status, _, body := s.httpCall(t, "POST", "/v2/trace/setting", []byte(`{"trace_file":"x.json"}`))
	if status != 501 || !strings.Contains(string(body), "trace file location can not be updated through network protocol") {
		t.Errorf("trace_file: %d %s", status, body)
	}
	metrics, err := httpGet("http://" + s.Metrics + "/metrics")
	if err != nil || !strings.Contains(string(metrics), "tritonhost_traces_dropped_total 0") {
		t.Errorf("/metrics lacks the drop counter: %v", err)
	}
	s.Stop(t)
	if _, err := os.Stat(file + ".4"); err == nil {
		t.Errorf("a request was traced after tracing was turned off")
	}
}

// otlpReceiver is an OTLP/HTTP trace collector decoding exports with the
// collector protocol's own types.
type otlpReceiver struct {
	mu    sync.Mutex
	spans []*tracepb.Span
}

func (rc *otlpReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	var req coltracepb.ExportTraceServiceRequest
	if err == nil {
		err = proto.Unmarshal(body, &req)
	}
	if err != nil || r.URL.Path != "/v1/traces" {
		http.Error(w, fmt.Sprint("bad export: ", err), http.StatusBadRequest)
		return
	}
	rc.mu.Lock()
	for _, rs := range req.GetResourceSpans() {
		for _, ss := range rs.GetScopeSpans() {
			rc.spans = append(rc.spans, ss.GetSpans()...)
		}
	}
	rc.mu.Unlock()
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

// trace returns the spans received of one trace id.
func (rc *otlpReceiver) trace(id string) []*tracepb.Span {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var out []*tracepb.Span
	for _, s := range rc.spans {
		if hex.EncodeToString(s.GetTraceId()) == id {
			out = append(out, s)
		}
	}
	return out
}

func spanNamed(spans []*tracepb.Span, name string) *tracepb.Span {
	for _, s := range spans {
		if s.GetName() == name {
			return s
		}
	}
	return nil
}

// TestTraceModeOpenTelemetryContinuesTheCallersTrace serves in mode
// opentelemetry, exporting to a real OTLP/HTTP receiver, with a rate that
// samples nothing: requests that bring the caller's traceparent (gRPC
// metadata, HTTP header) are traced all the same, their spans in the
// caller's trace, children of the caller's span; a BLS model's call to
// "simple" is a child span of its span.
func TestTraceModeOpenTelemetryContinuesTheCallersTrace(t *testing.T) {
	t.Parallel()
	rc := &otlpReceiver{}
	collector := httptest.NewServer(rc)
	defer collector.Close()
	s := startServer(t, "", "--trace-config", "mode=opentelemetry", "--trace-config", "opentelemetry,url="+collector.URL+"/v1/traces",
		"--trace-config", "opentelemetry,bsp_schedule_delay=20", "--trace-config", "level=TIMESTAMPS", "--trace-config", "rate=1000000")
	const (
		grpcTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
		httpTrace = "0af7651916cd43dd8448eb211c80319c"
		blsTrace  = "1234567890abcdef1234567890abcdef"
		caller    = "00f067aa0ba902b7"
	)
	ctx := metadata.AppendToOutgoingContext(ctxFor(t), "traceparent", "00-"+grpcTrace+"-"+caller+"-01")
	msg, err := client.Request{Model: "identity_int32", ID: "g1", Inputs: []client.Tensor{client.Int32s("INPUT0", []int64{2}, 1, 2)}}.Message()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Client.ModelInfer(ctx, msg); err != nil {
		t.Fatal(err)
	}
	if status, _, body := s.httpCall(t, "POST", "/v2/models/simple/infer", []byte(simpleInputs), "traceparent", "00-"+httpTrace+"-"+caller+"-01"); status != 200 {
		t.Fatalf("HTTP infer: %d %s", status, body)
	}
	if status, _, body := s.httpCall(t, "POST", "/v2/models/bls_simple/infer", []byte(simpleInputs), "traceparent", "00-"+blsTrace+"-"+caller+"-01"); status != 200 {
		t.Fatalf("HTTP infer of bls_simple: %d %s", status, body)
	}
	// Without a traceparent, the rate samples nothing.
	if status, _, _ := s.httpCall(t, "POST", "/v2/models/simple/infer", []byte(simpleInputs)); status != 200 {
		t.Fatal("untraced infer failed")
	}
	testenv.WaitUntil(t, "the spans at the collector", func() bool {
		return len(rc.trace(grpcTrace)) == 1 && len(rc.trace(httpTrace)) == 1 && len(rc.trace(blsTrace)) == 2
	})
	for _, id := range []string{grpcTrace, httpTrace} {
		sp := rc.trace(id)[0]
		if hex.EncodeToString(sp.GetParentSpanId()) != caller {
			t.Errorf("span %s of trace %s has parent %x, want the caller's span %s", sp.GetName(), id, sp.GetParentSpanId(), caller)
		}
		var events []string
		for _, e := range sp.GetEvents() {
			events = append(events, e.GetName())
		}
		if !slices.Contains(events, "REQUEST_START") || !slices.Contains(events, "COMPUTE_START") || !slices.Contains(events, "REQUEST_END") {
			t.Errorf("span %s events %v", sp.GetName(), events)
		}
	}
	bls := rc.trace(blsTrace)
	outer, inner := spanNamed(bls, "bls_simple"), spanNamed(bls, "simple")
	if outer == nil || inner == nil || hex.EncodeToString(outer.GetParentSpanId()) != caller || !slices.Equal(inner.GetParentSpanId(), outer.GetSpanId()) {
		t.Errorf("BLS spans %v: want bls_simple under the caller's span and simple under bls_simple", bls)
	}
	rc.mu.Lock()
	total := len(rc.spans)
	rc.mu.Unlock()
	if total != 4 {
		t.Errorf("%d spans, want 4: a request without a traceparent is not sampled at this rate", total)
	}
	status, _, body := s.httpCall(t, "GET", "/v2/trace/setting", nil)
	if status != 200 || !strings.Contains(string(body), `"trace_mode":"opentelemetry"`) || !strings.Contains(string(body), `"url":"`+collector.URL+`/v1/traces"`) ||
		strings.Contains(string(body), "trace_file") {
		t.Errorf("settings in mode opentelemetry: %d %s", status, body)
	}
}
