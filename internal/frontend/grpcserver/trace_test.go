package grpcserver_test

import (
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/coretest"
	"github.com/tritonhost/tritonhost/internal/frontend/grpcserver"
	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
	"github.com/tritonhost/tritonhost/internal/trace"
	"github.com/tritonhost/tritonhost/internal/trace/tracetest"
)

func settingsOf(r *pb.TraceSettingResponse) map[string][]string {
	out := map[string][]string{}
	for k, v := range r.GetSettings() {
		out[k] = v.GetValue()
	}
	return out
}

func update(settings map[string][]string) map[string]*pb.TraceSettingRequest_SettingValue {
	out := map[string]*pb.TraceSettingRequest_SettingValue{}
	for k, v := range settings {
		out[k] = &pb.TraceSettingRequest_SettingValue{Value: v}
	}
	return out
}

// TestTraceSettingOverGRPC replays Triton's trace endpoint tests over
// gRPC: the settings as SettingValue lists, an empty list clearing, and
// Triton's texts and codes for each refusal.
func TestTraceSettingOverGRPC(t *testing.T) {
	t.Parallel()
	s := tracetest.UnittestSetting(t.TempDir())
	file := s.File
	m := tracetest.NewManager(t, trace.Options{Setting: s})
	h := newHarness(t, setup{tracer: m, service: grpcserver.Options{Trace: m}}, coretest.ModelDir{Name: "simple", Config: vector("")})
	ctx := t.Context()
	initial := map[string][]string{"trace_level": {"TIMESTAMPS"}, "trace_rate": {"1"}, "trace_count": {"-1"}, "log_frequency": {"0"},
		"trace_file": {file}, "trace_mode": {"triton"}}
	for _, model := range []string{"", "simple"} {
		resp, err := h.client.TraceSetting(ctx, &pb.TraceSettingRequest{ModelName: model})
		if err != nil || !equalSettings(settingsOf(resp), initial) {
			t.Errorf("%q: %v, %v", model, settingsOf(resp), err)
		}
	}
	resp, err := h.client.TraceSetting(ctx, &pb.TraceSettingRequest{ModelName: "simple", Settings: update(map[string][]string{"trace_rate": {"12"}, "log_frequency": {"34"}})})
	if err != nil || settingsOf(resp)["trace_rate"][0] != "12" {
		t.Fatalf("model update: %v, %v", settingsOf(resp), err)
	}
	resp, err = h.client.TraceSetting(ctx, &pb.TraceSettingRequest{ModelName: "simple", Settings: update(map[string][]string{"trace_rate": {}})})
	if err != nil || settingsOf(resp)["trace_rate"][0] != "1" || settingsOf(resp)["log_frequency"][0] != "34" {
		t.Errorf("model clear of trace_rate: %v, %v", settingsOf(resp), err)
	}
	for _, tc := range []struct {
		req  *pb.TraceSettingRequest
		code codes.Code
		text string
	}{
		{&pb.TraceSettingRequest{ModelName: "does-not-exist"}, codes.InvalidArgument, "Request for unknown model : does-not-exist"},
		{&pb.TraceSettingRequest{Settings: update(map[string][]string{"trace_file": {"model.log"}})}, codes.Unimplemented, "trace file location can not be updated through network protocol"},
		{&pb.TraceSettingRequest{Settings: update(map[string][]string{"trace_count": {"-2"}})}, codes.InvalidArgument, "Unable to parse 'trace_count'. Expecting value >= -1, got: -2"},
		{&pb.TraceSettingRequest{Settings: update(map[string][]string{"trace_rate": {"1", "2"}})}, codes.InvalidArgument, "expect only 1 value for 'trace_rate'"},
	} {
		_, err := h.client.TraceSetting(ctx, tc.req)
		wantStatus(t, tc.text, err, tc.code, tc.text)
	}
}

func equalSettings(a, b map[string][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if len(b[k]) != len(v) || (len(v) > 0 && b[k][0] != v[0]) {
			return false
		}
	}
	return true
}

// TestGRPCTraceContextReachesTheTracer: traceparent and tracestate in a
// call's metadata are the trace context of its requests, unary and
// streamed.
func TestGRPCTraceContextReachesTheTracer(t *testing.T) {
	t.Parallel()
	tracer := &coretest.Tracer{}
	h := newHarness(t, setup{tracer: tracer}, coretest.ModelDir{Name: "echo", Config: vector("")})
	tp := "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	ctx := metadata.AppendToOutgoingContext(t.Context(), "traceparent", tp, "tracestate", "k=v")
	if _, err := h.client.ModelInfer(ctx, request("echo", "u", 1)); err != nil {
		t.Fatal(err)
	}
	s, err := h.client.ModelStreamInfer(metadata.AppendToOutgoingContext(t.Context(), "traceparent", tp))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Send(request("echo", "s", 2)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Recv(); err != nil {
		t.Fatal(err)
	}
	s.CloseSend()
	got := tracer.Wait(t, 2)
	byID := map[string]any{}
	for _, tr := range got {
		byID[tr.RequestID] = tr.Data()
	}
	if byID["u"] != (core.TraceContext{Parent: tp, State: "k=v"}) || byID["s"] != (core.TraceContext{Parent: tp}) {
		t.Errorf("trace contexts %v", byID)
	}
}
