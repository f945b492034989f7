package grpcserver

import (
	"context"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tritonhost/tritonhost/core"
	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
	"github.com/tritonhost/tritonhost/internal/protocol"
	"github.com/tritonhost/tritonhost/internal/testhooks"
)

// ModelInfer runs one request on a model that sends one response per
// request. Decoupled models are refused, as Triton refuses them
// (UNIMPLEMENTED, "ModelInfer RPC doesn't support models with decoupled
// transaction policy"): they need ModelStreamInfer. (The
// RPC itself goes through modelInferWire, which encodes the response
// directly; this method serves Go callers.)
func (s *Service) ModelInfer(ctx context.Context, req *pb.ModelInferRequest) (*pb.ModelInferResponse, error) {
	resp, h, err := s.infer(ctx, &inboundRequest{msg: req})
	if err != nil {
		return nil, err
	}
	msg := responseMessage(h, resp) // copies lent memory
	resp.Free()
	return msg, nil
}

// modelInferWire is the ModelInfer RPC handler: the response goes on the
// wire without an intermediate message struct.
func (s *Service) modelInferWire(ctx context.Context, req *inboundRequest) (*encodedMessage, error) {
	s.compressResponses(ctx)
	resp, h, err := s.infer(ctx, req)
	if err != nil {
		return nil, err
	}
	return encodeResponse(h, resp, noFinalParam, false, ""), nil
}

// infer runs one unary request and returns its single response with the
// header that labels it.
func (s *Service) infer(ctx context.Context, in *inboundRequest) (*core.Response, responseHeader, error) {
	var h responseHeader
	testhooks.Sleep(s.delays.ProcessEntry)
	testhooks.Sleep(s.delays.Process)
	if in.refused != nil {
		return nil, h, toStatus(in.refused)
	}
	if s.isDraining() {
		return nil, h, status.Error(codes.Unavailable, ShuttingDown)
	}
	r, err := s.resolve(in, true, s.forwardedHeaders(ctx))
	if err != nil {
		return nil, h, toStatus(err)
	}
	m, ir := r.m, r.ir
	ir.TraceContext = traceContext(ctx)
	h = responseHeader{model: m.Name(), version: versionString(m.Version()), id: ir.ID}
	ir.FreesResponses = true // the handler or the wire frees the response
	// Not Submission.Inline: a handler executing its request could not
	// answer the client at the server's abort time while the backend runs.
	res := &r.result
	res.done = make(chan struct{}, 1)
	early, stopEarly := beforeDeadline(ctx)
	defer stopEarly()
	testhooks.Sleep(s.delays.Enqueue)
	// The handler cancels the request whenever it stops waiting.
	cancel, err := s.core.SubmitCancelable(protocol.WatchedContext(ctx), m, ir, func(resp *core.Response, final bool) {
		testhooks.Sleep(s.delays.ResponseCompletion)
		if final {
			res.deliver(r.mem.Place(resp))
		} else {
			resp.Free() // a model that is not decoupled sends one response, final
		}
	})
	if err != nil {
		r.mem.Release()
		return nil, h, toStatus(err)
	}
	select {
	case <-res.done:
		resp := res.take()
		if resp == nil {
			return nil, h, status.Errorf(codes.Internal, "model %q completed request %q without a response", m.Name(), ir.ID)
		}
		testhooks.Sleep(s.delays.Response)
		testhooks.Sleep(s.delays.Complete)
		if resp.Err != nil {
			return nil, h, toStatus(resp.Err)
		}
		return resp, h, nil
	case <-early:
		cancel.Cancel()
		res.abandon()
		s.logCancellation(unaryHandlerName, ir.ID)
		return nil, h, errDeadlineExceeded
	case <-ctx.Done():
		cancel.Cancel()
		testhooks.Sleep(s.delays.Notification)
		res.abandon()
		s.logCancellation(unaryHandlerName, ir.ID)
		return nil, h, status.FromContextError(ctx.Err()).Err()
	case <-s.aborting:
		cancel.Cancel()
		res.abandon()
		return nil, h, toStatus(s.abortErr)
	}
}

// The server ends a call itself shortly before its deadline, with
// DEADLINE_EXCEEDED "Deadline Exceeded", as Triton's clients see a call
// past its deadline: at the deadline, grpc-go resets the stream
// (RST_STREAM CANCEL), which a client whose own timer has not fired yet
// reports as a cancellation. The margin must cover the time from the
// timer firing to the status being written (a goroutine switch, more on a
// loaded machine), so it is a twentieth of the call's time, at least
// minDeadlineMargin and at most maxDeadlineMargin.
const (
	minDeadlineMargin = 2 * time.Millisecond
	maxDeadlineMargin = 25 * time.Millisecond
)

// errDeadlineExceeded is the status of a call the server ended at its
// deadline.
var errDeadlineExceeded = status.Error(codes.DeadlineExceeded, "Deadline Exceeded")

// deadlineMargin is how long before its deadline the server ends a call
// that has left to go.
func deadlineMargin(left time.Duration) time.Duration {
	return min(max(left/20, minDeadlineMargin), maxDeadlineMargin)
}

// beforeDeadline returns a channel that receives deadlineMargin before
// ctx's deadline, and what stops it; nil (never) when ctx has no deadline
// or less than twice the margin left.
func beforeDeadline(ctx context.Context) (<-chan time.Time, func() bool) {
	dl, ok := ctx.Deadline()
	if !ok {
		return nil, func() bool { return false }
	}
	left := time.Until(dl)
	margin := deadlineMargin(left)
	if left < 2*margin {
		return nil, func() bool { return false }
	}
	t := time.NewTimer(left - margin)
	return t.C, t.Stop
}

// unaryResult hands the final response of a unary request to its handler,
// or frees it when the handler stopped waiting (the client went away).
type unaryResult struct {
	mu   sync.Mutex
	done chan struct{} // capacity 1: receives once resp is delivered
	resp *core.Response
	gone bool
}

func (u *unaryResult) deliver(resp *core.Response) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.gone {
		resp.Free()
		return
	}
	u.resp = resp
	u.done <- struct{}{}
}

// take returns the delivered response, once done has received.
func (u *unaryResult) take() *core.Response {
	u.mu.Lock()
	defer u.mu.Unlock()
	resp := u.resp
	u.resp = nil
	return resp
}

// abandon frees the response, now or when it comes.
func (u *unaryResult) abandon() {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.gone = true
	if u.resp != nil {
		u.resp.Free()
		u.resp = nil
	}
}
