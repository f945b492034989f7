package grpcserver

import (
	"context"
	"strconv"
	"sync/atomic"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"tritonhost/core"
	pb "tritonhost/frontend/inferencepb"
)

// streamRequest is what a stream remembers of one request to render its
// responses.
type streamRequest struct {
	id         string
	model      string
	version    string
	emptyFinal bool
}

// streamEvent is one thing to tell the client: a response (possibly
// final), a flags-only final, or a request refused before it ran.
type streamEvent struct {
	req   *streamRequest
	resp  *core.Response
	final bool
	err   error // refused: always the request's last event
}

// inferStream is the state of one ModelStreamInfer call.
type inferStream struct {
	svc        *Service
	ctx        context.Context // ends when the handler returns: cancels pending requests
	queue      chan streamEvent
	readerDone chan struct{}
	pending    atomic.Int64 // requests read whose last event is not sent yet
}

// ModelStreamInfer serves a bidirectional stream of requests and
// responses, for decoupled and ordinary models alike.
func (s *Service) ModelStreamInfer(stream grpc.BidiStreamingServer[pb.ModelInferRequest, pb.ModelStreamInferResponse]) error {
	ctx, cancel := context.WithCancel(stream.Context())
	defer cancel()
	st := &inferStream{
		svc:        s,
		ctx:        ctx,
		queue:      make(chan streamEvent, s.opts.StreamQueue),
		readerDone: make(chan struct{}),
	}
	go st.read(stream)
	return st.write(stream)
}

// read receives requests until the client half-closes or the stream ends.
func (st *inferStream) read(stream grpc.BidiStreamingServer[pb.ModelInferRequest, pb.ModelStreamInferResponse]) {
	defer close(st.readerDone)
	for {
		req, err := stream.Recv()
		if err != nil {
			return // io.EOF: the client sent everything; otherwise the stream is gone
		}
		st.pending.Add(1)
		st.submit(req)
	}
}

// submit starts one request; its responses come back through push.
func (st *inferStream) submit(req *pb.ModelInferRequest) {
	sr := &streamRequest{id: req.GetId(), model: req.GetModelName(), version: req.GetModelVersion()}
	if st.svc.isDraining() {
		st.push(streamEvent{req: sr, err: core.Errorf(core.CodeUnavailable, "server is shutting down")})
		return
	}
	ir, opts, err := decodeRequest(req)
	if err != nil {
		st.push(streamEvent{req: sr, err: err})
		return
	}
	sr.emptyFinal = opts.emptyFinal
	m, err := st.svc.core.Model(ir.Model, ir.Version)
	if err != nil {
		st.push(streamEvent{req: sr, err: err})
		return
	}
	ir.Version = m.Version()
	sr.version = strconv.FormatInt(ir.Version, 10)
	err = st.svc.core.Infer(st.ctx, ir, func(resp *core.Response, final bool) {
		st.push(streamEvent{req: sr, resp: resp, final: final})
	})
	if err != nil {
		st.push(streamEvent{req: sr, err: err})
	}
}

// push queues an event for the client; it waits while the queue is full,
// and drops the event once the stream has ended.
func (st *inferStream) push(ev streamEvent) {
	select {
	case st.queue <- ev:
	case <-st.ctx.Done():
	}
}

// write is the stream's only sender. It ends when the client has sent
// everything and every request completed, when the server drains and
// nothing is pending, or when the stream breaks.
func (st *inferStream) write(stream grpc.BidiStreamingServer[pb.ModelInferRequest, pb.ModelStreamInferResponse]) error {
	readerDone := st.readerDone
	draining := st.svc.draining
	for {
		if st.pending.Load() == 0 {
			if readerDone == nil {
				return nil
			}
			if draining == nil {
				return status.Error(codes.Unavailable, "server is shutting down")
			}
		}
		select {
		case ev := <-st.queue:
			if ev.final || ev.err != nil {
				st.pending.Add(-1)
			}
			if msg := render(ev); msg != nil {
				if err := stream.Send(msg); err != nil {
					return err
				}
			}
		case <-readerDone:
			readerDone = nil
		case <-draining:
			draining = nil
		case <-st.ctx.Done():
			return status.FromContextError(st.ctx.Err()).Err()
		}
	}
}

// render turns an event into the message Triton sends for it, or nil when
// nothing is sent (a flags-only final without the empty-final opt-in).
func render(ev streamEvent) *pb.ModelStreamInferResponse {
	final := ev.final || ev.err != nil
	switch {
	case ev.err != nil || (ev.resp != nil && ev.resp.Err != nil):
		err := ev.err
		if err == nil {
			err = ev.resp.Err
		}
		return &pb.ModelStreamInferResponse{
			ErrorMessage:  err.Error(),
			InferResponse: header(ev.req, final),
		}
	case ev.resp != nil:
		r := encodeResponse(ev.resp)
		if r.Parameters == nil {
			r.Parameters = make(map[string]*pb.InferParameter, 1)
		}
		r.Parameters[paramFinalResponse] = boolParam(final)
		return &pb.ModelStreamInferResponse{InferResponse: r}
	case ev.req.emptyFinal:
		return &pb.ModelStreamInferResponse{InferResponse: header(ev.req, true)}
	}
	return nil
}

// header is a response with only the request's identity and final flag.
func header(req *streamRequest, final bool) *pb.ModelInferResponse {
	return &pb.ModelInferResponse{
		ModelName:    req.model,
		ModelVersion: req.version,
		Id:           req.id,
		Parameters:   map[string]*pb.InferParameter{paramFinalResponse: boolParam(final)},
	}
}
