package grpcserver

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/mem"
)

// The stream sender relies on two values of grpc-go that its public API
// does not name; these tests observe them, so that an upgrade of grpc-go
// that changes them fails here rather than in production.
const (
	// assumedPoolingThreshold is the largest capacity grpc-go's mem package
	// does not pool (mem.IsBelowBufferPoolingThreshold): a unary response
	// in a pooledMessage (wire.go) and a lent output (loan.go's
	// lendsBuffer) are above it, so that gRPC hands their memory back.
	assumedPoolingThreshold = 1 << 10
	// assumedWriteQuota is grpc-go's per-stream write quota
	// (defaultWriteQuota in google.golang.org/grpc/internal/transport):
	// the bytes, gRPC's 5-byte prefixes included, that SendMsg schedules
	// before it waits for the transport to write some of them.
	assumedWriteQuota = 64 << 10
	// revisit names what depends on the values.
	revisit = "revisit wire.go's pooledMessage, loan.go's lendsBuffer, arena.go's comment and stream.go's sendHere"
)

// countingPool is a mem.BufferPool that counts what gRPC hands back.
type countingPool struct{ puts atomic.Int32 }

func (p *countingPool) Get(n int) *[]byte { b := make([]byte, n); return &b }
func (p *countingPool) Put(*[]byte)       { p.puts.Add(1) }

func TestGRPCBufferPoolingThresholdIsWhatTheMessagesAssume(t *testing.T) {
	if mem.IsBelowBufferPoolingThreshold(assumedPoolingThreshold+1) || !mem.IsBelowBufferPoolingThreshold(assumedPoolingThreshold) {
		t.Fatalf("grpc-go's buffer pooling threshold is no longer %d bytes (IsBelowBufferPoolingThreshold(%d) = %v, (%d) = %v): %s",
			assumedPoolingThreshold, assumedPoolingThreshold, mem.IsBelowBufferPoolingThreshold(assumedPoolingThreshold),
			assumedPoolingThreshold+1, mem.IsBelowBufferPoolingThreshold(assumedPoolingThreshold+1), revisit)
	}
	for _, tc := range []struct {
		name           string
		len, cap       int
		wantHandedBack bool
	}{
		{"above the threshold", assumedPoolingThreshold + 1, assumedPoolingThreshold + 1, true},
		{"at the threshold", assumedPoolingThreshold, assumedPoolingThreshold, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := new(countingPool)
			data := make([]byte, tc.len, tc.cap)
			b := mem.NewBuffer(&data, p)
			b.Free()
			if got := p.puts.Load() == 1; got != tc.wantHandedBack {
				t.Fatalf("buffer of length %d, capacity %d: handed back %d times, want handed back = %v: %s", tc.len, tc.cap, p.puts.Load(), tc.wantHandedBack, revisit)
			}
		})
	}
}

// TestGRPCWriteQuotaIsWhatTheSenderAssumes measures how many bytes a
// server stream can send to a client that reads nothing before SendMsg
// blocks: the client's stream window (fixed at HTTP/2's default, 65535)
// is written to the connection and given back to the quota; the quota
// holds the rest.
func TestGRPCWriteQuotaIsWhatTheSenderAssumes(t *testing.T) {
	const (
		window  = 65535 // HTTP/2's default initial window, which the client keeps
		payload = 1019  // with gRPC's 5-byte prefix, 1 KiB a message
		msg     = payload + 5
	)
	var sent atomic.Int64 // messages SendMsg has returned from
	big := make(chan error, 1)
	desc := grpc.ServiceDesc{
		ServiceName: "quota.Test",
		HandlerType: (*any)(nil),
		Streams: []grpc.StreamDesc{
			{StreamName: "Flood", ServerStreams: true, Handler: func(_ any, stream grpc.ServerStream) error {
				b := make([]byte, payload)
				for {
					if err := stream.SendMsg(&b); err != nil {
						return err
					}
					sent.Add(1)
				}
			}},
			{StreamName: "Big", ServerStreams: true, Handler: func(_ any, stream grpc.ServerStream) error {
				// The quota is all free: one message of any size goes
				// to gRPC without waiting, though none of it can be
				// written beyond the client's window.
				b := make([]byte, 4*assumedWriteQuota)
				err := stream.SendMsg(&b)
				big <- err
				<-stream.Context().Done()
				return err
			}},
		},
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := grpc.NewServer(grpc.ForceServerCodecV2(bytesCodec{}))
	g.RegisterService(&desc, struct{}{})
	go g.Serve(lis)
	defer g.Stop()
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithStaticStreamWindowSize(window), grpc.WithStaticConnWindowSize(16<<20),
		grpc.WithDefaultCallOptions(grpc.ForceCodecV2(bytesCodec{})))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()

	if _, err := conn.NewStream(ctx, &desc.Streams[0], "/quota.Test/Flood"); err != nil {
		t.Fatal(err)
	}
	// SendMsg blocks once the count stops moving.
	n, still := sent.Load(), 0
	for still < 5 {
		time.Sleep(100 * time.Millisecond)
		if m := sent.Load(); m != n || m == 0 {
			n, still = m, 0
			continue
		}
		still++
	}
	// The n-th message found the quota positive, the (n+1)-th did not:
	// quota+window lies in ((n-1)*msg, n*msg].
	if lo, hi := (n-1)*msg-window, n*msg-window; assumedWriteQuota <= lo || assumedWriteQuota > hi {
		t.Fatalf("%d messages of %d bytes went to gRPC before SendMsg blocked on a stream window of %d: its write quota is in (%d, %d], not %d: %s",
			n, msg, window, lo, hi, assumedWriteQuota, revisit)
	}

	if _, err := conn.NewStream(ctx, &desc.Streams[1], "/quota.Test/Big"); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-big:
		if err != nil {
			t.Fatalf("SendMsg of %d bytes on an idle stream: %v", 4*assumedWriteQuota, err)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("SendMsg of %d bytes waited on an idle stream whose client does not read: gRPC's write quota no longer lets one message through whole: %s", 4*assumedWriteQuota, revisit)
	}
}
