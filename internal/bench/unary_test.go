package bench

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/tritonhost/tritonhost/client"
)

const (
	concurrency = 16
	unaryWindow = 2 * time.Second
)

func wrapBytes(b []byte) *wrapperspb.BytesValue { return &wrapperspb.BytesValue{Value: b} }

// unaryRate runs concurrency clients calling method with req for the
// window and returns the completed calls per second. With a meter, the
// server's CPU time over the window is added to it, and the calls to
// *calls.
func unaryRate(b *testing.B, conn *grpc.ClientConn, method string, req []byte, cpu *cpuMeter, calls *int64) float64 {
	if cpu != nil {
		cpu.begin(b)
	}
	n, took := unaryRun(b, conn, method, req, concurrency)
	if cpu != nil {
		cpu.end(b)
		*calls += n
	}
	return float64(n) / took.Seconds()
}

// unaryRun runs clients calling method with req for the window and
// returns how many calls completed in how long.
func unaryRun(b *testing.B, conn *grpc.ClientConn, method string, req []byte, clients int) (int64, time.Duration) {
	var calls atomic.Int64
	ctx, cancel := context.WithTimeout(context.Background(), unaryWindow)
	defer cancel()
	var wg sync.WaitGroup
	start := time.Now()
	for range clients {
		wg.Go(func() {
			for ctx.Err() == nil {
				var resp []byte
				if err := conn.Invoke(context.Background(), method, &req, &resp); err != nil {
					b.Error(err)
					return
				}
				calls.Add(1)
			}
		})
	}
	wg.Wait()
	return calls.Load(), time.Since(start)
}

// BenchmarkUnaryRequests: identity_int32 (16 INT32 elements) through
// ModelInfer from 16 concurrent clients, against a plain unary echo of a
// message of the same size, and the same echo through a model server's
// hand-offs (EchoHandoff). One op is a 2-second window of each. It also
// reports each server's CPU time per request (cpuMeter).
func BenchmarkUnaryRequests(b *testing.B) {
	triton, echo := startTritonhost(b, false), startEcho(b)
	vals := make([]int32, 16)
	msg, err := client.Request{Model: "identity_int32", Inputs: []client.Tensor{client.Int32s("INPUT0", []int64{16}, vals...)}}.Message()
	if err != nil {
		b.Fatal(err)
	}
	tritonReq, _ := proto.Marshal(msg)
	echoReq, _ := proto.Marshal(wrapBytes(make([]byte, len(tritonReq)-2)))

	unaryRate(b, triton.conn, "/inference.GRPCInferenceService/ModelInfer", tritonReq, nil, nil)
	var ours, ceiling, handoff float64
	oursCPU, echoCPU, handCPU := &cpuMeter{p: triton}, &cpuMeter{p: echo}, &cpuMeter{p: echo}
	var oursCalls, echoCalls, handCalls int64
	b.ResetTimer()
	for b.Loop() {
		ours += unaryRate(b, triton.conn, "/inference.GRPCInferenceService/ModelInfer", tritonReq, oursCPU, &oursCalls)
		ceiling += unaryRate(b, echo.conn, "/bench.Echo/Echo", echoReq, echoCPU, &echoCalls)
		handoff += unaryRate(b, echo.conn, "/bench.Echo/EchoHandoff", echoReq, handCPU, &handCalls)
	}
	n := float64(b.N)
	report(b, "identity unary at concurrency 16", "requests/s", ours/n, ceiling/n)
	reportCPU(b, "req", oursCPU, float64(oursCalls), echoCPU, float64(echoCalls))
	reportHandoff(b, "identity unary at concurrency 16", "requests/s", "req", ours/n, handoff/n, ceiling/n, handCPU, float64(handCalls))
}
