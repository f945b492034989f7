package bench

import (
	"context"
	"encoding/binary"
	"fmt"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/tritonhost/tritonhost/client"
	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
)

const squareK = 10000

// squareFrame is the size of one of square's streamed responses on the
// wire, which the ceiling's messages match.
func squareFrame() int {
	r := &pb.ModelStreamInferResponse{InferResponse: &pb.ModelInferResponse{
		ModelName: "square_int32", ModelVersion: "1", Id: "0",
		Parameters:        map[string]*pb.InferParameter{client.FinalResponseParam: {ParameterChoice: &pb.InferParameter_BoolParam{}}},
		Outputs:           []*pb.ModelInferResponse_InferOutputTensor{{Name: "OUT", Datatype: "INT32", Shape: []int64{1}}},
		RawOutputContents: [][]byte{{0x10, 0x27, 0, 0}},
	}}
	return proto.Size(r)
}

// squareRequests returns, encoded, a square request for k responses and an
// empty final, and the fanout request that makes the plain server push as
// many frames of the same size.
func squareRequests(b *testing.B, k int) (square, fanout []byte) {
	req, err := client.Request{Model: "square_int32", ID: "0", Inputs: []client.Tensor{client.Int32s("IN", []int64{1}, int32(k))},
		Params: map[string]any{client.EmptyFinalParam: true}}.Message()
	if err != nil {
		b.Fatal(err)
	}
	square, _ = proto.Marshal(req)
	fan := make([]byte, 16)
	binary.LittleEndian.PutUint64(fan, uint64(k+1))
	binary.LittleEndian.PutUint64(fan[8:], uint64(squareFrame()-3)) // BytesValue adds a tag and a 2-byte length
	fanout, _ = proto.Marshal(wrapBytes(fan))
	return square, fanout
}

// streamRound sends one request on a new stream and counts frames until
// want arrived; it returns how long that took.
func streamRound(b *testing.B, conn *grpc.ClientConn, method string, req []byte, want int) time.Duration {
	took, err := tryStreamRound(conn, method, req, want)
	if err != nil {
		b.Fatal(err)
	}
	return took
}

// tryStreamRound is streamRound for any goroutine: it returns its failure.
func tryStreamRound(conn *grpc.ClientConn, method string, req []byte, want int) (time.Duration, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	desc := &grpc.StreamDesc{ServerStreams: true, ClientStreams: true}
	s, err := conn.NewStream(ctx, desc, method)
	if err != nil {
		return 0, err
	}
	start := time.Now()
	if err := s.SendMsg(&req); err != nil {
		return 0, err
	}
	for n := 0; n < want; n++ {
		var frame []byte
		if err := s.RecvMsg(&frame); err != nil {
			return 0, fmt.Errorf("after %d of %d frames: %w", n, want, err)
		}
	}
	elapsed := time.Since(start)
	s.CloseSend()
	return elapsed, nil
}

// echoRound sends n frames of frame on a new EchoStream (from a second
// goroutine, pipelined) and receives the n echoes; it returns how long that
// took.
func echoRound(b *testing.B, conn *grpc.ClientConn, frame []byte, n int) time.Duration {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := conn.NewStream(ctx, &grpc.StreamDesc{ServerStreams: true, ClientStreams: true}, "/bench.Echo/EchoStream")
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	sent := make(chan error, 1)
	go func() {
		for range n {
			if err := s.SendMsg(&frame); err != nil {
				sent <- err
				return
			}
		}
		sent <- s.CloseSend()
	}()
	for i := 0; i < n; i++ {
		var got []byte
		if err := s.RecvMsg(&got); err != nil {
			b.Fatalf("after %d of %d echoes: %v", i, n, err)
		}
	}
	elapsed := time.Since(start)
	if err := <-sent; err != nil {
		b.Fatal(err)
	}
	return elapsed
}

// BenchmarkStreamResponses: square with k = 10000 on one stream (10000
// responses and an empty final), in the same run as two ceilings on one
// plain grpc-go stream with frames of the same size: an echo stream (the
// client sends 10001 frames and the server sends each back) and a fanout
// (the server alone sends 10001 frames), and a third, FanoutHandoff, that
// pushes them through a model server's hand-offs. One op is one round of
// each. It also reports the CPU time per response of tritonhost and of the
// plain server's two pushing methods (cpuMeter).
func BenchmarkStreamResponses(b *testing.B) {
	triton, echo := startTritonhost(b, false), startEcho(b)
	tritonReq, fanReq := squareRequests(b, squareK)
	frame, _ := proto.Marshal(wrapBytes(make([]byte, squareFrame()-3)))

	// Warm all up (connections, backend threads, allocator).
	streamRound(b, triton.conn, "/inference.GRPCInferenceService/ModelStreamInfer", tritonReq, squareK+1)
	streamRound(b, echo.conn, "/bench.Echo/Fanout", fanReq, squareK+1)
	echoRound(b, echo.conn, frame, squareK+1)
	streamRound(b, echo.conn, "/bench.Echo/FanoutHandoff", fanReq, squareK+1)
	var ours, echoed, fanned, handed time.Duration
	oursCPU, fanCPU, handCPU := &cpuMeter{p: triton}, &cpuMeter{p: echo}, &cpuMeter{p: echo}
	b.ResetTimer()
	for b.Loop() {
		oursCPU.begin(b)
		ours += streamRound(b, triton.conn, "/inference.GRPCInferenceService/ModelStreamInfer", tritonReq, squareK+1)
		oursCPU.end(b)
		echoed += echoRound(b, echo.conn, frame, squareK+1)
		fanCPU.begin(b)
		fanned += streamRound(b, echo.conn, "/bench.Echo/Fanout", fanReq, squareK+1)
		fanCPU.end(b)
		handCPU.begin(b)
		handed += streamRound(b, echo.conn, "/bench.Echo/FanoutHandoff", fanReq, squareK+1)
		handCPU.end(b)
	}
	n := float64(b.N) * (squareK + 1)
	rate := n / ours.Seconds()
	report(b, "square k=10000 on one stream vs echo stream", "responses/s", rate, n/echoed.Seconds())
	b.ReportMetric(rate/(n/fanned.Seconds()), "ratio-vs-fanout")
	fmt.Printf("square k=10000 on one stream vs server-push fanout: tritonhost %.0f responses/s, fanout %.0f responses/s, ratio %.2f\n",
		rate, n/fanned.Seconds(), rate/(n/fanned.Seconds()))
	reportCPU(b, "resp", oursCPU, n, fanCPU, n)
	reportHandoff(b, "square k=10000 on one stream", "responses/s", "resp", rate, n/handed.Seconds(), n/fanned.Seconds(), handCPU, n)
}

// streamsK is what each of the concurrent streams asks of square.
const (
	streams  = 16
	streamsK = 2500
)

// concurrentRounds runs n stream rounds of method at once and returns how
// long they took together.
func concurrentRounds(b *testing.B, n int, conn *grpc.ClientConn, method string, req []byte, want int) time.Duration {
	errs := make(chan error, n)
	start := time.Now()
	for range n {
		go func() {
			_, err := tryStreamRound(conn, method, req, want)
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			b.Fatal(err)
		}
	}
	return time.Since(start)
}

// BenchmarkConcurrentStreams: 16 streams on one connection, each asking
// square for k = 2500 responses (and an empty final) at once, in the same
// run as 16 concurrent fanout streams of the plain grpc-go server pushing
// the same frames, and 16 of its FanoutHandoff streams, which push them
// through a model server's hand-offs. One op is one round of each. It
// also reports the servers' CPU time per response (cpuMeter).
func BenchmarkConcurrentStreams(b *testing.B) {
	triton, echo := startTritonhost(b, false), startEcho(b)
	tritonReq, fanReq := squareRequests(b, streamsK)
	ours := func() time.Duration {
		return concurrentRounds(b, streams, triton.conn, "/inference.GRPCInferenceService/ModelStreamInfer", tritonReq, streamsK+1)
	}
	fanout := func() time.Duration {
		return concurrentRounds(b, streams, echo.conn, "/bench.Echo/Fanout", fanReq, streamsK+1)
	}
	handoff := func() time.Duration {
		return concurrentRounds(b, streams, echo.conn, "/bench.Echo/FanoutHandoff", fanReq, streamsK+1)
	}
	ours() // warm-up
	fanout()
	handoff()
	var oursTook, fanTook, handTook time.Duration
	oursCPU, fanCPU, handCPU := &cpuMeter{p: triton}, &cpuMeter{p: echo}, &cpuMeter{p: echo}
	b.ResetTimer()
	for b.Loop() {
		oursCPU.begin(b)
		oursTook += ours()
		oursCPU.end(b)
		fanCPU.begin(b)
		fanTook += fanout()
		fanCPU.end(b)
		handCPU.begin(b)
		handTook += handoff()
		handCPU.end(b)
	}
	n := float64(b.N) * streams * (streamsK + 1)
	what := fmt.Sprintf("square k=%d on %d concurrent streams", streamsK, streams)
	report(b, what+" vs server-push fanout", "responses/s", n/oursTook.Seconds(), n/fanTook.Seconds())
	reportCPU(b, "resp", oursCPU, n, fanCPU, n)
	reportHandoff(b, what, "responses/s", "resp", n/oursTook.Seconds(), n/handTook.Seconds(), n/fanTook.Seconds(), handCPU, n)
}
