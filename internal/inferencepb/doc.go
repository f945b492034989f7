// Package inferencepb holds the Go types and gRPC stubs generated from
// proto/grpc_service.proto, tritonhost's copy of Triton's
// inference.GRPCInferenceService (protobuf package "inference"). Regenerate
// with `make proto`; do not edit the .pb.go files.
//
// The messages reuse the ModelConfig types of package
// tritonhost/core/configpb (ModelConfigResponse.Config is a
// *configpb.ModelConfig); there is one copy of each descriptor in the
// process, under the file paths "model_config.proto" and
// "grpc_service.proto" that Triton's clients use too.
//
// wire_test.go pins every RPC and every field against Triton's published
// proto and checks golden encodings as Triton's Python client writes them,
// so a drift in names, numbers or types fails the build's tests.
//
// Not API: the service's API is its wire protocol, Triton's, so the Go
// code generated for it is internal, shared by the gRPC frontend, package
// client, the load generator and the tests. A Go program outside this
// module talks to a server through package client, or through code it
// generates itself from Triton's grpc_service.proto.
package inferencepb
