package httpserver

import (
	"context"
	"errors"
	"net/http"
	"os"
	"sync"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/internal/sendqueue"
)

// sseEvent is one Server-Sent Event, encoded ("data: {...}\n\n"; nil when
// the response sends nothing), whether it is the request's last, and the
// HTTP status it calls for when it is the stream's first (0: 200).
type sseEvent struct {
	data   []byte
	last   bool
	status int
}

func (ev sseEvent) size() int { return len(ev.data) }

// eventStream is one /generate_stream response. Backend threads encode
// each response and push it into a bounded queue; the handler's goroutine
// alone writes, flushing after each batch, every write bounded by the
// stall timeout.
type eventStream struct {
	s      *Server
	m      *core.Model
	id     string // the request's id
	queue  *sendqueue.Queue[sseEvent]
	ctx    context.Context // ends when the handler returns: cancels the request
	cancel context.CancelFunc

	cutOnce sync.Once
	cut     chan struct{} // closed when the client is cut off for not reading
}

// generateStream serves POST .../generate_stream: every response of the
// request as an event, for any model, decoupled or not. A request refused
// before it runs is answered with a JSON error and its status, as Triton.
// As Triton's, the stream starts with the first response, and takes its
// status from it: an error response gets the status of its code (its
// event {"error": "..."} in the body); a later error is an event of the
// same kind in a stream already answered 200. The stream ends after the
// request's last response.
func (s *Server) generateStream(w http.ResponseWriter, r *http.Request) {
	m, req, err := s.generateRequest(w, r)
	if err != nil {
		writeError(w, err)
		return
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	lim := s.opts.Stream
	st := &eventStream{s: s, m: m, id: req.ID, ctx: ctx, cancel: cancel, cut: make(chan struct{}),
		queue: sendqueue.New(lim.MaxResponses, lim.MaxResponseBytes, lim.StallTimeout, sseEvent.size, nil)}
	if err := s.core.Submit(ctx, m, req, st.respond); err != nil {
		writeError(w, err)
		return
	}
	st.write(w)
}

// start sends the stream's header with the first event's status.
func (st *eventStream) start(w http.ResponseWriter, first sseEvent) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	status := first.status
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
}

// respond encodes a response on the thread that produced it and queues it.
// A flags-only final sends nothing.
func (st *eventStream) respond(resp *core.Response, last bool) {
	ev := sseEvent{last: last}
	if resp != nil {
		err := resp.Err
		if err == nil {
			ev.data, err = generateEvent(st.m, st.id, resp)
		}
		if err != nil {
			ev.data = sseData(appendJSONString([]byte(`{"error":`), err.Error()), '}')
			ev.status = StatusOf(err)
		}
	}
	if err := st.queue.Push(ev, st.ctx.Done()); errors.Is(err, sendqueue.ErrStalled) {
		st.cutOff()
	}
}

// sseData frames JSON as one event.
func sseData(json []byte, tail ...byte) []byte {
	out := make([]byte, 0, len(json)+len(tail)+8)
	out = append(out, "data: "...)
	out = append(out, json...)
	out = append(out, tail...)
	return append(out, "\n\n"...)
}

// cutOff ends a stream whose client does not read: its request is
// cancelled now, and the handler returns.
func (st *eventStream) cutOff() {
	st.cutOnce.Do(func() {
		st.s.core.Logger().Warnf("generate_stream: a client did not read its responses for %v; its stream of model %q is cut off and its request cancelled",
			st.s.opts.Stream.StallTimeout, st.m.Name())
		close(st.cut)
		st.cancel()
	})
}

// writeFailed ends the stream after a failed write: a client that did
// not take the events within the stall timeout is cut off; one that went
// away only has its request cancelled.
func (st *eventStream) writeFailed(err error) {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		st.cutOff()
		return
	}
	st.cancel()
}

// write sends the queued events until the request's last one, the client
// goes away, or it is cut off. Each batch must be written and flushed
// within the stall timeout.
func (st *eventStream) write(w http.ResponseWriter) {
	rc := http.NewResponseController(w)
	started := false
	for {
		batch := st.queue.Take()
		if len(batch) > 0 {
			if !started {
				st.start(w, batch[0])
				started = true
			}
			st.s.setWriteDeadline(w, st.s.opts.Stream.StallTimeout)
			last := false
			for _, ev := range batch {
				last = last || ev.last
				if ev.data == nil {
					continue
				}
				if _, err := w.Write(ev.data); err != nil {
					st.writeFailed(err)
					return
				}
			}
			if err := rc.Flush(); err != nil {
				st.writeFailed(err)
				return
			}
			st.queue.Recycle(batch)
			if last {
				return
			}
			continue
		}
		select {
		case <-st.queue.Ready():
		case <-st.cut:
			return
		case <-st.ctx.Done():
			return
		case <-st.s.aborting:
			ev := sseEvent{data: sseData(appendJSONString([]byte(`{"error":`), st.s.abortErr.Error()), '}'), last: true,
				status: StatusOf(st.s.abortErr)}
			if !started { // the error is the stream's first event: its status is the stream's
				st.start(w, ev)
			}
			st.s.setWriteDeadline(w, st.s.opts.Stream.StallTimeout)
			if _, err := w.Write(ev.data); err == nil {
				_ = rc.Flush()
			}
			return
		}
	}
}
