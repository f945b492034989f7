package grpcserver_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/coretest"
	"github.com/tritonhost/tritonhost/internal/frontend/grpcserver"
	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
	"github.com/tritonhost/tritonhost/internal/protocol"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// seenParams records the string parameters of the requests model "m"
// executes, by request id.
type seenParams struct {
	mu  sync.Mutex
	got map[string][]string // id -> "name=value", sorted
}

func (s *seenParams) inspect(r *core.Request) {
	var kv []string
	for _, p := range r.Parameters() {
		if p.Type == core.ParamString {
			kv = append(kv, p.Name+"="+p.String)
		}
	}
	slices.Sort(kv)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.got[r.ID()] = kv
}

func (s *seenParams) of(id string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.got[id]
}

// TestHeaderForwardPatternForwardsMatchingMetadata: with
// Options.HeaderForward (--grpc-header-forward-pattern) the call metadata
// whose keys match, case-insensitively and anywhere in the key, become
// string parameters of each request, unary and streamed; a pattern may
// turn case sensitivity back on; without a pattern nothing is forwarded;
// a matching key that names a reserved parameter refuses the request with
// Triton's words.
func TestHeaderForwardPatternForwardsMatchingMetadata(t *testing.T) {
	t.Parallel()
	md := metadata.Pairs("my_header_1", "my_value_1", "my_header_2", "my_value_2", "header_1", "value_1",
		"my_header_3", `This is a "quoted" string with a backslash\ `)
	all := []string{"my_header_1=my_value_1", "my_header_2=my_value_2", `my_header_3=This is a "quoted" string with a backslash\ `}
	for _, tc := range []struct {
		name, pattern string
		want          []string
	}{
		{"no pattern", "", nil},
		{"prefix", "my_header.*", all},
		{"case-insensitive", "MY_HEADER.*", all},
		{"case-sensitive again", "(?-i)MY_HEADER.*", nil},
		{"unanchored", "header_2", []string{"my_header_2=my_value_2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			re, err := protocol.HeaderForwardPattern(tc.pattern)
			if err != nil {
				t.Fatal(err)
			}
			seen := &seenParams{got: map[string][]string{}}
			h := newHarness(t, setup{service: grpcserver.Options{HeaderForward: re}}, coretest.ModelDir{Name: "m", Config: vector("")})
			h.p.Set("m", coretest.Inspect(seen.inspect, coretest.Echo()))
			ctx := metadata.NewOutgoingContext(context.Background(), md)
			if _, err := h.client.ModelInfer(ctx, request("m", "unary", 1)); err != nil {
				t.Fatal(err)
			}
			st := h.openWith(t, ctx)
			st.send(request("m", "streamed", 1))
			if m := st.recv(); m.GetErrorMessage() != "" {
				t.Fatal(m.GetErrorMessage())
			}
			for _, id := range []string{"unary", "streamed"} {
				if got := forwarded(seen.of(id)); !slices.Equal(got, tc.want) {
					t.Errorf("%s request: forwarded %q, want %q", id, got, tc.want)
				}
			}
		})
	}
	t.Run("reserved", func(t *testing.T) {
		t.Parallel()
		re, _ := protocol.HeaderForwardPattern(".*")
		h := newHarness(t, setup{service: grpcserver.Options{HeaderForward: re}}, coretest.ModelDir{Name: "m", Config: vector("")})
		for _, key := range []string{"sequence_id", "priority", "timeout", "headers", "binary_data_output", "triton_enable_empty_final_response", "triton_injected_via_header"} {
			ctx := metadata.NewOutgoingContext(context.Background(), metadata.Pairs(key, "dummy-value"))
			_, err := h.client.ModelInfer(ctx, request("m", "r", 1))
			if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "reserved for Triton usage") {
				t.Errorf("header %q: %v, want INVALID_ARGUMENT ... reserved for Triton usage", key, err)
			}
		}
	})
}

// forwarded keeps the parameters a test sent as headers (the client's own
// metadata, user-agent and the rest, are not its).
func forwarded(kv []string) []string {
	var out []string
	for _, s := range kv {
		if strings.Contains(s, "header") {
			out = append(out, s)
		}
	}
	return out
}

// TestClientSharedMemoryCanBeDisallowed: with
// Options.DisallowClientSharedMemory (--allow-client-shm=false) registering
// and unregistering regions, system and CUDA, and requests that name a
// region are refused with PERMISSION_DENIED; status answers with no
// region; requests without shared memory run.
func TestClientSharedMemoryCanBeDisallowed(t *testing.T) {
	t.Parallel()
	h := newHarness(t, setup{service: grpcserver.Options{DisallowClientSharedMemory: true}}, coretest.ModelDir{Name: "m", Config: vector("")})
	ctx := context.Background()
	refused := func(what string, err error) {
		t.Helper()
		if status.Code(err) != codes.PermissionDenied || !strings.Contains(err.Error(), "--allow-client-shm") {
			t.Errorf("%s: %v, want PERMISSION_DENIED naming --allow-client-shm", what, err)
		}
	}
	_, err := h.client.SystemSharedMemoryRegister(ctx, &pb.SystemSharedMemoryRegisterRequest{Name: "r", Key: "/k", ByteSize: 4})
	refused("SystemSharedMemoryRegister", err)
	_, err = h.client.SystemSharedMemoryUnregister(ctx, &pb.SystemSharedMemoryUnregisterRequest{})
	refused("SystemSharedMemoryUnregister", err)
	_, err = h.client.CudaSharedMemoryRegister(ctx, &pb.CudaSharedMemoryRegisterRequest{Name: "r", ByteSize: 4})
	refused("CudaSharedMemoryRegister", err)
	_, err = h.client.CudaSharedMemoryUnregister(ctx, &pb.CudaSharedMemoryUnregisterRequest{})
	refused("CudaSharedMemoryUnregister", err)
	st, err := h.client.SystemSharedMemoryStatus(ctx, &pb.SystemSharedMemoryStatusRequest{})
	if err != nil || len(st.GetRegions()) != 0 {
		t.Errorf("SystemSharedMemoryStatus: %v, %v; want no regions", st, err)
	}
	shm := func() map[string]*pb.InferParameter {
		return map[string]*pb.InferParameter{"shared_memory_region": {ParameterChoice: &pb.InferParameter_StringParam{StringParam: "r"}},
			"shared_memory_byte_size": {ParameterChoice: &pb.InferParameter_Int64Param{Int64Param: 4}}}
	}
	in := request("m", "in", 1)
	in.Inputs[0].Parameters = shm()
	in.RawInputContents = nil
	_, err = h.client.ModelInfer(ctx, in)
	refused("an input in shared memory", err)
	out := request("m", "out", 1)
	out.Outputs = []*pb.ModelInferRequest_InferRequestedOutputTensor{{Name: "OUTPUT0", Parameters: shm()}}
	_, err = h.client.ModelInfer(ctx, out)
	refused("an output in shared memory", err)
	if _, err := h.client.ModelInfer(ctx, request("m", "plain", 1)); err != nil {
		t.Errorf("a request without shared memory: %v", err)
	}
}

// TestInferResponseCompression: with Options.InferResponseCompression
// (--grpc-infer-response-compression-level) the responses of ModelInfer
// and ModelStreamInfer go gzip-compressed to a client that accepts gzip,
// and uncompressed without it.
func TestInferResponseCompression(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		level int
		want  string
	}{
		{"none", 0, ""},
		{"low", 1, "gzip"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			enc := &encodings{}
			h := newHarness(t, setup{service: grpcserver.Options{InferResponseCompression: tc.level}, dial: []grpc.DialOption{grpc.WithStatsHandler(enc)}},
				coretest.ModelDir{Name: "m", Config: vector("")})
			if encoding.GetCompressor("gzip") == nil {
				t.Fatal("gzip is not registered")
			}
			if _, err := h.client.ModelInfer(context.Background(), request("m", "r", 1)); err != nil {
				t.Fatal(err)
			}
			st := h.open(t, true)
			st.send(request("m", "s", 1))
			st.recv()
			if got := enc.seen(); !slices.Equal(got, []string{tc.want, tc.want}) {
				t.Errorf("response encodings of ModelInfer and ModelStreamInfer: %q, want %q twice", got, tc.want)
			}
		})
	}
}

// encodings is a client stats handler that records the encoding of each
// response header the client receives.
type encodings struct {
	mu  sync.Mutex
	got []string
}

func (e *encodings) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context { return ctx }
func (e *encodings) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context {
	return ctx
}
func (e *encodings) HandleConn(context.Context, stats.ConnStats) {}
func (e *encodings) HandleRPC(_ context.Context, s stats.RPCStats) {
	if h, ok := s.(*stats.InHeader); ok && h.Client {
		e.mu.Lock()
		e.got = append(e.got, h.Compression)
		e.mu.Unlock()
	}
}

func (e *encodings) seen() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.got)
}

// TestMaxConnectionAgeClosesOldConnections: with Connection.MaxAge
// (--grpc-max-connection-age) the server ends a connection that has been
// open that long with a GOAWAY; the client's next call goes on a new one.
func TestMaxConnectionAgeClosesOldConnections(t *testing.T) {
	t.Parallel()
	h := newHarness(t, setup{service: grpcserver.Options{Connection: grpcserver.ConnectionLimits{MaxAge: 50 * time.Millisecond, MaxAgeGrace: time.Second}}},
		coretest.ModelDir{Name: "m", Config: vector("")})
	if _, err := h.client.ModelInfer(context.Background(), request("m", "a", 1)); err != nil {
		t.Fatal(err)
	}
	// The connection is closed by the server: the channel leaves READY
	// by itself.
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Patience)
	defer cancel()
	for s := h.conn.GetState(); s.String() == "READY"; s = h.conn.GetState() {
		if !h.conn.WaitForStateChange(ctx, s) {
			t.Fatal("the connection outlived --grpc-max-connection-age")
		}
	}
	if _, err := h.client.ModelInfer(context.Background(), request("m", "b", 1)); err != nil {
		t.Errorf("a call after the connection aged out: %v", err)
	}
}
