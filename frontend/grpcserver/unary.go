package grpcserver

import (
	"context"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"tritonhost/core"
	pb "tritonhost/frontend/inferencepb"
)

// ModelInfer runs one request on a model that sends one response per
// request. Decoupled models are refused: they need ModelStreamInfer.
func (s *Service) ModelInfer(ctx context.Context, req *pb.ModelInferRequest) (*pb.ModelInferResponse, error) {
	if s.isDraining() {
		return nil, status.Error(codes.Unavailable, "server is shutting down")
	}
	ir, _, err := decodeRequest(req)
	if err != nil {
		return nil, toStatus(err)
	}
	m, err := s.core.Model(ir.Model, ir.Version)
	if err != nil {
		return nil, toStatus(err)
	}
	if m.Decoupled() {
		return nil, status.Errorf(codes.Unimplemented,
			"model %q is decoupled (model_transaction_policy { decoupled: true }) and may send any number of responses; the ModelInfer RPC takes exactly one, use ModelStreamInfer", m.Name())
	}
	ir.Version = m.Version()
	done := make(chan *core.Response, 1)
	err = s.core.Infer(ctx, ir, func(resp *core.Response, final bool) {
		if final {
			done <- resp
		}
	})
	if err != nil {
		return nil, toStatus(err)
	}
	select {
	case resp := <-done:
		if resp == nil {
			return nil, status.Errorf(codes.Internal, "model %q completed request %q without a response", m.Name(), ir.ID)
		}
		if resp.Err != nil {
			return nil, toStatus(resp.Err)
		}
		return encodeResponse(resp), nil
	case <-ctx.Done():
		return nil, status.FromContextError(ctx.Err()).Err()
	}
}
