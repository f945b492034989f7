package grpcserver

import (
	"context"
	"sync/atomic"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"tritonhost/core"
	pb "tritonhost/frontend/inferencepb"
)

// streamRequest is what a stream remembers of one request to encode its
// responses.
type streamRequest struct {
	header     responseHeader
	emptyFinal bool
}

// streamEvent is one message for the client, already encoded (nil when the
// event sends nothing), and whether it is the request's last event.
type streamEvent struct {
	msg  *encodedMessage
	last bool
}

// inferStream is the state of one ModelStreamInfer call.
type inferStream struct {
	svc        *Service
	stream     grpc.ServerStream
	ctx        context.Context // ends when the handler returns: cancels pending requests
	queue      *sendQueue
	readerDone chan struct{}
	pending    atomic.Int64 // requests read whose last event is not sent yet
}

// ModelStreamInfer serves a bidirectional stream of requests and responses,
// for decoupled and ordinary models alike. (The RPC goes through
// modelStreamInferWire; this method exists for the generated interface.)
func (s *Service) ModelStreamInfer(stream grpc.BidiStreamingServer[pb.ModelInferRequest, pb.ModelStreamInferResponse]) error {
	return s.modelStreamInferWire(stream)
}

// modelStreamInferWire is the ModelStreamInfer RPC handler.
func (s *Service) modelStreamInferWire(stream grpc.ServerStream) error {
	ctx, cancel := context.WithCancel(stream.Context())
	defer cancel()
	st := &inferStream{
		svc:        s,
		stream:     stream,
		ctx:        ctx,
		queue:      newSendQueue(s.opts.StreamQueue),
		readerDone: make(chan struct{}),
	}
	go st.read()
	return st.write()
}

// read receives requests until the client half-closes or the stream ends.
func (st *inferStream) read() {
	defer close(st.readerDone)
	for {
		req := new(pb.ModelInferRequest)
		if err := st.stream.RecvMsg(req); err != nil {
			return // io.EOF: the client sent everything; otherwise the stream is gone
		}
		st.pending.Add(1)
		st.submit(req)
	}
}

// submit starts one request; its responses come back through respond.
func (st *inferStream) submit(req *pb.ModelInferRequest) {
	sr := &streamRequest{header: responseHeader{model: req.GetModelName(), version: req.GetModelVersion(), id: req.GetId()}}
	if st.svc.isDraining() {
		st.refuse(sr, core.Errorf(core.CodeUnavailable, "server is shutting down"))
		return
	}
	ir, opts, err := decodeRequest(req)
	if err != nil {
		st.refuse(sr, err)
		return
	}
	sr.emptyFinal = opts.emptyFinal
	m, err := st.svc.core.Model(ir.Model, ir.Version)
	if err != nil {
		st.refuse(sr, err)
		return
	}
	sr.header.version = versionString(m.Version())
	err = st.svc.core.Submit(st.ctx, m, ir, func(resp *core.Response, final bool) { st.respond(sr, resp, final) })
	if err != nil {
		st.refuse(sr, err)
	}
}

// respond encodes a response on the goroutine or backend thread that
// produced it and queues it. A flags-only final is sent as an empty
// response only if the request asked for one.
func (st *inferStream) respond(sr *streamRequest, resp *core.Response, last bool) {
	fin := notFinal
	if last {
		fin = isFinal
	}
	var msg *encodedMessage
	switch {
	case resp != nil && resp.Err != nil:
		msg = encodeResponse(sr.header, nil, fin, true, resp.Err.Error())
	case resp != nil:
		msg = encodeResponse(sr.header, resp, fin, true, "")
	case sr.emptyFinal:
		msg = encodeResponse(sr.header, nil, isFinal, true, "")
	}
	st.push(streamEvent{msg: msg, last: last})
}

// refuse reports a request that could not start: its error is its last
// message.
func (st *inferStream) refuse(sr *streamRequest, err error) {
	st.push(streamEvent{msg: encodeResponse(sr.header, nil, isFinal, true, err.Error()), last: true})
}

// push queues an event for the client; it waits while the queue is full,
// and drops the event once the stream has ended.
func (st *inferStream) push(ev streamEvent) { st.queue.push(ev, st.ctx.Done()) }

// write is the stream's only sender. It ends when the client has sent
// everything and every request completed, when the server drains and
// nothing is pending, or when the stream breaks.
func (st *inferStream) write() error {
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
		if batch := st.queue.take(); len(batch) > 0 {
			for _, ev := range batch {
				if ev.last {
					st.pending.Add(-1)
				}
				if ev.msg != nil {
					if err := st.stream.SendMsg(ev.msg); err != nil {
						return err
					}
				}
			}
			st.queue.recycle(batch)
			continue
		}
		select {
		case <-st.queue.ready:
		case <-readerDone:
			readerDone = nil
		case <-draining:
			draining = nil
		case <-st.ctx.Done():
			return status.FromContextError(st.ctx.Err()).Err()
		}
	}
}
