// Command echoserver is the ceiling the benchmarks compare tritonhost with:
// a plain grpc-go server on the same machine, doing no work but gRPC and
// protobuf. Messages are google.protobuf.BytesValue.
//
//   - Echo (unary) returns its request.
//   - EchoStream (bidirectional) sends back every message it receives.
//   - Fanout (bidirectional) answers each request (payload: count and size,
//     8 bytes each, little-endian) with count messages of size bytes: a
//     stricter ceiling, where the server alone produces the stream.
//   - EchoHandoff (unary) and FanoutHandoff (bidirectional) do what Echo
//     and Fanout do through the hand-offs a model server makes, and
//     nothing else: the handler hands each request to the server's one
//     instance goroutine (as a model instance runs one execution at a
//     time); for Echo the instance hands the answer back to the handler,
//     and for Fanout it hands the request to a producer thread of its own
//     (as a decoupled backend does), which hands each message through a
//     bounded queue to the stream's sender. The gap between these and the plain
//     methods is what the hand-offs cost in grpc-go, the Go runtime and
//     the kernel; the gap between tritonhost and these, what tritonhost
//     adds.
//
// With -http-address it also serves HTTP's ceiling, a plain net/http
// server: POST /v2/models/<model>/infer sends the request's body back as
// the identity model's answer comes (the JSON part's size in
// Inference-Header-Content-Length when the request sends binary tensors,
// application/json otherwise), decoding nothing.
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
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

type echoServer interface{}

// handoffQueue is how many messages a FanoutHandoff stream's queue holds
// before its producer waits (tritonhost's default stream queue).
const handoffQueue = 256

// producerThreads is how many producer threads FanoutHandoff keeps: one
// per stream of the benchmarks, and more.
const producerThreads = 64

// server serves the methods. instance is the goroutine the hand-off
// methods run their requests on; producers are the threads that produce
// FanoutHandoff's messages, each a goroutine locked to its OS thread for
// good (a decoupled backend starts a thread per request; threads kept
// alive keep the process's context-switch count, summed over its threads,
// whole).
type server struct {
	instance  chan func()
	producers chan func()
}

func newServer() *server {
	s := &server{instance: make(chan func(), 1024), producers: make(chan func(), 1024)}
	go serve(s.instance)
	for range producerThreads {
		go func() {
			runtime.LockOSThread()
			serve(s.producers)
		}()
	}
	return s
}

// serve runs what comes from work, one at a time.
func serve(work <-chan func()) {
	for w := range work {
		w()
	}
}

func (*server) echo(_ context.Context, in *wrapperspb.BytesValue) (*wrapperspb.BytesValue, error) {
	return in, nil
}

// echoHandoff answers in from the instance goroutine: two hand-offs, to
// the instance and back to the handler.
func (s *server) echoHandoff(ctx context.Context, in *wrapperspb.BytesValue) (*wrapperspb.BytesValue, error) {
	done := make(chan *wrapperspb.BytesValue, 1)
	select {
	case s.instance <- func() { done <- in }:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	select {
	case out := <-done:
		return out, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// eachFanoutRequest reads a stream's Fanout requests (payload: count and
// size) and calls f with each, until the client has sent everything (it
// returns nil), the stream fails or f does.
func eachFanoutRequest(stream grpc.ServerStream, f func(count, size uint64) error) error {
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
		if err := f(binary.LittleEndian.Uint64(req.Value), binary.LittleEndian.Uint64(req.Value[8:])); err != nil {
			return err
		}
	}
}

func (*server) fanout(stream grpc.ServerStream) error {
	return eachFanoutRequest(stream, func(count, size uint64) error {
		for range count {
			// A fresh message each time, as a real server builds each response.
			msg := &wrapperspb.BytesValue{Value: make([]byte, size)}
			if err := stream.SendMsg(msg); err != nil {
				return err
			}
		}
		return nil
	})
}

// fanoutHandoff is fanout through a model server's hand-offs: the handler
// reads requests and hands each to the instance goroutine, which hands it
// to a producer thread of its own; the producer hands every message
// to the stream's sender through a queue of handoffQueue messages. The
// stream ends once the client has sent everything and every producer has
// finished.
func (s *server) fanoutHandoff(stream grpc.ServerStream) error {
	queue := make(chan *wrapperspb.BytesValue, handoffQueue)
	sent := make(chan error, 1)
	go func() { // the sender
		var err error
		for msg := range queue {
			if err == nil {
				err = stream.SendMsg(msg)
			} // after an error, the queue is drained so producers finish
		}
		sent <- err
	}()
	var producers sync.WaitGroup
	recvErr := eachFanoutRequest(stream, func(count, size uint64) error {
		producers.Add(1)
		s.instance <- func() {
			s.producers <- func() {
				defer producers.Done()
				for range count {
					queue <- &wrapperspb.BytesValue{Value: make([]byte, size)}
				}
			}
		}
		return nil
	})
	producers.Wait()
	close(queue)
	if err := <-sent; recvErr == nil {
		return err
	}
	return recvErr
}

func (*server) echoStream(stream grpc.ServerStream) error {
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
			return srv.(*server).echo(ctx, in)
		},
	}, {
		MethodName: "EchoHandoff",
		Handler: func(srv any, ctx context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
			in := new(wrapperspb.BytesValue)
			if err := dec(in); err != nil {
				return nil, err
			}
			return srv.(*server).echoHandoff(ctx, in)
		},
	}},
	Streams: []grpc.StreamDesc{{
		StreamName:    "Fanout",
		Handler:       func(srv any, stream grpc.ServerStream) error { return srv.(*server).fanout(stream) },
		ServerStreams: true,
		ClientStreams: true,
	}, {
		StreamName:    "FanoutHandoff",
		Handler:       func(srv any, stream grpc.ServerStream) error { return srv.(*server).fanoutHandoff(stream) },
		ServerStreams: true,
		ClientStreams: true,
	}, {
		StreamName:    "EchoStream",
		Handler:       func(srv any, stream grpc.ServerStream) error { return srv.(*server).echoStream(stream) },
		ServerStreams: true,
		ClientStreams: true,
	}},
}

// inferenceHeaderContentLength is Triton's header that gives the size of
// the JSON part of a body that carries binary tensors.
const inferenceHeaderContentLength = "Inference-Header-Content-Length"

// bodies holds the buffers HTTP bodies are read into.
var bodies = sync.Pool{New: func() any { return new([]byte) }}

// httpEcho answers POST /v2/models/<model>/infer with its own body, as
// the identity model's answer: the same bytes, with the binary-tensor
// headers a binary answer has.
func httpEcho(w http.ResponseWriter, r *http.Request) {
	rest, isModels := strings.CutPrefix(r.URL.Path, "/v2/models/")
	model, isInfer := strings.CutSuffix(rest, "/infer")
	if !isModels || !isInfer || model == "" || strings.Contains(model, "/") {
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodPost {
		http.Error(w, "echoserver: infer takes POST", http.StatusMethodNotAllowed)
		return
	}
	bp := bodies.Get().(*[]byte)
	defer bodies.Put(bp)
	body := (*bp)[:0]
	for {
		if len(body) == cap(body) {
			body = append(body, 0)[:len(body)]
		}
		n, err := r.Body.Read(body[len(body):cap(body)])
		body = body[:len(body)+n]
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			http.Error(w, fmt.Sprintf("echoserver: reading the body of an infer request to model %q: %v", model, err), http.StatusBadRequest)
			return
		}
	}
	*bp = body
	h := w.Header()
	if n := r.Header.Get(inferenceHeaderContentLength); n != "" {
		h.Set(inferenceHeaderContentLength, n)
		h.Set("Content-Type", "application/octet-stream")
	} else {
		h.Set("Content-Type", "application/json")
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	_, _ = w.Write(body)
}

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	httpAddr := flag.String("http-address", "", "also serve the HTTP echo (POST /v2/models/<model>/infer) on this address")
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
	if *httpAddr != "" {
		hl, err := net.Listen("tcp", *httpAddr)
		if err != nil {
			fmt.Fprintln(os.Stderr, "echoserver:", err)
			os.Exit(1)
		}
		fmt.Printf("serving HTTP at %s\n", hl.Addr())
		go func() {
			err := (&http.Server{Handler: http.HandlerFunc(httpEcho)}).Serve(hl)
			fmt.Fprintln(os.Stderr, "echoserver: HTTP:", err)
			os.Exit(1)
		}()
	}
	lis, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "echoserver:", err)
		os.Exit(1)
	}
	g := grpc.NewServer(grpc.MaxRecvMsgSize(256<<20), grpc.MaxSendMsgSize(256<<20))
	g.RegisterService(&serviceDesc, newServer())
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
