package grpcserver_test

import (
	"context"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/coretest"
	"github.com/tritonhost/tritonhost/internal/frontend/grpcserver"
	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// lockstep makes backend goroutines take turns: do(n, f) runs f as the
// n-th step, after steps 0..n-1.
type lockstep struct {
	mu   sync.Mutex
	cond *sync.Cond
	turn int
}

func newLockstep() *lockstep {
	l := &lockstep{}
	l.cond = sync.NewCond(&l.mu)
	return l
}

func (l *lockstep) do(turn int, f func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for l.turn != turn {
		l.cond.Wait()
	}
	f()
	l.turn++
	l.cond.Broadcast()
}

// TestStreamOrdersResponsesAndMarksTheFinal: the responses of one request
// arrive in the order the backend sent them while another request's
// interleave; each carries the request id, the model and version, and
// triton_final_response; a flags-only final becomes an empty final response
// only for the request that asked with triton_enable_empty_final_response.
func TestStreamOrdersResponsesAndMarksTheFinal(t *testing.T) {
	t.Parallel()
	h := newHarness(t, setup{},
		coretest.ModelDir{Name: "dec", Config: vector(decoupled)}, coretest.ModelDir{Name: "echo", Config: vector("")})
	steps := newLockstep()
	h.p.Set("dec", coretest.Async(func(x *coretest.Exec, r *core.Request) {
		me := map[string]int{"a": 0, "b": 1}[r.ID()]
		for i := range 2 {
			resp := coretest.EchoResponse(r)
			resp.Parameters = append(resp.Parameters, core.IntParam(coretest.IndexParam, int64(i)))
			steps.do(2*i+me, func() { _ = x.Send(r, resp, false) })
		}
		steps.do(4+me, func() { _ = x.SendFinal(r) })
	}))
	st := h.open(t, true)
	st.send(withParam(request("dec", "a", 7), "triton_enable_empty_final_response", boolParam(true)), request("dec", "b", 8))
	h.p.WaitCalls(t, "b", "SendFinal", 1) // everything for a and b is on its way
	st.send(request("echo", "c", 9))
	var got []string
	for range 6 {
		m := st.recv()
		got = append(got, describe(m))
		r := m.GetInferResponse()
		if _, ok := r.GetParameters()["triton_final_response"]; !ok || r.GetModelVersion() != "1" || r.GetModelName() != map[string]string{"a": "dec", "b": "dec", "c": "echo"}[r.GetId()] {
			t.Errorf("response %s: model %q version %q, parameters %v", describe(m), r.GetModelName(), r.GetModelVersion(), r.GetParameters())
		}
		if want := map[string]int32{"a": 7, "b": 8, "c": 9}[r.GetId()]; len(r.GetOutputs()) > 0 &&
			(r.GetOutputs()[0].GetName() != "OUTPUT0" || string(r.GetRawOutputContents()[0]) != string([]byte{byte(want), 0, 0, 0})) {
			t.Errorf("response %s: outputs %v %v, want OUTPUT0 = [%d]", describe(m), r.GetOutputs(), r.GetRawOutputContents(), want)
		}
	}
	want := []string{"a 0 false", "b 0 false", "a 1 false", "b 1 false", "a - true", "c - true"}
	if !slices.Equal(got, want) {
		t.Errorf("stream carried\n%q\nwant\n%q", got, want)
	}
	if err := st.s.CloseSend(); err != nil {
		t.Fatal(err)
	}
	if err := st.ended(); err != io.EOF {
		t.Errorf("stream ended with %v, want a clean end once every request completed", err)
	}
}

// TestStreamErrorForOneRequestKeepsTheStreamOpen: requests refused before
// they run, and requests their backend fails, each get one final message
// with error_message and their id; the stream goes on serving.
func TestStreamErrorForOneRequestKeepsTheStreamOpen(t *testing.T) {
	t.Parallel()
	h := newHarness(t, setup{}, coretest.ModelDir{Name: "echo", Config: vector("")},
		coretest.ModelDir{Name: "fail", Config: vector("")}, coretest.ModelDir{Name: "broken", Config: vector("")})
	h.p.Set("fail", coretest.Answering(coretest.FailWith(core.Errorf(core.CodeUnavailable, "the device is lost"))))
	h.p.Set("broken", coretest.Fail(core.Errorf(core.CodeInternal, "execute blew up")))
	badType := request("echo", "bad-type", 1)
	badType.Inputs[0].Datatype = "FP32"
	badVersion := request("echo", "bad-version", 1)
	badVersion.ModelVersion = "x"
	st := h.open(t, true)
	for _, tc := range []struct {
		req  *pb.ModelInferRequest
		want string // in error_message
	}{
		{request("nope", "unknown-model", 1), "Request for unknown model: 'nope' is not found"},
		{badType, "[request id: bad-type] inference input 'INPUT0' data-type is 'FP32', but model 'echo' expects 'INT32'"},
		{badVersion, "failed to get model version from specified version string 'x' (details: stol), version should be an integral value > 0"},
		{withParam(request("echo", "reserved", 1), "triton_secret", boolParam(true)), "reserved"},
		{request("fail", "backend-error", 1), "the device is lost"},
		{request("broken", "execute-error", 1), "execute blew up"},
	} {
		st.send(tc.req)
		m := st.recv()
		if m.GetInferResponse().GetId() != tc.req.GetId() || !strings.Contains(m.GetErrorMessage(), tc.want) ||
			!m.GetInferResponse().GetParameters()["triton_final_response"].GetBoolParam() {
			t.Errorf("request %q: got %s, want a final error mentioning %q", tc.req.GetId(), describe(m), tc.want)
		}
	}
	st.send(request("echo", "ok", 5))
	if m := st.recv(); describe(m) != "ok - true" || len(m.GetInferResponse().GetOutputs()) != 1 {
		t.Errorf("after the errors: %s, want the echo", describe(m))
	}
	st.cancel()
}

// TestStreamCancelCancelsPendingRequests: when the client cancels the
// stream, the backends of its running requests see the cancellation, so
// does a queued request's if it runs at all, every request completes and
// nothing is left behind (the harness checks the handler returned and no
// goroutine outlived it). The server logs the notification for each
// running request the client left waiting, at verbose level 1.
func TestStreamCancelCancelsPendingRequests(t *testing.T) {
	t.Parallel()
	h := newHarness(t, setup{verbose: 1}, coretest.ModelDir{Name: "wait", Config: vector(decoupled)},
		coretest.ModelDir{Name: "gated", Config: vector("")})
	gate := coretest.NewGate(t)
	h.p.Set("wait", coretest.Async(coretest.AwaitCancel()))
	h.p.Set("gated", coretest.Gated(gate, coretest.Detached(coretest.AwaitCancel()), "busy"))
	st := h.open(t, true)
	st.send(request("wait", "w1", 1), request("wait", "w2", 2), request("gated", "busy", 3), request("gated", "queued", 4))
	h.p.Reached(t, "w1", "w2", "busy")
	st.cancel()
	if err := st.ended(); status.Code(err) != codes.Canceled {
		t.Errorf("stream ended with %v, want CANCELED", err)
	}
	h.p.WaitCalls(t, "w1", "Cancelled", 1)
	h.p.WaitCalls(t, "w2", "Cancelled", 1)
	gate.Open()
	h.p.WaitCalls(t, "busy", "Cancelled", 1)
	testenv.WaitUntil(t, "every request to complete", func() bool { return h.srv.LiveRequests() == 0 })
	// Whether the scheduler saw the queued request's cancellation before
	// dequeuing it is a race (cancellation lands on its own goroutine);
	// core's tests pin the queued case down.
	if h.p.Executed("queued") && h.p.Count("queued", "Cancelled") != 1 {
		t.Error("the queued request ran without seeing the cancellation")
	}
	for _, id := range []string{"w1", "w2", "busy"} { // "queued" may not have been read yet
		line := "Cancellation notification received for ModelStreamInferHandler, request id: " + id + "\n"
		testenv.WaitUntil(t, "the log line "+line, func() bool { return strings.Contains(h.log.String(), line) })
	}
}

// TestStreamDrain: after Drain, a stream refuses new requests with
// "server is shutting down", still delivers what its pending requests send,
// and then ends with UNAVAILABLE; a stream with nothing pending ends at
// once; unary requests get UNAVAILABLE and health checks say the server is
// going away.
func TestStreamDrain(t *testing.T) {
	t.Parallel()
	h := newHarness(t, setup{}, coretest.ModelDir{Name: "gated", Config: vector("")})
	gate := coretest.NewGate(t)
	h.p.Set("gated", coretest.Gated(gate, coretest.Echo()))
	st := h.open(t, true)
	st.send(request("gated", "slow", 1))
	h.p.Reached(t, "slow")
	h.svc.Drain()
	st.send(request("gated", "late", 2))
	if m := st.recv(); m.GetInferResponse().GetId() != "late" || !strings.Contains(m.GetErrorMessage(), "shutting down") {
		t.Errorf("request after Drain: %s, want refused as shutting down", describe(m))
	}
	if _, err := h.client.ModelInfer(t.Context(), request("gated", "unary", 3)); status.Code(err) != codes.Unavailable {
		t.Errorf("ModelInfer after Drain: %v, want UNAVAILABLE", err)
	}
	live, _ := h.client.ServerLive(t.Context(), &pb.ServerLiveRequest{})
	ready, _ := h.client.ServerReady(t.Context(), &pb.ServerReadyRequest{})
	health, _ := healthpb.NewHealthClient(h.conn).Check(t.Context(), &healthpb.HealthCheckRequest{})
	if live.GetLive() || ready.GetReady() || health.GetStatus() != healthpb.HealthCheckResponse_NOT_SERVING {
		t.Errorf("after Drain: live %v, ready %v, health %v; want false, false, NOT_SERVING", live.GetLive(), ready.GetReady(), health.GetStatus())
	}
	idle := h.open(t, true)
	if err := idle.ended(); status.Code(err) != codes.Unavailable {
		t.Errorf("a stream with nothing pending ended with %v, want UNAVAILABLE", err)
	}
	gate.Open()
	if m := st.recv(); describe(m) != "slow - true" {
		t.Errorf("pending request after Drain: %s, want its response", describe(m))
	}
	if err := st.ended(); status.Code(err) != codes.Unavailable {
		t.Errorf("stream ended with %v, want UNAVAILABLE once its pending request completed", err)
	}
}

// TestStreamBackPressureIsBounded: a client that stops reading does not
// make the server buffer without bound. What the backend has sent but the
// stream has not yet handed to gRPC is at most twice the stream's
// MaxResponses: the queue itself, and the batch the stream's sender took
// from it and is writing. gRPC's own flow-control windows (kept at 64 KiB
// here) hold the rest. The producing side waits meanwhile, for at most the
// stall timeout (long here; bounds_test.go cuts a stream off).
func TestStreamBackPressureIsBounded(t *testing.T) {
	t.Parallel()
	const queue, responses = 4, 2000
	h := newHarness(t, setup{
		service: grpcserver.Options{Stream: grpcserver.StreamLimits{MaxResponses: queue, StallTimeout: time.Hour}},
		dial:    []grpc.DialOption{grpc.WithInitialWindowSize(64 << 10), grpc.WithInitialConnWindowSize(64 << 10)},
	}, coretest.ModelDir{Name: "dec", Config: vector(decoupled)})
	h.p.Set("dec", coretest.Answering(coretest.Stream(responses)))
	st := h.open(t, false)
	st.send(request("dec", "flood", make([]int32, 1024)...)) // 4 KiB a response
	// Until the backend stalls (no send for 200 ms) or has sent them all,
	// the responses buffered stay within the bound.
	var last int64 = -1
	var since time.Time
	testenv.WaitUntil(t, "the backend to stall", func() bool {
		produced := int64(h.p.Count("flood", "Send")) // read before what was sent: the difference only grows
		sent := h.sent.Load()
		if produced-sent > 2*queue {
			t.Fatalf("the backend has sent %d responses, the stream handed %d to gRPC: %d buffered, more than 2×MaxResponses (%d)",
				produced, sent, produced-sent, 2*queue)
		}
		if produced != last {
			last, since = produced, time.Now()
		}
		return produced >= responses || time.Since(since) >= 200*time.Millisecond
	})
	st.cancel()
	h.p.WaitCalls(t, "flood", "SendFinal", 1)
	testenv.WaitUntil(t, "the request to complete", func() bool { return h.srv.LiveRequests() == 0 })
}

// TestAbortAnswersWhatIsInFlight: after Drain, Abort gives every request
// still in flight its error: a stream sends each of its unfinished
// requests an error response, final, and ends with the error's code; a
// unary call returns it. What the backend sends afterwards is dropped.
func TestAbortAnswersWhatIsInFlight(t *testing.T) {
	t.Parallel()
	h := newHarness(t, setup{service: grpcserver.Options{Stream: grpcserver.StreamLimits{MaxResponses: 1}}},
		coretest.ModelDir{Name: "gated", Config: vector(`instance_group [ { count: 2 kind: KIND_CPU } ]`)},
		coretest.ModelDir{Name: "dec", Config: vector(decoupled)})
	gate := coretest.NewGate(t)
	h.p.Set("gated", coretest.Gated(gate, coretest.Echo()))
	h.p.Set("dec", coretest.Answering(coretest.Then(coretest.Send(false), coretest.After(gate, coretest.SendFinal()))))
	st := h.open(t, true)
	st.send(request("gated", "a", 1), request("dec", "b", 2))
	if m := st.recv(); describe(m) != "b - false" {
		t.Fatalf("first message %s, want b's first response", describe(m))
	}
	unary := make(chan error, 1)
	go func() {
		_, err := h.client.ModelInfer(t.Context(), request("gated", "u", 3))
		unary <- err
	}()
	h.p.Reached(t, "a", "u")
	h.svc.Drain()
	reason := core.Errorf(core.CodeUnavailable, "given up at the exit timeout")
	h.svc.Abort(reason)
	got := map[string]string{}
	for range 2 {
		m := st.recv()
		got[m.GetInferResponse().GetId()] = describe(m)
	}
	for _, id := range []string{"a", "b"} {
		if want := id + " error: given up at the exit timeout (final=true)"; got[id] != want {
			t.Errorf("request %s: %q, want %q", id, got[id], want)
		}
	}
	if err := st.ended(); status.Code(err) != codes.Unavailable || !strings.Contains(err.Error(), "given up at the exit timeout") {
		t.Errorf("the stream ended with %v, want UNAVAILABLE with the reason", err)
	}
	if err := <-unary; status.Code(err) != codes.Unavailable || status.Convert(err).Message() != "given up at the exit timeout" {
		t.Errorf("the unary call: %v, want UNAVAILABLE with the reason", err)
	}
	gate.Open() // the backend answers now: nothing is sent, and the cleanup finds nothing left
}

// TestStreamNonDecoupledModelSendsItsFirstResponseOnly: a model that is
// not decoupled but streams (Triton's repeat backend without
// model_transaction_policy, as Triton's gRPC state-cleanup test runs it)
// gets exactly one message on ModelStreamInfer, its first response, final;
// the others are dropped. ModelInfer answers with the same first response.
func TestStreamNonDecoupledModelSendsItsFirstResponseOnly(t *testing.T) {
	t.Parallel()
	h := newHarness(t, setup{}, coretest.ModelDir{Name: "chatty", Config: vector("")})
	h.p.Set("chatty", coretest.Async(coretest.Stream(4)))
	st := h.open(t, true)
	st.send(request("chatty", "0", 100, 101, 102, 103))
	if got := describe(st.recv()); got != "0 0 true" {
		t.Errorf("message %q, want the first response (index 0), final", got)
	}
	h.p.WaitCalls(t, "0", "Drop", 1)
	st.s.CloseSend()
	if err := st.ended(); err != io.EOF {
		t.Errorf("stream ended with %v, want EOF after one message", err)
	}
	resp, err := h.client.ModelInfer(t.Context(), request("chatty", "1", 5))
	if err != nil || resp.GetParameters()[coretest.IndexParam].GetInt64Param() != 0 {
		t.Errorf("ModelInfer: %v, %v; want the first response", resp, err)
	}
}

// TestStreamStatusModeEndsTheStreamWithTheError: a stream started with
// the header triton_grpc_error: true ends at the first error, with the
// error's gRPC status and message, after what was answered before it; a
// request still running is cancelled. Without the header the error stays
// in the stream (TestStreamErrorForOneRequestKeepsTheStreamOpen).
func TestStreamStatusModeEndsTheStreamWithTheError(t *testing.T) {
	t.Parallel()
	h := newHarness(t, setup{}, coretest.ModelDir{Name: "echo", Config: vector("")},
		coretest.ModelDir{Name: "fail", Config: vector("")}, coretest.ModelDir{Name: "wait", Config: vector(decoupled)})
	h.p.Set("fail", coretest.Answering(coretest.FailWith(core.Errorf(core.CodeInternal, "the device is lost"))))
	h.p.Set("wait", coretest.Async(coretest.AwaitCancel()))
	for _, tc := range []struct {
		name    string
		failing *pb.ModelInferRequest
		code    codes.Code
		want    string
	}{
		{"a backend's error", request("fail", "backend-error", 1), codes.Internal, "the device is lost"},
		{"a request refused", request("nope", "unknown-model", 1), codes.NotFound, "Request for unknown model: 'nope' is not found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := metadata.AppendToOutgoingContext(context.Background(), grpcserver.StatusModeHeader, "true")
			st := h.openWith(t, ctx)
			running := "running-" + tc.failing.GetId()
			st.send(request("wait", running, 1), request("echo", "ok", 5))
			if m := st.recv(); describe(m) != "ok - true" {
				t.Fatalf("first: %s, want the echo", describe(m))
			}
			h.p.Reached(t, running)
			st.send(tc.failing)
			err := st.ended()
			if status.Code(err) != tc.code || !strings.Contains(status.Convert(err).Message(), tc.want) {
				t.Errorf("the stream ended with %v, want %v mentioning %q", err, tc.code, tc.want)
			}
			h.p.WaitCalls(t, running, "Cancelled", 1)
		})
	}
}
