package grpcserver

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/tritonhost/tritonhost/core"
	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
	"github.com/tritonhost/tritonhost/internal/sendqueue"
	"github.com/tritonhost/tritonhost/internal/testhooks"
)

// streamRequest is what a stream remembers of one request to encode its
// responses.
type streamRequest struct {
	header     responseHeader
	emptyFinal bool
	// prefix is the start of the request's messages once its second
	// response made it (prefix.go); unprefixed counts the responses
	// that could have one before then.
	prefix     atomic.Pointer[streamPrefix]
	unprefixed atomic.Int64
}

// streamEvent is one message for the client, already encoded (nil when the
// event sends nothing), and whether it is the request's last event. An
// event with end set sends no message: under gRPC status mode it ends the
// stream with that error's status once what was queued before it is sent.
type streamEvent struct {
	msg  *encodedMessage
	last bool
	sr   *streamRequest // the request it answers
	end  error
}

// StatusModeHeader is the header a client sends when a ModelStreamInfer
// stream starts, with the value "true", to have an error end the stream
// with the error's gRPC status, as Triton's stream handler does, rather
// than arrive inside the stream as a response's error_message.
const StatusModeHeader = "triton_grpc_error"

// size is what the event holds in memory, for the stream's byte bound.
func (ev streamEvent) size() int {
	if ev.msg == nil {
		return 0
	}
	return ev.msg.bufs.Len()
}

// free returns what an event that is never sent holds.
func (ev streamEvent) free() { ev.msg.free() }

// freeEvents frees events that are never sent.
func freeEvents(evs []streamEvent) {
	for _, ev := range evs {
		ev.free()
	}
}

// inferStream is the state of one ModelStreamInfer call. Three goroutines
// serve it: the reader (receive, decode, submit), the sender and the
// handler, which waits for the sender to finish or for the stream to be cut
// off, and returns its status.
//
// An event goes out from where it was produced (a backend thread, the
// reader) when the stream is idle: nothing is queued, no one else is
// sending, and gRPC holds nothing else of the stream (the arena counts
// what it holds), so SendMsg finds its write quota free and returns
// without blocking. That spares the hand-off to the sender where it costs
// most, on a stream that is not busy. A busy stream's events go through
// the queue, so that the sender hands gRPC many at once and its transport
// writes them together (letting each producer send whenever gRPC's quota
// had room doubled the stream's write calls for as many responses, and
// gained nothing measurable: see the commit that made this). The sender
// may block in SendMsg on a client that reads slowly; a producer then
// waits only for room in the queue, at most the stall timeout (push).
// sendMu makes the senders take turns: gRPC streams are not safe for
// concurrent SendMsg.
type inferStream struct {
	svc    *Service
	stream grpc.ServerStream
	ctx    context.Context // ends when the handler returns: cancels pending requests
	cancel context.CancelFunc
	queue  *sendqueue.Queue[streamEvent]
	arena  streamArena // the memory of the stream's messages
	// slots holds one token per request read and not yet answered
	// (StreamLimits.MaxPendingRequests): the reader waits for a free one.
	slots      chan struct{}
	readerDone chan struct{}
	pending    atomic.Int64      // requests read whose last event is not sent yet
	submitted  liveRequests      // requests submitted whose final response has not come: their cancellations are logged
	traceCtx   core.TraceContext // the client's W3C trace context, for every request of the stream
	// statusMode: an error ends the stream with its status
	// (StatusModeHeader); ended is set once the event that does is queued,
	// and every later event is dropped.
	statusMode bool
	ended      atomic.Bool
	// headers is the stream's metadata that Options.HeaderForward
	// forwards into each of its requests (nil when it is not set).
	headers metadata.MD

	sendMu     sync.Mutex            // held by whoever calls SendMsg, and by the sender while it takes a batch
	sendClosed bool                  // under sendMu: the sender returned, nothing more goes out
	sendErr    atomic.Pointer[error] // the error of a SendMsg made where an event was produced
	settled    chan struct{}         // capacity 1: an event sent where it was produced ended a request, or its send failed

	cutOnce sync.Once
	cut     chan struct{} // closed when the stream is cut off for not reading

	// live holds the requests whose last event is not sent yet, for Abort
	// to answer (guarded by mu; taken once per request, not per response);
	// after an abort it is nil, aborted is set, and events are dropped.
	mu      sync.Mutex
	live    map[*streamRequest]struct{}
	aborted atomic.Bool
}

// ModelStreamInfer serves a bidirectional stream of requests and responses,
// for decoupled and ordinary models alike. (The RPC goes through
// modelStreamInferWire; this method exists for the generated interface.)
func (s *Service) ModelStreamInfer(stream grpc.BidiStreamingServer[pb.ModelInferRequest, pb.ModelStreamInferResponse]) error {
	return s.modelStreamInferWire(stream)
}

// newInferStream returns the state of a ModelStreamInfer call on stream;
// its context ends with stream's, or with cancel.
func (s *Service) newInferStream(stream grpc.ServerStream) *inferStream {
	ctx, cancel := context.WithCancel(stream.Context())
	lim := s.opts.Stream
	return &inferStream{
		svc:        s,
		stream:     stream,
		ctx:        ctx,
		cancel:     cancel,
		queue:      sendqueue.New(lim.MaxResponses, lim.MaxResponseBytes, lim.StallTimeout, streamEvent.size, streamEvent.free),
		slots:      make(chan struct{}, lim.MaxPendingRequests),
		readerDone: make(chan struct{}),
		settled:    make(chan struct{}, 1),
		cut:        make(chan struct{}),
		live:       map[*streamRequest]struct{}{},
		traceCtx:   traceContext(stream.Context()),
		statusMode: statusModeOf(stream.Context()),
		headers:    s.forwardedHeaders(stream.Context()),
	}
}

// statusModeOf reports whether the client asked for gRPC status mode when
// the stream started.
func statusModeOf(ctx context.Context) bool {
	v := metadata.ValueFromIncomingContext(ctx, StatusModeHeader)
	return len(v) > 0 && v[0] == "true"
}

// modelStreamInferWire is the ModelStreamInfer RPC handler.
func (s *Service) modelStreamInferWire(stream grpc.ServerStream) error {
	s.compressResponses(stream.Context())
	st := s.newInferStream(stream)
	defer st.cancel()
	lim := s.opts.Stream
	// The client's end of the call: cancelled, past its deadline or
	// disconnected. (A normal end stops this first: the handler returns
	// before gRPC ends the call's context.)
	stopWatch := context.AfterFunc(stream.Context(), func() {
		testhooks.Sleep(s.delays.Notification)
		for _, id := range st.submitted.take() {
			s.logCancellation(streamHandlerName, id)
		}
	})
	defer stopWatch()
	go st.read()
	sent := make(chan error, 1)
	go func() { sent <- st.write() }()
	early, stopEarly := beforeDeadline(stream.Context())
	defer stopEarly()
	select {
	case err := <-sent:
		testhooks.Sleep(s.delays.Complete)
		return err
	case <-early:
		st.cancel() // its requests are cancelled; the sender stops
		return errDeadlineExceeded
	case <-st.cut:
		// The sender may be blocked in SendMsg on a client that does not
		// read: returning ends the stream, which unblocks it.
		return status.Errorf(codes.ResourceExhausted,
			"the client did not read its responses for %v while %d were waiting (the server's stall timeout): the stream is cut off and its requests cancelled",
			lim.StallTimeout, lim.MaxResponses)
	}
}

// read receives requests until the client half-closes or the stream ends,
// holding a slot for each request it reads.
func (st *inferStream) read() {
	defer close(st.readerDone)
	for {
		select {
		case st.slots <- struct{}{}:
		case <-st.ctx.Done():
			return
		}
		in := new(inboundRequest)
		if err := st.stream.RecvMsg(in); err != nil {
			<-st.slots
			return // io.EOF: the client sent everything; otherwise the stream is gone
		}
		st.pending.Add(1)
		st.submit(in)
	}
}

// submit starts one request; its responses come back through respond.
func (st *inferStream) submit(in *inboundRequest) {
	testhooks.Sleep(st.svc.delays.ProcessEntry)
	testhooks.Sleep(st.svc.delays.Process)
	req := in.msg
	sr := &streamRequest{header: responseHeader{model: req.GetModelName(), version: req.GetModelVersion(), id: req.GetId()}}
	st.mu.Lock()
	if st.live != nil {
		st.live[sr] = struct{}{}
	}
	st.mu.Unlock()
	if in.refused != nil {
		st.refuse(sr, in.refused)
		return
	}
	if st.svc.isDraining() {
		st.refuse(sr, core.Errorf(core.CodeUnavailable, ShuttingDown))
		return
	}
	r, err := st.svc.resolve(in, false, st.headers)
	if err != nil {
		st.refuse(sr, err)
		return
	}
	sr.emptyFinal = r.opts.EmptyFinal
	sr.header.version = versionString(r.m.Version())
	sr.header = sr.header.withFields() // encoded once for all the request's responses
	r.ir.FreesResponses = true         // respond hands each response on to the wire, which frees it
	r.ir.TraceContext = st.traceCtx
	st.submitted.add(sr)
	testhooks.Sleep(st.svc.delays.Enqueue)
	err = st.svc.core.Submit(st.ctx, r.m, r.ir, func(resp *core.Response, final bool) { st.respond(sr, r.mem.Place(resp), final) })
	if err != nil {
		st.submitted.remove(sr)
		r.mem.Release()
		st.refuse(sr, err)
	}
}

// respond encodes a response on the goroutine or backend thread that
// produced it and queues it. A flags-only final is sent as an empty
// response only if the request asked for one. The response's lent memory
// goes to its message (encodeResponse), which the sender, gRPC, or the
// queue when the stream ends, frees.
func (st *inferStream) respond(sr *streamRequest, resp *core.Response, last bool) {
	testhooks.Sleep(st.svc.delays.ResponseCompletion)
	testhooks.Sleep(st.svc.delays.Response)
	fin := notFinal
	if last {
		fin = isFinal
		if st.submitted.remove(sr) && st.stream.Context().Err() != nil {
			// The client's cancellation completed the request before
			// the notification was logged.
			st.svc.logCancellation(streamHandlerName, sr.header.id)
		}
	}
	var msg *encodedMessage
	switch {
	case resp != nil && resp.Err != nil && st.statusMode:
		st.end(sr, resp.Err)
		return
	case resp != nil && resp.Err != nil:
		msg = encodeIn(&st.arena, sr.header, nil, fin, true, resp.Err.Error())
	case resp != nil:
		msg = st.encodeStreamed(sr, resp, fin)
	case sr.emptyFinal:
		msg = encodeIn(&st.arena, sr.header, nil, isFinal, true, "")
	}
	st.push(streamEvent{msg: msg, last: last, sr: sr})
}

// refuse reports a request that could not start: its error is its last
// message.
func (st *inferStream) refuse(sr *streamRequest, err error) {
	if st.statusMode {
		st.end(sr, err)
		return
	}
	st.push(streamEvent{msg: encodeIn(&st.arena, sr.header, nil, isFinal, true, err.Error()), last: true, sr: sr})
}

// end ends the stream with err's status, under gRPC status mode, once
// what was queued before is sent: its other requests are then cancelled.
// The first error ends it; later events are dropped.
func (st *inferStream) end(sr *streamRequest, err error) {
	if st.ended.Swap(true) {
		st.push(streamEvent{last: true, sr: sr}) // settles the request's slot; nothing is sent
		return
	}
	if err := st.queue.Push(streamEvent{last: true, sr: sr, end: err}, st.ctx.Done()); errors.Is(err, sendqueue.ErrStalled) {
		st.cutOff()
	}
}

// push sends an event to the client from where it was produced when it
// can (sendHere), and otherwise queues it for the sender, waiting while
// the stream's queue is full, at most the stall timeout: then the stream
// is cut off. After the stream ended, events are freed.
func (st *inferStream) push(ev streamEvent) {
	if st.aborted.Load() { // the request was answered by abort
		ev.free()
		return
	}
	if st.ended.Load() && ev.end == nil { // status mode: the stream ends with an error already queued
		ev.free()
		if !ev.last {
			return
		}
		ev.msg = nil // the last event still settles its request
	}
	if st.sendHere(ev) {
		return
	}
	if err := st.queue.Push(ev, st.ctx.Done()); errors.Is(err, sendqueue.ErrStalled) {
		st.cutOff()
	}
}

// sendHere sends ev on the calling goroutine or thread if the stream is
// idle: no one else sends, nothing is queued (events keep their order),
// and gRPC holds nothing of the stream but ev itself, so that its write
// quota is free and SendMsg does not wait. It reports whether it took ev.
func (st *inferStream) sendHere(ev streamEvent) bool {
	var weight int64 // what ev counts in the arena's inFlight
	if ev.end != nil {
		return false // the sender ends the stream with it, after what is queued
	}
	if ev.msg != nil {
		if !ev.msg.tracked {
			return false // gRPC's quota cannot be known with it in flight
		}
		weight = int64(ev.msg.bufs.Len() + messageHeaderBytes)
	}
	if !st.sendMu.TryLock() {
		return false
	}
	if st.sendClosed || st.ctx.Err() != nil || st.queue.Len() > 0 || st.arena.inFlight() > weight {
		st.sendMu.Unlock()
		return false
	}
	if ev.last && !st.settle(ev.sr) {
		st.sendMu.Unlock()
		ev.free() // abort answered the request
		return true
	}
	var err error
	if ev.msg != nil {
		err = st.stream.SendMsg(ev.msg) // gRPC frees the message, sent or not
	}
	if ev.last { // after the send: the sender ends the stream once nothing is pending
		st.pending.Add(-1)
		<-st.slots
	}
	st.sendMu.Unlock()
	if err != nil {
		st.sendErr.CompareAndSwap(nil, &err)
		st.cancel() // the stream is broken: its requests are cancelled
	}
	if err != nil || ev.last {
		select {
		case st.settled <- struct{}{}:
		default:
		}
	}
	return true
}

// cutOff ends a stream whose client does not read: its requests are
// cancelled now, and the handler returns RESOURCE_EXHAUSTED.
func (st *inferStream) cutOff() {
	st.cutOnce.Do(func() {
		st.svc.core.Logger().Warnf("ModelStreamInfer: a client did not read its responses for %v; its stream is cut off with %d request(s) pending",
			st.svc.opts.Stream.StallTimeout, st.pending.Load())
		close(st.cut)
		st.cancel()
	})
}

// write is the stream's sender: it sends what is queued. It ends when the
// client has sent everything and every request completed, when the server
// drains and nothing is pending, or when the stream breaks; then nothing
// more is sent, and it closes the queue, which frees what is left.
func (st *inferStream) write() error {
	defer func() {
		st.sendMu.Lock()
		st.sendClosed = true
		st.sendMu.Unlock()
		st.queue.Close()
		st.arena.close()
	}()
	readerDone := st.readerDone
	draining := st.svc.draining
	for {
		if err := st.sendErr.Load(); err != nil {
			return *err
		}
		if st.pending.Load() == 0 {
			if readerDone == nil {
				return nil
			}
			if draining == nil {
				return status.Error(codes.Unavailable, ShuttingDown)
			}
		}
		st.sendMu.Lock()
		if batch := st.queue.Take(); len(batch) > 0 {
			err := st.sendBatch(batch)
			st.sendMu.Unlock()
			if err != nil {
				return err
			}
			st.queue.Recycle(batch)
			continue
		}
		st.sendMu.Unlock()
		select {
		case <-st.queue.Ready():
		case <-st.settled:
		case <-readerDone:
			readerDone = nil
		case <-draining:
			draining = nil
		case <-st.svc.aborting:
			return st.abort()
		case <-st.ctx.Done():
			if err := st.sendErr.Load(); err != nil {
				return *err
			}
			return status.FromContextError(st.ctx.Err()).Err()
		}
	}
}

// sendBatch sends a batch the sender took, holding sendMu; after an
// error, it frees the rest.
func (st *inferStream) sendBatch(batch []streamEvent) error {
	for i, ev := range batch {
		if ev.last {
			st.pending.Add(-1)
			<-st.slots
			st.settle(ev.sr)
		}
		if ev.end != nil {
			freeEvents(batch[i+1:])
			return toStatus(ev.end)
		}
		if ev.msg != nil {
			// gRPC frees the message, sent or not.
			if err := st.stream.SendMsg(ev.msg); err != nil {
				freeEvents(batch[i+1:])
				return err
			}
		}
	}
	return nil
}

// settle removes a request whose last event is about to be sent from
// those abort answers; it reports false if abort has answered it already
// (the event is then dropped).
func (st *inferStream) settle(sr *streamRequest) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.live == nil {
		return false
	}
	delete(st.live, sr)
	return true
}

// abort answers every request whose last event is not sent yet with the
// service's abort error, as its final response, and returns the status
// the stream ends with. Events queued and not sent are dropped with the
// queue; those pushed later are freed at once.
func (st *inferStream) abort() error {
	st.mu.Lock()
	live := st.live
	st.live = nil
	st.aborted.Store(true)
	st.mu.Unlock()
	// Nothing goes out from where it is produced from now on; a producer
	// sending now finishes first.
	st.sendMu.Lock()
	st.sendClosed = true
	st.sendMu.Unlock()
	err := st.svc.abortErr
	for sr := range live {
		// gRPC frees the message, sent or not.
		if st.stream.SendMsg(encodeResponse(sr.header, nil, isFinal, true, err.Error())) != nil {
			break
		}
	}
	return toStatus(err)
}
