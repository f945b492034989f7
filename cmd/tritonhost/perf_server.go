package main

import (
	"context"
	"strconv"

	"google.golang.org/grpc"

	"github.com/tritonhost/tritonhost/client"
	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
	"github.com/tritonhost/tritonhost/internal/loadgen"
)

// modelQueries is what perf asks the server besides the load itself: the
// model's configuration and metadata (to build the request) and its
// statistics (around each window). The gRPC client and client.HTTP both
// answer them, with the same messages.
type modelQueries interface {
	ModelConfig(ctx context.Context, in *pb.ModelConfigRequest, opts ...grpc.CallOption) (*pb.ModelConfigResponse, error)
	ModelMetadata(ctx context.Context, in *pb.ModelMetadataRequest, opts ...grpc.CallOption) (*pb.ModelMetadataResponse, error)
	ModelStatistics(ctx context.Context, in *pb.ModelStatisticsRequest, opts ...grpc.CallOption) (*pb.ModelStatisticsResponse, error)
}

// perfServer is the server perf measures, over the protocol measured.
type perfServer struct {
	modelQueries
	grpc  pb.GRPCInferenceServiceClient // nil over HTTP
	http  *client.HTTP                  // nil over gRPC
	close func()
}

// dialPerfServer connects to the server at addr (host:port, or an http://
// URL for HTTP) over protocol "grpc" or "http", with room for conns
// requests in flight.
func dialPerfServer(protocol, addr string, conns int) (*perfServer, error) {
	if protocol == "http" {
		h, err := client.NewHTTP(addr, conns)
		if err != nil {
			return nil, err
		}
		return &perfServer{modelQueries: h, http: h, close: h.Close}, nil
	}
	conn, c, err := client.Dial(addr, 0)
	if err != nil {
		return nil, err
	}
	return &perfServer{modelQueries: c, grpc: c, close: func() { conn.Close() }}, nil
}

// statistics returns the statistics of every version of model.
func (s *perfServer) statistics(ctx context.Context, model string) (*pb.ModelStatisticsResponse, error) {
	return s.ModelStatistics(ctx, &pb.ModelStatisticsRequest{Name: model})
}

// target completes a load configuration with where its requests go.
func (s *perfServer) target(cfg *loadgen.Config) { cfg.Client, cfg.HTTP = s.grpc, s.http }

// versionString is --model-version as the protocols take it ("" for the
// newest).
func versionString(v int64) string {
	if v <= 0 {
		return ""
	}
	return strconv.FormatInt(v, 10)
}
