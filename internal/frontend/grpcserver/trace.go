package grpcserver

import (
	"context"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/tritonhost/tritonhost/core"
	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
	"github.com/tritonhost/tritonhost/internal/trace"
)

// TraceSetting reads, and with settings updates, the server's trace
// setting or, with model_name, a model's, as Triton's trace extension: an
// empty value list clears a setting; the answer is the setting in force
// afterwards (trace_level, trace_rate, trace_count, log_frequency and
// trace_file in mode triton, trace_mode, the mode's options).
func (s *Service) TraceSetting(_ context.Context, req *pb.TraceSettingRequest) (*pb.TraceSettingResponse, error) {
	if s.opts.Trace == nil {
		return nil, status.Error(codes.Unavailable, "the server does not support trace")
	}
	if err := checkMap(req, len(req.GetSettings())); err != nil {
		return nil, toStatus(err)
	}
	if name := req.GetModelName(); name != "" {
		if m, err := s.core.Model(name, 0); err != nil || m.Readiness() != core.ModelReady {
			return nil, toStatus(trace.UnknownModel(name))
		}
	}
	if len(req.GetSettings()) > 0 {
		settings := make(map[string][]string, len(req.GetSettings()))
		for k, v := range req.GetSettings() {
			settings[k] = nil
			if len(v.GetValue()) > 0 {
				settings[k] = v.GetValue()
			}
		}
		u, err := trace.ParseUpdate(settings, trace.GRPC)
		if err == nil {
			err = s.opts.Trace.Update(req.GetModelName(), u)
		}
		if err != nil {
			return nil, toStatus(err)
		}
	}
	setting, opts := s.opts.Trace.Setting(req.GetModelName())
	resp := &pb.TraceSettingResponse{Settings: map[string]*pb.TraceSettingResponse_SettingValue{}}
	for _, v := range trace.Response(setting, opts) {
		resp.Settings[v.Name] = &pb.TraceSettingResponse_SettingValue{Value: v.Values}
	}
	return resp, nil
}

// traceContext returns the W3C trace context a client sent in the call's
// metadata (traceparent, tracestate), for a tracer to continue its trace.
func traceContext(ctx context.Context) core.TraceContext {
	var tc core.TraceContext
	if v := metadata.ValueFromIncomingContext(ctx, "traceparent"); len(v) > 0 {
		tc.Parent = v[0]
		if st := metadata.ValueFromIncomingContext(ctx, "tracestate"); len(st) > 0 {
			tc.State = st[0]
		}
	}
	return tc
}
