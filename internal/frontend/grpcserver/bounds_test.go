package grpcserver_test

import (
	"encoding/binary"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tritonhost/tritonhost/core/coretest"
	"github.com/tritonhost/tritonhost/internal/frontend/grpcserver"
	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// smallWindows keep gRPC's flow-control windows at their minimum, so that a
// client that does not read fills them after a few responses.
var smallWindows = []grpc.DialOption{grpc.WithInitialWindowSize(64 << 10), grpc.WithInitialConnWindowSize(64 << 10)}

// TestNonReadingClientIsCutOffAndTheModelServesOthers: a client that sends
// requests and never reads its responses fills its stream; the instance
// answering inside Execute waits for room at most the stall timeout, then
// the stream is cut off and the model goes on serving a second client on
// the same connection.
func TestNonReadingClientIsCutOffAndTheModelServesOthers(t *testing.T) {
	t.Parallel()
	h := newHarness(t, setup{
		service: grpcserver.Options{Stream: grpcserver.StreamLimits{MaxResponses: 2, MaxResponseBytes: 64 << 10, StallTimeout: 200 * time.Millisecond}},
		dial:    smallWindows,
	}, coretest.ModelDir{Name: "echo", Config: vector("")})
	hog := h.open(t, false)
	big := make([]int32, 16<<10) // 64 KiB a response
	// The hog sends from a goroutine of its own, as a real client does: once
	// the server has cut the stream off and stopped reading it, a Send can
	// wait on flow control until the client reads what is left.
	sent := make(chan struct{})
	go func() {
		defer close(sent)
		for i := range 32 {
			if hog.s.Send(request("echo", "hog-"+string(rune('a'+i%26)), big...)) != nil {
				return
			}
		}
	}()
	// The hog's responses stop leaving: its stream is full and the model's
	// only instance waits in Send.
	testenv.WaitUntil(t, "the model to answer the hog's first requests", func() bool { return len(h.p.Executions("echo")) >= 3 })

	other := h.open(t, true)
	other.send(request("echo", "other", 7))
	if m := other.recv(); describe(m) != "other - true" {
		t.Fatalf("the second client got %s, want its response", describe(m))
	}

	// The hog, reading at last once the server has cut it off, finds its
	// stream ended.
	testenv.WaitUntil(t, "the hog's stream to be cut off", func() bool { return strings.Contains(h.log.String(), "its stream is cut off") })
	go hog.read()
	for {
		m := hog.next()
		if m == nil {
			break
		}
	}
	if status.Code(hog.err) != codes.ResourceExhausted || !strings.Contains(hog.err.Error(), "did not read its responses") {
		t.Errorf("the hog's stream ended with %v, want RESOURCE_EXHAUSTED saying it did not read", hog.err)
	}
	<-sent
}

// TestStreamStopsReadingAtItsPendingLimit: a stream holds at most
// MaxPendingRequests requests the server has read and not answered; the
// others wait in the client (HTTP/2 flow control), and all complete.
func TestStreamStopsReadingAtItsPendingLimit(t *testing.T) {
	t.Parallel()
	const limit, sent = 3, 12
	gate := coretest.NewGate(t)
	h := newHarness(t, setup{service: grpcserver.Options{Stream: grpcserver.StreamLimits{MaxPendingRequests: limit}}},
		coretest.ModelDir{Name: "slow", Config: vector("")})
	h.p.Set("slow", coretest.Answering(coretest.After(gate, coretest.Once())))
	st := h.open(t, true)
	for i := range sent {
		st.send(request("slow", "r"+string(rune('a'+i)), int32(i)))
	}
	testenv.WaitUntil(t, "the stream to take its limit of requests", func() bool {
		n := h.srv.LiveRequests()
		if n > limit {
			t.Fatalf("%d requests of one stream live in the server, more than its limit of %d", n, limit)
		}
		return n == limit
	})
	for range 20 { // the reader has had every chance to take more
		if n := h.srv.LiveRequests(); n > limit {
			t.Fatalf("%d requests of one stream live in the server, more than its limit of %d", n, limit)
		}
		time.Sleep(5 * time.Millisecond)
	}
	gate.Open()
	for range sent {
		if m := st.recv(); m.GetErrorMessage() != "" {
			t.Errorf("response %s, want every request answered", describe(m))
		}
	}
}

// TestOversizedRequestIsRefusedAloneOnItsStream: a request message over the
// limit gets its own error; the requests in flight on the stream, and the
// ones after it, are served.
func TestOversizedRequestIsRefusedAloneOnItsStream(t *testing.T) {
	t.Parallel()
	gate := coretest.NewGate(t)
	h := newHarness(t, setup{service: grpcserver.Options{MaxMessageBytes: 64 << 10}},
		coretest.ModelDir{Name: "m", Config: vector("")})
	h.p.Set("m", coretest.Gated(gate, coretest.Echo(), "first"))
	st := h.open(t, true)
	st.send(request("m", "first", 1))
	st.send(request("m", "huge", make([]int32, 20<<10)...)) // 80 KiB
	m := st.recv()
	if r := m.GetInferResponse(); r.GetId() != "huge" || !strings.Contains(m.GetErrorMessage(), "larger than the server's limit") {
		t.Fatalf("got %s, want the oversized request refused with the limit", describe(m))
	}
	gate.Open()
	if m := st.recv(); describe(m) != "first - true" {
		t.Fatalf("the request in flight got %s, want its response", describe(m))
	}
	st.send(request("m", "after", 2))
	if m := st.recv(); describe(m) != "after - true" {
		t.Fatalf("a request after the refused one got %s, want its response", describe(m))
	}

	// Unary: the same refusal, as RESOURCE_EXHAUSTED.
	_, err := h.client.ModelInfer(t.Context(), request("m", "huge-unary", make([]int32, 20<<10)...))
	if status.Code(err) != codes.ResourceExhausted {
		t.Errorf("ModelInfer of an oversized request: %v, want RESOURCE_EXHAUSTED", err)
	}
}

// TestRequestsThatWouldInflateAreRefusedBeforeDecoding: requests whose few
// wire bytes would decode into much more memory are refused from the wire,
// each with an error that says why; the stream goes on.
func TestRequestsThatWouldInflateAreRefusedBeforeDecoding(t *testing.T) {
	t.Parallel()
	h := newHarness(t, setup{service: grpcserver.Options{MaxMessageBytes: 1 << 20}},
		coretest.ModelDir{Name: "m", Config: vector("")})
	zeros := make([]uint64, 512<<10) // 512 KiB on the wire, 4 MiB decoded
	manyInputs := &pb.ModelInferRequest{ModelName: "m", Id: "inputs"}
	for range 5000 {
		manyInputs.Inputs = append(manyInputs.Inputs, &pb.ModelInferRequest_InferInputTensor{})
	}
	for _, tc := range []struct {
		req  *pb.ModelInferRequest
		want string
	}{
		{&pb.ModelInferRequest{ModelName: "m", Id: "contents", Inputs: []*pb.ModelInferRequest_InferInputTensor{{
			Name: "INPUT0", Datatype: "UINT64", Shape: []int64{int64(len(zeros))},
			Contents: &pb.InferTensorContents{Uint64Contents: zeros}}}}, "typed contents would take"},
		{manyInputs, "5000 inputs"},
		{&pb.ModelInferRequest{ModelName: "m", Id: "dims", Inputs: []*pb.ModelInferRequest_InferInputTensor{{
			Name: "INPUT0", Datatype: "INT32", Shape: make([]int64, 100)}}}, "an input has 100 dimensions, more than the 64 the server accepts"},
		{&pb.ModelInferRequest{ModelName: "m", Id: "count", Inputs: []*pb.ModelInferRequest_InferInputTensor{{
			Name: "INPUT0", Datatype: "INT32", Shape: []int64{4},
			Contents: &pb.InferTensorContents{IntContents: []int32{1, 2, 3}}}}}, "[request id: count] input byte size mismatch for input 'INPUT0' for model 'm'. Expected 16, got 12"},
	} {
		t.Run(tc.req.GetId(), func(t *testing.T) {
			t.Parallel()
			st := h.open(t, true)
			st.send(tc.req)
			m := st.recv()
			if m.GetInferResponse().GetId() != tc.req.GetId() || !strings.Contains(m.GetErrorMessage(), tc.want) {
				t.Fatalf("got %s, want an error saying %q", describe(m), tc.want)
			}
			st.send(request("m", "after", 1))
			if m := st.recv(); describe(m) != "after - true" {
				t.Fatalf("the next request got %s, want its response", describe(m))
			}
		})
	}
}

// TestTypedContentsAreConvertedForTheModel: typed contents that match the
// model's input reach the backend as little-endian bytes.
func TestTypedContentsAreConvertedForTheModel(t *testing.T) {
	t.Parallel()
	h := newHarness(t, setup{}, coretest.ModelDir{Name: "m", Config: vector("")})
	resp, err := h.client.ModelInfer(t.Context(), &pb.ModelInferRequest{ModelName: "m", Id: "typed",
		Inputs: []*pb.ModelInferRequest_InferInputTensor{{Name: "INPUT0", Datatype: "INT32", Shape: []int64{3},
			Contents: &pb.InferTensorContents{IntContents: []int32{5, -6, 7}}}}})
	if err != nil {
		t.Fatal(err)
	}
	got := resp.GetRawOutputContents()[0]
	for i, want := range []int32{5, -6, 7} {
		if v := int32(binary.LittleEndian.Uint32(got[4*i:])); v != want {
			t.Errorf("OUTPUT0[%d] = %d, want %d", i, v, want)
		}
	}
}
