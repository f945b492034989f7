package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"tritonhost/client"
	"tritonhost/core/configpb"
	pb "tritonhost/frontend/inferencepb"
	"tritonhost/loadgen"
)

// perfServer is what perf asks the server besides the load itself: the
// model's configuration and metadata (to build the request) and its
// statistics (before and after each level), over the protocol measured.
type perfServer interface {
	config(ctx context.Context, model, version string) (*pb.ModelConfigResponse, error)
	metadata(ctx context.Context, model, version string) (*pb.ModelMetadataResponse, error)
	statistics(ctx context.Context, model string) (*pb.ModelStatisticsResponse, error)
	// target completes a load configuration with where its requests go.
	target(cfg *loadgen.Config)
	close()
}

// dialPerfServer connects to the server at addr (host:port, or an http://
// URL for HTTP) over protocol "grpc" or "http".
func dialPerfServer(protocol, addr string, conns int) (perfServer, error) {
	if protocol == "http" {
		base := addr
		if !strings.Contains(base, "://") {
			base = "http://" + base
		}
		u, err := url.Parse(base)
		if err != nil || u.Host == "" || u.Scheme != "http" {
			return nil, fmt.Errorf("--url %q: want HOST:PORT or http://HOST:PORT", addr)
		}
		return &httpPerfServer{base: strings.TrimSuffix(base, "/"), client: loadgen.NewHTTPClient(conns)}, nil
	}
	conn, c, err := client.Dial(addr, 0)
	if err != nil {
		return nil, err
	}
	return &grpcPerfServer{conn: conn, c: c}, nil
}

type grpcPerfServer struct {
	conn *grpc.ClientConn
	c    pb.GRPCInferenceServiceClient
}

func (g *grpcPerfServer) config(ctx context.Context, model, version string) (*pb.ModelConfigResponse, error) {
	return g.c.ModelConfig(ctx, &pb.ModelConfigRequest{Name: model, Version: version})
}

func (g *grpcPerfServer) metadata(ctx context.Context, model, version string) (*pb.ModelMetadataResponse, error) {
	return g.c.ModelMetadata(ctx, &pb.ModelMetadataRequest{Name: model, Version: version})
}

func (g *grpcPerfServer) statistics(ctx context.Context, model string) (*pb.ModelStatisticsResponse, error) {
	return g.c.ModelStatistics(ctx, &pb.ModelStatisticsRequest{Name: model})
}

func (g *grpcPerfServer) target(cfg *loadgen.Config) { cfg.Client = g.c }

func (g *grpcPerfServer) close() { g.conn.Close() }

// httpPerfServer reads Triton's HTTP/REST routes, whose JSON bodies have
// the fields of the gRPC messages (protojson reads them).
type httpPerfServer struct {
	base   string
	client *http.Client
}

func (h *httpPerfServer) get(ctx context.Context, path string, into proto.Message) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, h.base+path, nil)
	if err != nil {
		return err
	}
	resp, err := h.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("GET %s: %w", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(body, &e) == nil && e.Error != "" {
			return fmt.Errorf("GET %s: HTTP %d: %s", path, resp.StatusCode, e.Error)
		}
		return fmt.Errorf("GET %s: HTTP %d", path, resp.StatusCode)
	}
	if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(body, into); err != nil {
		return fmt.Errorf("GET %s: %w", path, err)
	}
	return nil
}

// modelPath is /v2/models/<model>[/versions/<version>].
func modelPath(model, version string) string {
	p := "/v2/models/" + url.PathEscape(model)
	if version != "" {
		p += "/versions/" + url.PathEscape(version)
	}
	return p
}

func (h *httpPerfServer) config(ctx context.Context, model, version string) (*pb.ModelConfigResponse, error) {
	resp := &pb.ModelConfigResponse{Config: new(configpb.ModelConfig)}
	return resp, h.get(ctx, modelPath(model, version)+"/config", resp.Config)
}

func (h *httpPerfServer) metadata(ctx context.Context, model, version string) (*pb.ModelMetadataResponse, error) {
	resp := &pb.ModelMetadataResponse{}
	return resp, h.get(ctx, modelPath(model, version), resp)
}

func (h *httpPerfServer) statistics(ctx context.Context, model string) (*pb.ModelStatisticsResponse, error) {
	resp := &pb.ModelStatisticsResponse{}
	return resp, h.get(ctx, modelPath(model, "")+"/stats", resp)
}

func (h *httpPerfServer) target(cfg *loadgen.Config) {
	cfg.HTTP = &loadgen.HTTPTarget{URL: h.base, Client: h.client}
}

func (h *httpPerfServer) close() { h.client.CloseIdleConnections() }

// versionString is --model-version as the protocols take it ("" for the
// newest).
func versionString(v int64) string {
	if v <= 0 {
		return ""
	}
	return strconv.FormatInt(v, 10)
}
