package grpcserver_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/coretest"
	"github.com/tritonhost/tritonhost/core/serverlog"
	"github.com/tritonhost/tritonhost/internal/frontend/grpcserver"
	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// vector is a model from INPUT0 to OUTPUT0, INT32 vectors of any length.
var vector = coretest.VectorConfig

const decoupled = coretest.Decoupled

// harness is a core.Server on the coretest backend, served by a Service on
// an in-memory connection, with a client.
type harness struct {
	p      *coretest.Provider
	srv    *core.Server
	svc    *grpcserver.Service
	client pb.GRPCInferenceServiceClient
	conn   *grpc.ClientConn
	lis    *bufconn.Listener  // the server's listener, for clients of a test's own
	sent   atomic.Int64       // messages stream handlers have passed to SendMsg
	log    *testenv.LogBuffer // what the server logged
}

// setup configures a harness.
type setup struct {
	service  grpcserver.Options
	explicit bool              // explicit model control, no model loaded at start
	verbose  int               // the log's verbose level
	tracer   core.Tracer       // the core server's
	dial     []grpc.DialOption // extra client options
	// backends, when set, serves the models in place of the coretest
	// provider, which it may wrap.
	backends func(*coretest.Provider) core.BackendProvider
}

// newHarness starts everything; at cleanup the client closes, the gRPC
// server stops gracefully (every stream handler must return), the core
// server stops, and no goroutine either started may outlive them.
func newHarness(t *testing.T, cfg setup, models ...coretest.ModelDir) *harness {
	t.Helper()
	h := &harness{p: coretest.NewProvider(), log: &testenv.LogBuffer{}}
	logger := serverlog.New(h.log)
	logger.SetVerbose(cfg.verbose)
	var backends core.BackendProvider = h.p
	if cfg.backends != nil {
		backends = cfg.backends(h.p)
	}
	h.srv = coretest.Serve(t, core.Options{Backends: backends, ExplicitModelControl: cfg.explicit, Logger: logger, Tracer: cfg.tracer}, models...)
	if !h.srv.Ready() {
		t.Fatalf("a model did not load: %+v", h.srv.RepositoryIndex())
	}
	h.svc = grpcserver.New(h.srv, cfg.service)
	lis := bufconn.Listen(1 << 20)
	h.lis = lis
	g := h.svc.NewGRPCServer(grpc.StreamInterceptor(h.countSends))
	coretest.Track(t, func() { go g.Serve(lis) })
	t.Cleanup(func() {
		stopGracefully(t, g)
		// Models loaded through the RPCs run goroutines started by the
		// gRPC server's: stop the core before Track checks them.
		ctx, cancel := context.WithTimeout(context.Background(), testenv.Patience)
		defer cancel()
		if err := h.srv.Stop(ctx); err != nil {
			t.Errorf("Stop: %v", err)
		}
	})
	dial := append([]grpc.DialOption{
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
	}, cfg.dial...)
	conn, err := grpc.NewClient("passthrough:///bufconn", dial...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	h.conn, h.client = conn, pb.NewGRPCInferenceServiceClient(conn)
	return h
}

func stopGracefully(t *testing.T, g *grpc.Server) {
	done := make(chan struct{})
	go func() {
		g.GracefulStop()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(testenv.Patience):
		t.Error("the gRPC server did not stop gracefully: a stream handler never returned")
		g.Stop()
	}
}

// countSends counts the messages stream handlers hand to SendMsg.
func (h *harness) countSends(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	return handler(srv, &countingStream{ServerStream: ss, n: &h.sent})
}

type countingStream struct {
	grpc.ServerStream
	n *atomic.Int64
}

func (s *countingStream) SendMsg(m any) error {
	s.n.Add(1)
	return s.ServerStream.SendMsg(m)
}

// request returns a request of model with INPUT0 = values.
func request(model, id string, values ...int32) *pb.ModelInferRequest {
	raw := make([]byte, 0, 4*len(values))
	for _, v := range values {
		raw = binary.LittleEndian.AppendUint32(raw, uint32(v))
	}
	return &pb.ModelInferRequest{ModelName: model, Id: id,
		Inputs:           []*pb.ModelInferRequest_InferInputTensor{{Name: "INPUT0", Datatype: "INT32", Shape: []int64{int64(len(values))}}},
		RawInputContents: [][]byte{raw}}
}

// withParam adds a request parameter.
func withParam(req *pb.ModelInferRequest, name string, p *pb.InferParameter) *pb.ModelInferRequest {
	if req.Parameters == nil {
		req.Parameters = map[string]*pb.InferParameter{}
	}
	req.Parameters[name] = p
	return req
}

func boolParam(v bool) *pb.InferParameter {
	return &pb.InferParameter{ParameterChoice: &pb.InferParameter_BoolParam{BoolParam: v}}
}

func intParam(v int64) *pb.InferParameter {
	return &pb.InferParameter{ParameterChoice: &pb.InferParameter_Int64Param{Int64Param: v}}
}

// stream is a client's ModelStreamInfer call.
type stream struct {
	t      *testing.T
	s      grpc.BidiStreamingClient[pb.ModelInferRequest, pb.ModelStreamInferResponse]
	ctx    context.Context
	cancel context.CancelFunc
	msgs   chan *pb.ModelStreamInferResponse // what the reader received; closed at the end
	err    error                             // how the stream ended, once msgs is closed
}

// open starts a stream. With read set a goroutine receives its messages
// (see recv and ended); otherwise nothing reads from it.
func (h *harness) open(t *testing.T, read bool) *stream {
	t.Helper()
	return h.openIn(t, context.Background(), read)
}

// openWith starts a stream in parent (with the client's metadata) and
// reads it.
func (h *harness) openWith(t *testing.T, parent context.Context) *stream {
	t.Helper()
	return h.openIn(t, parent, true)
}

func (h *harness) openIn(t *testing.T, parent context.Context, read bool) *stream {
	t.Helper()
	ctx, cancel := context.WithCancel(parent)
	t.Cleanup(cancel)
	s, err := h.client.ModelStreamInfer(ctx)
	if err != nil {
		t.Fatal(err)
	}
	st := &stream{t: t, s: s, ctx: ctx, cancel: cancel, msgs: make(chan *pb.ModelStreamInferResponse, 64)}
	if read {
		go st.read()
	}
	return st
}

func (st *stream) read() {
	defer close(st.msgs)
	for {
		m, err := st.s.Recv()
		if err != nil {
			st.err = err
			return
		}
		select {
		case st.msgs <- m:
		case <-st.ctx.Done():
			st.err = st.ctx.Err()
			return
		}
	}
}

func (st *stream) send(reqs ...*pb.ModelInferRequest) {
	st.t.Helper()
	for _, r := range reqs {
		if err := st.s.Send(r); err != nil {
			st.t.Fatalf("Send %q: %v", r.GetId(), err)
		}
	}
}

// next returns the next message, or nil once the stream has ended.
func (st *stream) next() *pb.ModelStreamInferResponse {
	st.t.Helper()
	select {
	case m := <-st.msgs:
		return m
	case <-time.After(testenv.Patience):
		st.t.Fatal("nothing happened on the stream")
	}
	return nil
}

// recv returns the next message, failing the test if the stream ends
// first.
func (st *stream) recv() *pb.ModelStreamInferResponse {
	st.t.Helper()
	m := st.next()
	if m == nil {
		st.t.Fatalf("the stream ended (%v) while a message was due", st.err)
	}
	return m
}

// ended waits for the stream to end and returns how (io.EOF: cleanly),
// failing the test if a message arrives first.
func (st *stream) ended() error {
	st.t.Helper()
	if m := st.next(); m != nil {
		st.t.Fatalf("unexpected message %s", describe(m))
	}
	return st.err
}

// describe renders a stream message as "id index final" (index "-" when
// the response has none), or "id error: message".
func describe(m *pb.ModelStreamInferResponse) string {
	r := m.GetInferResponse()
	final := r.GetParameters()["triton_final_response"]
	if m.GetErrorMessage() != "" {
		return fmt.Sprintf("%s error: %s (final=%v)", r.GetId(), m.GetErrorMessage(), final.GetBoolParam())
	}
	index := "-"
	if p, ok := r.GetParameters()[coretest.IndexParam]; ok {
		index = fmt.Sprint(p.GetInt64Param())
	}
	return fmt.Sprintf("%s %s %v", r.GetId(), index, final.GetBoolParam())
}

// wantStatus checks that err is a gRPC status of code with exactly the
// message want.
func wantStatus(t *testing.T, what string, err error, code codes.Code, want string) {
	t.Helper()
	if st := status.Convert(err); err == nil || st.Code() != code || st.Message() != want {
		t.Errorf("%s: %v\nwant code %v and the message %q", what, err, code, want)
	}
}

// wantStatusPrefix checks that err is a gRPC status of code whose message
// starts with want (Triton's text, the server's detail after it).
func wantStatusPrefix(t *testing.T, what string, err error, code codes.Code, want string) {
	t.Helper()
	if st := status.Convert(err); err == nil || st.Code() != code || !strings.HasPrefix(st.Message(), want) {
		t.Errorf("%s: %v\nwant code %v and a message starting %q", what, err, code, want)
	}
}
