package loadgen

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"

	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
)

// fakeServer answers ModelInfer after delay, and each streamed request
// with perRequest responses and a final; a request whose id ends in "-3"
// fails when failEvery is set.
type fakeServer struct {
	pb.UnimplementedGRPCInferenceServiceServer
	delay      time.Duration
	perRequest int
	failEvery  bool
	inflight   atomic.Int64
	maxSeen    atomic.Int64
	answered   atomic.Int64 // unary requests answered
}

func (f *fakeServer) enter() func() {
	n := f.inflight.Add(1)
	for {
		m := f.maxSeen.Load()
		if n <= m || f.maxSeen.CompareAndSwap(m, n) {
			break
		}
	}
	return func() { f.inflight.Add(-1) }
}

func (f *fakeServer) ModelInfer(_ context.Context, req *pb.ModelInferRequest) (*pb.ModelInferResponse, error) {
	defer f.enter()()
	time.Sleep(f.delay)
	if f.failEvery && strings.HasSuffix(req.GetId(), "-3") {
		return nil, errors.New("refused")
	}
	f.answered.Add(1)
	return &pb.ModelInferResponse{Id: req.GetId()}, nil
}

func (f *fakeServer) ModelStreamInfer(st pb.GRPCInferenceService_ModelStreamInferServer) error {
	for {
		req, err := st.Recv()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		leave := f.enter()
		time.Sleep(f.delay)
		out := &pb.ModelInferResponse_InferOutputTensor{Name: "OUT"}
		for range f.perRequest {
			if err := st.Send(&pb.ModelStreamInferResponse{InferResponse: &pb.ModelInferResponse{Id: req.GetId(), Outputs: []*pb.ModelInferResponse_InferOutputTensor{out}}}); err != nil {
				return err
			}
		}
		final := &pb.ModelInferResponse{Id: req.GetId(), Parameters: map[string]*pb.InferParameter{
			"triton_final_response": {ParameterChoice: &pb.InferParameter_BoolParam{BoolParam: true}}}}
		leave()
		if err := st.Send(&pb.ModelStreamInferResponse{InferResponse: final}); err != nil {
			return err
		}
	}
}

func dialFake(t *testing.T, f *fakeServer) pb.GRPCInferenceServiceClient {
	lis := bufconn.Listen(1 << 20)
	s := grpc.NewServer()
	pb.RegisterGRPCInferenceServiceServer(s, f)
	go s.Serve(lis)
	t.Cleanup(s.Stop)
	conn, err := grpc.NewClient("passthrough:///fake", grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(context.Context, string) (net.Conn, error) { return lis.Dial() }))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return pb.NewGRPCInferenceServiceClient(conn)
}

func TestConcurrencyKeepsThatManyRequestsInFlight(t *testing.T) {
	for _, mode := range []Mode{Unary, Stream} {
		t.Run(mode.String(), func(t *testing.T) {
			f := &fakeServer{delay: 2 * time.Millisecond, perRequest: 3}
			res, err := Run(context.Background(), Config{Client: dialFake(t, f), Request: &pb.ModelInferRequest{ModelName: "m"},
				Mode: mode, Concurrency: 4, Warmup: 50 * time.Millisecond, Window: 300 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			if got := f.maxSeen.Load(); got != 4 {
				t.Errorf("the server saw at most %d requests at once, want 4", got)
			}
			if res.Requests == 0 || res.Errors != 0 || res.Concurrency != 4 {
				t.Fatalf("result %+v", res)
			}
			per := int64(1)
			if mode == Stream {
				per = 3
			}
			if res.Responses != per*res.Requests {
				t.Errorf("%d responses for %d requests, want %d each", res.Responses, res.Requests, per)
			}
			if res.Latency.P50 < 2*time.Millisecond || res.Latency.Min > res.Latency.P50 || res.Latency.P99 > res.Latency.Max {
				t.Errorf("latency %+v: the server takes 2 ms a request", res.Latency)
			}
			if mode == Stream && (res.FirstResponse.P50 == 0 || res.FirstResponse.P50 > res.Latency.P50) {
				t.Errorf("first response %+v, latency %+v", res.FirstResponse, res.Latency)
			}
			// 4 workers of about 2 ms a request: well under 4/2ms = 2000/s.
			if tp := res.Throughput(); tp <= 0 || tp > 2000 {
				t.Errorf("throughput %.0f/s", tp)
			}
		})
	}
}

func TestRateStartsRequestsOnScheduleAndBoundsWhatIsInFlight(t *testing.T) {
	for _, mode := range []Mode{Unary, Stream} {
		t.Run(mode.String(), func(t *testing.T) {
			f := &fakeServer{delay: 20 * time.Millisecond, perRequest: 2}
			res, err := Run(context.Background(), Config{Client: dialFake(t, f), Request: &pb.ModelInferRequest{ModelName: "m"},
				Mode: mode, Rate: 500, MaxOutstanding: 4, Window: 500 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			if got := f.maxSeen.Load(); got > 4 {
				t.Errorf("%d requests in flight at once, more than MaxOutstanding 4", got)
			}
			// 4 in flight of 20 ms each: at most about 200/s of the 500/s asked.
			if res.Delayed == 0 || res.Throughput() > 300 {
				t.Errorf("delayed %d, throughput %.0f/s: the server cannot keep up with 500/s", res.Delayed, res.Throughput())
			}
		})
	}
	// A fast server keeps up: no request waits for a slot, and the schedule,
	// not the server, sets the pace (a loaded machine may start fewer, never
	// more).
	f := &fakeServer{perRequest: 1}
	res, err := Run(context.Background(), Config{Client: dialFake(t, f), Request: &pb.ModelInferRequest{ModelName: "m"},
		Mode: Unary, Rate: 200, Window: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if tp := res.Throughput(); tp <= 0 || tp > 250 || res.Delayed != 0 {
		t.Errorf("a fast server at 200/s: throughput %.0f/s, %d delayed", tp, res.Delayed)
	}
}

func TestFailuresAreCountedAndNamed(t *testing.T) {
	f := &fakeServer{failEvery: true}
	res, err := Run(context.Background(), Config{Client: dialFake(t, f), Request: &pb.ModelInferRequest{ModelName: "m"},
		Mode: Unary, Concurrency: 1, Window: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if res.Errors != 1 || !strings.Contains(res.FirstError, "refused") {
		t.Errorf("errors %d (%q); want the one request with id 0-3", res.Errors, res.FirstError)
	}
	var seen []Progress
	_, err = Run(context.Background(), Config{Client: dialFake(t, f), Request: &pb.ModelInferRequest{ModelName: "m"},
		Mode: Unary, Concurrency: 1, Window: 1500 * time.Millisecond, Progress: func(p Progress) { seen = append(seen, p) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != 1 || seen[0].Requests == 0 {
		t.Errorf("progress reports %+v; want one after a second", seen)
	}
	if _, err := Run(context.Background(), Config{Request: &pb.ModelInferRequest{}}); err == nil {
		t.Error("a config without a client ran")
	}
}
