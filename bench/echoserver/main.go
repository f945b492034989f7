// Command echoserver is the ceiling the benchmarks compare tritonhost with:
// a plain grpc-go server on the same machine, doing no work but gRPC and
// protobuf. Messages are google.protobuf.BytesValue.
//
//   - Echo (unary) returns its request.
//   - EchoStream (bidirectional) sends back every message it receives.
//   - Fanout (bidirectional) answers each request (payload: count and size,
//     8 bytes each, little-endian) with count messages of size bytes: a
//     stricter ceiling, where the server alone produces the stream.
//
// With -debug-address it serves Go's pprof profiles, so the benchmarks can
// read its allocation counters as they read tritonhost's.
package main

import (
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	_ "net/http/pprof"
	"os"
	"os/signal"
	"syscall"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

type echoServer interface{}

type server struct{}

func (server) echo(_ context.Context, in *wrapperspb.BytesValue) (*wrapperspb.BytesValue, error) {
	return in, nil
}

func (server) fanout(stream grpc.ServerStream) error {
	for {
		req := new(wrapperspb.BytesValue)
		if err := stream.RecvMsg(req); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		if len(req.Value) != 16 {
			return fmt.Errorf("fanout request must be 16 bytes, got %d", len(req.Value))
		}
		count := binary.LittleEndian.Uint64(req.Value)
		size := binary.LittleEndian.Uint64(req.Value[8:])
		for range count {
			// A fresh message each time, as a real server builds each response.
			msg := &wrapperspb.BytesValue{Value: make([]byte, size)}
			if err := stream.SendMsg(msg); err != nil {
				return err
			}
		}
	}
}

func (server) echoStream(stream grpc.ServerStream) error {
	for {
		msg := new(wrapperspb.BytesValue)
		if err := stream.RecvMsg(msg); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		if err := stream.SendMsg(msg); err != nil {
			return err
		}
	}
}

var serviceDesc = grpc.ServiceDesc{
	ServiceName: "bench.Echo",
	HandlerType: (*echoServer)(nil),
	Methods: []grpc.MethodDesc{{
		MethodName: "Echo",
		Handler: func(srv any, ctx context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
			in := new(wrapperspb.BytesValue)
			if err := dec(in); err != nil {
				return nil, err
			}
			return srv.(server).echo(ctx, in)
		},
	}},
	Streams: []grpc.StreamDesc{{
		StreamName:    "Fanout",
		Handler:       func(srv any, stream grpc.ServerStream) error { return srv.(server).fanout(stream) },
		ServerStreams: true,
		ClientStreams: true,
	}, {
		StreamName:    "EchoStream",
		Handler:       func(srv any, stream grpc.ServerStream) error { return srv.(server).echoStream(stream) },
		ServerStreams: true,
		ClientStreams: true,
	}},
}

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	debug := flag.String("debug-address", "", "serve Go's pprof profiles (and the heap profile's MemStats) on this address")
	flag.Parse()
	if *debug != "" {
		dl, err := net.Listen("tcp", *debug)
		if err != nil {
			fmt.Fprintln(os.Stderr, "echoserver:", err)
			os.Exit(1)
		}
		fmt.Printf("Started diagnostics (pprof) at %s\n", dl.Addr())
		go http.Serve(dl, nil) // net/http/pprof's handlers
	}
	lis, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "echoserver:", err)
		os.Exit(1)
	}
	g := grpc.NewServer(grpc.MaxRecvMsgSize(256<<20), grpc.MaxSendMsgSize(256<<20))
	g.RegisterService(&serviceDesc, server{})
	fmt.Printf("listening on %s\n", lis.Addr())
	go func() {
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
		<-sig
		g.Stop()
	}()
	if err := g.Serve(lis); err != nil {
		fmt.Fprintln(os.Stderr, "echoserver:", err)
		os.Exit(1)
	}
}
