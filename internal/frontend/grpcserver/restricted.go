package grpcserver

import (
	"context"
	"fmt"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/tap"

	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
	"github.com/tritonhost/tritonhost/internal/protocol"
)

// methodCategories puts every RPC the server registers in Triton's
// restricted-protocol category. Server reflection, which Triton does not
// serve, describes the server and goes with metadata. A test checks that
// every registered method is here.
var methodCategories = map[string]protocol.Category{
	pb.GRPCInferenceService_ServerLive_FullMethodName:                   protocol.CategoryHealth,
	pb.GRPCInferenceService_ServerReady_FullMethodName:                  protocol.CategoryHealth,
	pb.GRPCInferenceService_ModelReady_FullMethodName:                   protocol.CategoryHealth,
	healthpb.Health_Check_FullMethodName:                                protocol.CategoryHealth,
	healthpb.Health_List_FullMethodName:                                 protocol.CategoryHealth,
	healthpb.Health_Watch_FullMethodName:                                protocol.CategoryHealth,
	pb.GRPCInferenceService_ServerMetadata_FullMethodName:               protocol.CategoryMetadata,
	pb.GRPCInferenceService_ModelMetadata_FullMethodName:                protocol.CategoryMetadata,
	"/grpc.reflection.v1.ServerReflection/ServerReflectionInfo":         protocol.CategoryMetadata,
	"/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo":    protocol.CategoryMetadata,
	pb.GRPCInferenceService_ModelInfer_FullMethodName:                   protocol.CategoryInference,
	pb.GRPCInferenceService_ModelStreamInfer_FullMethodName:             protocol.CategoryInference,
	pb.GRPCInferenceService_SystemSharedMemoryStatus_FullMethodName:     protocol.CategorySharedMemory,
	pb.GRPCInferenceService_SystemSharedMemoryRegister_FullMethodName:   protocol.CategorySharedMemory,
	pb.GRPCInferenceService_SystemSharedMemoryUnregister_FullMethodName: protocol.CategorySharedMemory,
	pb.GRPCInferenceService_CudaSharedMemoryStatus_FullMethodName:       protocol.CategorySharedMemory,
	pb.GRPCInferenceService_CudaSharedMemoryRegister_FullMethodName:     protocol.CategorySharedMemory,
	pb.GRPCInferenceService_CudaSharedMemoryUnregister_FullMethodName:   protocol.CategorySharedMemory,
	pb.GRPCInferenceService_ModelConfig_FullMethodName:                  protocol.CategoryModelConfig,
	pb.GRPCInferenceService_RepositoryIndex_FullMethodName:              protocol.CategoryModelRepository,
	pb.GRPCInferenceService_RepositoryModelLoad_FullMethodName:          protocol.CategoryModelRepository,
	pb.GRPCInferenceService_RepositoryModelUnload_FullMethodName:        protocol.CategoryModelRepository,
	pb.GRPCInferenceService_ModelStatistics_FullMethodName:              protocol.CategoryStatistics,
	pb.GRPCInferenceService_TraceSetting_FullMethodName:                 protocol.CategoryTrace,
	pb.GRPCInferenceService_LogSettings_FullMethodName:                  protocol.CategoryLogging,
}

// restrictedOptions returns the server option that enforces rs: a call to
// a restricted method without its header ("triton-grpc-protocol-<key>")
// and value ends with UNAVAILABLE "This protocol is restricted, expecting
// header '<header>'", Triton's answer. The check runs when the call's
// headers arrive, before the server reads any of its messages, so a client
// without the key cannot make the server read or decode a request. With
// nothing restricted it returns no option.
func restrictedOptions(rs *protocol.Restrictions) []grpc.ServerOption {
	if rs.Empty() {
		return nil
	}
	return []grpc.ServerOption{grpc.InTapHandle(func(ctx context.Context, info *tap.Info) (context.Context, error) {
		return ctx, checkRestricted(rs, info.FullMethodName, info.Header.Get)
	})}
}

// checkRestricted refuses a call to method whose header, as get reads it,
// does not grant its category. Methods the server does not serve pass:
// gRPC answers them UNIMPLEMENTED.
func checkRestricted(rs *protocol.Restrictions, method string, get func(string) []string) error {
	c, ok := methodCategories[method]
	if !ok {
		return nil
	}
	r, ok := rs.For(c)
	if !ok || r.Allows(get(r.Header)) {
		return nil
	}
	return status.Error(codes.Unavailable, fmt.Sprintf("This protocol is restricted, expecting header '%s'", r.Header))
}
