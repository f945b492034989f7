package grpcserver

import (
	"context"

	"google.golang.org/grpc"

	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
)

// serviceDesc is the generated description of inference.GRPCInferenceService
// with the two inference methods routed to handlers that send pre-encoded
// responses (see wire.go). Names, and so the wire protocol, are unchanged.
func serviceDesc() *grpc.ServiceDesc {
	desc := pb.GRPCInferenceService_ServiceDesc
	desc.Methods = append([]grpc.MethodDesc(nil), desc.Methods...)
	for i := range desc.Methods {
		if desc.Methods[i].MethodName == "ModelInfer" {
			desc.Methods[i].Handler = modelInferHandler
		}
	}
	desc.Streams = append([]grpc.StreamDesc(nil), desc.Streams...)
	for i := range desc.Streams {
		if desc.Streams[i].StreamName == "ModelStreamInfer" {
			desc.Streams[i].Handler = func(srv any, stream grpc.ServerStream) error {
				return srv.(*Service).modelStreamInferWire(stream)
			}
		}
	}
	return &desc
}

func modelInferHandler(srv any, ctx context.Context, dec func(any) error, interceptor grpc.UnaryServerInterceptor) (any, error) {
	s := srv.(*Service)
	in := &inboundRequest{receiver: s}
	defer in.releaseBuffer() // unless resolve handed it on to the request
	if err := dec(in); err != nil {
		return nil, err
	}
	if interceptor == nil {
		return s.modelInferWire(ctx, in)
	}
	info := &grpc.UnaryServerInfo{Server: srv, FullMethod: pb.GRPCInferenceService_ModelInfer_FullMethodName}
	return interceptor(ctx, in.msg, info, func(ctx context.Context, req any) (any, error) {
		got := in
		if m, ok := req.(*pb.ModelInferRequest); ok && m != in.msg {
			got = &inboundRequest{msg: m} // an interceptor replaced the request
		}
		return s.modelInferWire(ctx, got)
	})
}
