package otlp_test

import (
	"context"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/coretest"
	"github.com/tritonhost/tritonhost/internal/testenv"
	"github.com/tritonhost/tritonhost/internal/trace"
	"github.com/tritonhost/tritonhost/internal/trace/otlp"
)

// receiver is an OTLP/HTTP trace collector: it decodes each export with
// the collector protocol's own types and keeps the spans.
type receiver struct {
	mu    sync.Mutex
	spans []*tracepb.Span
	res   []string // service.name of each export
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil || r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" {
		http.Error(w, "bad export", http.StatusBadRequest)
		return
	}
	var req coltracepb.ExportTraceServiceRequest
	if err := proto.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	rc.mu.Lock()
	for _, rs := range req.GetResourceSpans() {
		for _, a := range rs.GetResource().GetAttributes() {
			if a.GetKey() == "service.name" {
				rc.res = append(rc.res, a.GetValue().GetStringValue())
			}
		}
		for _, ss := range rs.GetScopeSpans() {
			rc.spans = append(rc.spans, ss.GetSpans()...)
		}
	}
	rc.mu.Unlock()
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

func (rc *receiver) got() ([]*tracepb.Span, []string) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return slices.Clone(rc.spans), slices.Clone(rc.res)
}

const (
	callerTraceID = "0af7651916cd43dd8448eb211c80319c"
	callerSpanID  = "b7ad6b7169203331"
)

// pipe is an ensemble running "pre" then "post", vector models.
const pipe = `platform: "ensemble"
max_batch_size: 0
input [ { name: "IN" data_type: TYPE_INT32 dims: [ -1 ] } ]
output [ { name: "OUT" data_type: TYPE_INT32 dims: [ -1 ] } ]
ensemble_scheduling { step [
  { model_name: "pre" model_version: -1 input_map { key: "INPUT0" value: "IN" } output_map { key: "OUTPUT0" value: "mid" } },
  { model_name: "post" model_version: -1 input_map { key: "INPUT0" value: "mid" } output_map { key: "OUTPUT0" value: "OUT" } } ] }
`

// TestSpansReachACollectorContinuingTheCallersTrace: a request that
// brings the caller's traceparent is exported to a real OTLP/HTTP receiver
// as a span of the caller's trace, child of the caller's span; the
// ensemble's steps are child spans of its span; each span carries its
// activities as events and Triton's attributes.
func TestSpansReachACollectorContinuingTheCallersTrace(t *testing.T) {
	t.Parallel()
	rc := &receiver{}
	collector := httptest.NewServer(rc)
	defer collector.Close()
	exp, err := otlp.New(otlp.Options{URL: collector.URL + "/v1/traces", Resource: map[string]string{"service.name": "tritonhost-test"},
		ScheduleDelay: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	s := trace.DefaultSetting()
	s.Level, s.Rate, s.Mode = core.TraceLevelTimestamps, 1, trace.ModeOpenTelemetry
	s.Rate = 1000 // the caller's context is traced whatever the rate
	m, err := trace.New(trace.Options{Setting: s, Exporter: exp})
	if err != nil {
		t.Fatal(err)
	}
	p := coretest.NewProvider().Set("pre", coretest.Echo()).Set("post", coretest.Echo())
	srv := coretest.Serve(t, core.Options{Backends: p, Tracer: m},
		coretest.ModelDir{Name: "pre", Config: coretest.VectorConfig("")}, coretest.ModelDir{Name: "post", Config: coretest.VectorConfig("")},
		coretest.ModelDir{Name: "pipe", Config: pipe})
	req := coretest.Request("pipe", "e1", coretest.Int32Input("IN", []int64{2}, 1, 2))
	req.TraceContext = core.TraceContext{Parent: "00-" + callerTraceID + "-" + callerSpanID + "-01"}
	coretest.Succeeded(t, coretest.Infer(t, srv, req))
	testenv.WaitUntil(t, "the requests to finish", func() bool { return srv.LiveRequests() == 0 })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := m.Close(ctx); err != nil { // sends what the batch processor holds
		t.Fatal(err)
	}
	spans, res := rc.got()
	byName := map[string]*tracepb.Span{}
	for _, sp := range spans {
		byName[sp.GetName()] = sp
	}
	ens, pre, post := byName["pipe"], byName["pre"], byName["post"]
	if len(spans) != 3 || ens == nil || pre == nil || post == nil {
		t.Fatalf("spans %v, want pipe, pre and post", spans)
	}
	for _, sp := range spans {
		if got := hex.EncodeToString(sp.GetTraceId()); got != callerTraceID {
			t.Errorf("span %s has trace id %s, want the caller's %s", sp.GetName(), got, callerTraceID)
		}
	}
	if got := hex.EncodeToString(ens.GetParentSpanId()); got != callerSpanID {
		t.Errorf("the request's span has parent %s, want the caller's span %s", got, callerSpanID)
	}
	for _, step := range []*tracepb.Span{pre, post} {
		if !slices.Equal(step.GetParentSpanId(), ens.GetSpanId()) {
			t.Errorf("step span %s is not a child of the ensemble's", step.GetName())
		}
	}
	var events []string
	for _, e := range pre.GetEvents() {
		events = append(events, e.GetName())
	}
	if len(events) == 0 || events[0] != "REQUEST_START" || events[len(events)-1] != "REQUEST_END" || !slices.Contains(events, "QUEUE_START") {
		t.Errorf("step events %v", events)
	}
	attrs := map[string]string{}
	for _, a := range ens.GetAttributes() {
		attrs[a.GetKey()] = a.GetValue().String()
	}
	if attrs["triton.model_name"] == "" || attrs["triton.request_id"] == "" || attrs["triton.model_version"] == "" {
		t.Errorf("attributes %v", attrs)
	}
	if ens.GetKind() != tracepb.Span_SPAN_KIND_SERVER || ens.GetEndTimeUnixNano() < ens.GetStartTimeUnixNano() {
		t.Errorf("span kind %v, %d..%d", ens.GetKind(), ens.GetStartTimeUnixNano(), ens.GetEndTimeUnixNano())
	}
	if len(res) == 0 || res[0] != "tritonhost-test" {
		t.Errorf("resource service names %v", res)
	}
}
