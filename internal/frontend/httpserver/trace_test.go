package httpserver_test

import (
	"testing"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/coretest"
	"github.com/tritonhost/tritonhost/internal/frontend/httpserver"
	"github.com/tritonhost/tritonhost/internal/trace"
	"github.com/tritonhost/tritonhost/internal/trace/tracetest"
)

// newTraceHarness serves model "simple" with a trace manager set as
// Triton's trace endpoint tests start it: file global_unittest.log, level
// TIMESTAMPS, rate 1.
func newTraceHarness(t *testing.T) (*harness, string) {
	s := tracetest.UnittestSetting(t.TempDir())
	m := tracetest.NewManager(t, trace.Options{Setting: s})
	h := newHarness(t, setup{tracer: m, opts: httpserver.Options{Trace: m}}, coretest.ModelDir{Name: "simple", Config: vector("")})
	h.p.Set("simple", coretest.Echo())
	return h, s.File
}

// TestTraceSettingsOverHTTP replays Triton's trace endpoint tests over
// HTTP: the settings' shapes, a model update that follows the server's,
// clearing with null, and Triton's texts and statuses for each refusal.
func TestTraceSettingsOverHTTP(t *testing.T) {
	t.Parallel()
	h, file := newTraceHarness(t)
	initial := `{"trace_level":["TIMESTAMPS"],"trace_rate":"1","trace_count":"-1","log_frequency":"0","trace_file":"` + file + `","trace_mode":"triton"}`
	for _, path := range []string{"/v2/trace/setting", "/v2/models/simple/trace/setting"} {
		if status, _, body := h.call(t, "GET", path, nil); status != 200 || string(body) != initial {
			t.Errorf("GET %s: %d %s\nwant %s", path, status, body, initial)
		}
	}
	status, _, body := h.call(t, "POST", "/v2/models/simple/trace/setting", []byte(`{"trace_file":"model.log"}`))
	wantError(t, "trace_file", status, body, 501, "trace file location can not be updated through network protocol")
	status, _, body = h.call(t, "POST", "/v2/trace/setting", []byte(`{"trace_level":["TIMESTAMPS","TENSORS"]}`))
	both := `{"trace_level":["TIMESTAMPS","TENSORS"],"trace_rate":"1","trace_count":"-1","log_frequency":"0","trace_file":"` + file + `","trace_mode":"triton"}`
	if status != 200 || string(body) != both {
		t.Errorf("global update: %d %s", status, body)
	}
	if _, _, body := h.call(t, "GET", "/v2/models/simple/trace/setting", nil); string(body) != both {
		t.Errorf("model after the global update: %s", body)
	}
	h.call(t, "POST", "/v2/models/simple/trace/setting", []byte(`{"trace_rate":"12","log_frequency":"34"}`))
	h.call(t, "POST", "/v2/trace/setting", []byte(`{"trace_rate":null,"trace_level":null}`))
	want := `{"trace_level":["TIMESTAMPS"],"trace_rate":"12","trace_count":"-1","log_frequency":"34","trace_file":"` + file + `","trace_mode":"triton"}`
	if _, _, body := h.call(t, "GET", "/v2/models/simple/trace/setting", nil); string(body) != want {
		t.Errorf("model after the global clear: %s\nwant %s", body, want)
	}
	for _, tc := range []struct {
		path, body string
		status     int
		text       string
	}{
		{"/v2/models/does-not-exist/trace/setting", `{}`, 400, "Request for unknown model : does-not-exist"},
		{"/v2/trace/setting", `{"trace_level":["OFF","TENSORS"]}`, 400, "Expect only one trace level 'OFF' is specified"},
		{"/v2/trace/setting", `{"trace_level":"OFF"}`, 500, "attempt to access JSON non-array as array"},
		{"/v2/trace/setting", `{"trace_rate":5}`, 500, "attempt to access JSON non-string as string"},
		{"/v2/trace/setting", `{"trace_rate":"x"}`, 400, "Unable to parse 'trace_rate', got: x"},
		{"/v2/trace/setting", `{"trace_count":"-5"}`, 400, "Unable to parse 'trace_count'. Expecting value >= -1, got:-5"},
		{"/v2/trace/setting", `{"trace_rate":"0"}`, 400, "Attempting to set invalid trace setting :sample rate must be non-zero"},
	} {
		status, _, body := h.call(t, "POST", tc.path, []byte(tc.body))
		wantError(t, tc.path+" "+tc.body, status, body, tc.status, tc.text)
	}
	status, _, body = h.call(t, "PUT", "/v2/trace/setting", nil)
	wantError(t, "PUT", status, body, 405, "Method Not Allowed")
}

// TestHTTPTraceContextReachesTheTracer: the traceparent and tracestate
// headers of an infer or generate request are the request's trace context.
func TestHTTPTraceContextReachesTheTracer(t *testing.T) {
	t.Parallel()
	tracer := &coretest.Tracer{}
	h := newHarness(t, setup{tracer: tracer}, coretest.ModelDir{Name: "echo", Config: vector("")})
	h.p.Set("echo", coretest.Echo())
	tp := "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	h.call(t, "POST", "/v2/models/echo/infer", []byte(`{"inputs":[{"name":"INPUT0","datatype":"INT32","shape":[1],"data":[1]}]}`), "traceparent", tp, "tracestate", "k=v")
	h.call(t, "POST", "/v2/models/echo/generate", []byte(`{"INPUT0":[1]}`), "traceparent", tp)
	h.call(t, "POST", "/v2/models/echo/generate", []byte(`{"INPUT0":[1]}`))
	got := tracer.Wait(t, 3)
	want := []core.TraceContext{{Parent: tp, State: "k=v"}, {Parent: tp}, {}}
	for i, tr := range got {
		if tr.Data() != want[i] {
			t.Errorf("request %d: trace context %v, want %v", i, tr.Data(), want[i])
		}
	}
}
