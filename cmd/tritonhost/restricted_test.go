package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	rpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"

	"github.com/tritonhost/tritonhost/client"
	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
	"github.com/tritonhost/tritonhost/internal/protocol"
)

// restrictEvery gives each category its own key, "<category>-key", and
// value, "<category>-value", with flag.
func restrictEvery(flag string) []string {
	var args []string
	for _, c := range protocol.Categories() {
		args = append(args, fmt.Sprintf("--%s=%s:%s-key=%s-value", flag, c, c, c))
	}
	return args
}

// grpcCallsByCategory are calls a real client makes, each in the category
// Triton puts it in; each returns the call's error.
func grpcCallsByCategory(c pb.GRPCInferenceServiceClient, h healthpb.HealthClient, r rpb.ServerReflectionClient) map[protocol.Category]map[string]func(context.Context) error {
	unary := func(f func(context.Context) error) func(context.Context) error { return f }
	return map[protocol.Category]map[string]func(context.Context) error{
		protocol.CategoryHealth: {
			"ServerLive":  unary(func(ctx context.Context) error { _, err := c.ServerLive(ctx, &pb.ServerLiveRequest{}); return err }),
			"ServerReady": unary(func(ctx context.Context) error { _, err := c.ServerReady(ctx, &pb.ServerReadyRequest{}); return err }),
			"ModelReady": unary(func(ctx context.Context) error {
				_, err := c.ModelReady(ctx, &pb.ModelReadyRequest{Name: "simple"})
				return err
			}),
			"Health.Check": unary(func(ctx context.Context) error { _, err := h.Check(ctx, &healthpb.HealthCheckRequest{}); return err }),
		},
		protocol.CategoryMetadata: {
			"ServerMetadata": unary(func(ctx context.Context) error {
				_, err := c.ServerMetadata(ctx, &pb.ServerMetadataRequest{})
				return err
			}),
			"ModelMetadata": unary(func(ctx context.Context) error {
				_, err := c.ModelMetadata(ctx, &pb.ModelMetadataRequest{Name: "simple"})
				return err
			}),
			"ServerReflectionInfo": func(ctx context.Context) error {
				st, err := r.ServerReflectionInfo(ctx)
				if err != nil {
					return err
				}
				defer st.CloseSend()
				// A stream the server refused may end before the request is
				// sent (Send says io.EOF); Recv has the status either way.
				if err := st.Send(&rpb.ServerReflectionRequest{MessageRequest: &rpb.ServerReflectionRequest_ListServices{}}); err != nil && err != io.EOF {
					return err
				}
				_, err = st.Recv()
				return err
			},
		},
		protocol.CategoryInference: {
			"ModelInfer": func(ctx context.Context) error {
				_, err := c.ModelInfer(ctx, &pb.ModelInferRequest{ModelName: "identity_int32", Inputs: []*pb.ModelInferRequest_InferInputTensor{
					{Name: "INPUT0", Datatype: "INT32", Shape: []int64{1}}}, RawInputContents: [][]byte{{1, 0, 0, 0}}})
				return err
			},
			"ModelStreamInfer": func(ctx context.Context) error {
				st, err := client.OpenStream(ctx, c)
				if err != nil {
					return err
				}
				defer st.CloseSend()
				if err := st.Send(client.Request{Model: "square_int32", ID: "1", Inputs: []client.Tensor{client.Int32s("IN", []int64{1}, 1)}}); err != nil && err != io.EOF {
					return err
				}
				_, err = st.Recv()
				return err
			},
		},
		protocol.CategorySharedMemory: {
			"SystemSharedMemoryStatus": unary(func(ctx context.Context) error {
				_, err := c.SystemSharedMemoryStatus(ctx, &pb.SystemSharedMemoryStatusRequest{})
				return err
			}),
			"CudaSharedMemoryStatus": unary(func(ctx context.Context) error {
				_, err := c.CudaSharedMemoryStatus(ctx, &pb.CudaSharedMemoryStatusRequest{})
				return err
			}),
		},
		protocol.CategoryModelConfig: {
			"ModelConfig": unary(func(ctx context.Context) error {
				_, err := c.ModelConfig(ctx, &pb.ModelConfigRequest{Name: "simple"})
				return err
			}),
		},
		protocol.CategoryModelRepository: {
			"RepositoryIndex": unary(func(ctx context.Context) error {
				_, err := c.RepositoryIndex(ctx, &pb.RepositoryIndexRequest{})
				return err
			}),
		},
		protocol.CategoryStatistics: {
			"ModelStatistics": unary(func(ctx context.Context) error {
				_, err := c.ModelStatistics(ctx, &pb.ModelStatisticsRequest{Name: "simple"})
				return err
			}),
		},
		protocol.CategoryTrace: {
			"TraceSetting": unary(func(ctx context.Context) error { _, err := c.TraceSetting(ctx, &pb.TraceSettingRequest{}); return err }),
		},
		protocol.CategoryLogging: {
			"LogSettings": unary(func(ctx context.Context) error { _, err := c.LogSettings(ctx, &pb.LogSettingsRequest{}); return err }),
		},
	}
}

// TestGRPCRestrictedProtocolsOfTheBinary: with every category restricted
// by a key of its own, each RPC of a category answers Triton's UNAVAILABLE
// "This protocol is restricted, expecting header
// 'triton-grpc-protocol-<key>'" to a call without metadata, with another
// category's key or with a wrong value, and passes the call that carries
// its key.
func TestGRPCRestrictedProtocolsOfTheBinary(t *testing.T) {
	t.Parallel()
	s := startServer(t, "", restrictEvery("grpc-restricted-protocol")...)
	conn, c, err := client.Dial(s.Addr, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	calls := grpcCallsByCategory(c, healthpb.NewHealthClient(conn), rpb.NewServerReflectionClient(conn))
	if len(calls) != len(protocol.Categories()) {
		t.Fatalf("calls for %d categories", len(calls))
	}
	with := func(kv ...string) context.Context {
		return metadata.NewOutgoingContext(ctxFor(t), metadata.Pairs(kv...))
	}
	for cat, byName := range calls {
		header := "triton-grpc-protocol-" + cat.String() + "-key"
		other := "triton-grpc-protocol-" + protocol.Category((int(cat)+1)%len(calls)).String() + "-key"
		refused := "This protocol is restricted, expecting header '" + header + "'"
		for name, call := range byName {
			for what, ctx := range map[string]context.Context{
				"no metadata":                ctxFor(t),
				"another's key":              with(other, strings.TrimSuffix(strings.TrimPrefix(other, "triton-grpc-protocol-"), "-key")+"-value"),
				"a wrong value":              with(header, cat.String()+"-valu"),
				"the key without its prefix": with(cat.String()+"-key", cat.String()+"-value"),
			} {
				err := call(ctx)
				if st, _ := status.FromError(err); st.Code() != codes.Unavailable || st.Message() != refused {
					t.Errorf("%s (%s) with %s: %v, want UNAVAILABLE %q", name, cat, what, err, refused)
				}
			}
			err := call(with(header, cat.String()+"-value"))
			if err != nil {
				t.Errorf("%s (%s) with its key: %v", name, cat, err)
			}
		}
	}
}

// httpRoutesByCategory are requests to routes of each category.
var httpRoutesByCategory = map[protocol.Category][]struct{ method, path, body string }{
	protocol.CategoryHealth:   {{"GET", "/v2/health/live", ""}, {"GET", "/v2/health/ready", ""}, {"GET", "/v2/models/simple/ready", ""}},
	protocol.CategoryMetadata: {{"GET", "/v2", ""}, {"GET", "/v2/models/simple", ""}, {"GET", "/v2/models/simple/versions/1", ""}},
	protocol.CategoryInference: {
		{"POST", "/v2/models/identity_int32/infer", `{"inputs":[{"name":"INPUT0","datatype":"INT32","shape":[1],"data":[3]}]}`},
		{"POST", "/v2/models/identity_int32/generate", `{"INPUT0":[3]}`},
		{"POST", "/v2/models/square_int32/generate_stream", `{"IN":[2]}`},
	},
	protocol.CategorySharedMemory: {{"GET", "/v2/systemsharedmemory/status", ""}, {"GET", "/v2/cudasharedmemory/status", ""},
		{"POST", "/v2/systemsharedmemory/unregister", ""}},
	protocol.CategoryModelConfig:     {{"GET", "/v2/models/simple/config", ""}},
	protocol.CategoryModelRepository: {{"POST", "/v2/repository/index", ""}},
	protocol.CategoryStatistics:      {{"GET", "/v2/models/stats", ""}, {"GET", "/v2/models/simple/stats", ""}},
	protocol.CategoryTrace:           {{"GET", "/v2/trace/setting", ""}, {"GET", "/v2/models/simple/trace/setting", ""}},
	protocol.CategoryLogging:         {{"GET", "/v2/logging", ""}},
}

// TestHTTPRestrictedAPIsOfTheBinary: with every category restricted by a
// key of its own, each route of a category answers Triton's 403 {"error":
// "This API is restricted, expecting header '<key>'"} without the header,
// with another category's, or with a wrong value, and serves the request
// that carries its header. Metrics, on their own port, stay open, as in Triton.
func TestHTTPRestrictedAPIsOfTheBinary(t *testing.T) {
	t.Parallel()
	s := startServer(t, "", restrictEvery("http-restricted-api")...)
	if len(httpRoutesByCategory) != len(protocol.Categories()) {
		t.Fatalf("routes for %d categories", len(httpRoutesByCategory))
	}
	for cat, routes := range httpRoutesByCategory {
		header, value := cat.String()+"-key", cat.String()+"-value"
		other := protocol.Category((int(cat) + 1) % len(httpRoutesByCategory)).String()
		want := `{"error":"This API is restricted, expecting header '` + header + `'"}`
		for _, r := range routes {
			for what, hdr := range map[string][]string{
				"no header":      nil,
				"another's key":  {other + "-key", other + "-value"},
				"a wrong value":  {header, value + "x"},
				"an empty value": {header, ""},
			} {
				status, _, body := s.httpCall(t, r.method, r.path, []byte(r.body), hdr...)
				if status != http.StatusForbidden || string(body) != want {
					t.Errorf("%s %s (%s) with %s: %d %s, want 403 %s", r.method, r.path, cat, what, status, body, want)
				}
			}
			status, _, body := s.httpCall(t, r.method, r.path, []byte(r.body), strings.ToUpper(header), value)
			if status != http.StatusOK {
				t.Errorf("%s %s (%s) with its header: %d %s, want 200", r.method, r.path, cat, status, body)
			}
		}
	}
	resp, err := http.Get("http://" + s.Metrics + "/metrics")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("metrics: %v %v", resp, err)
	}
	if resp != nil {
		resp.Body.Close()
	}
}
