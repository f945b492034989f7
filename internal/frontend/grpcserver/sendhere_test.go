package grpcserver

import (
	"context"
	"sync"
	"testing"

	"google.golang.org/grpc"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/coretest"
)

// recordingStream is the gRPC side of a stream for tests of its sending:
// SendMsg records and frees the message, as gRPC does once it wrote it.
type recordingStream struct {
	grpc.ServerStream // the methods the tests do not use
	ctx               context.Context
	mu                sync.Mutex
	sent              int
}

func (r *recordingStream) Context() context.Context { return r.ctx }

func (r *recordingStream) SendMsg(m any) error {
	r.mu.Lock()
	r.sent++
	r.mu.Unlock()
	m.(*encodedMessage).free()
	return nil
}

func (r *recordingStream) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sent
}

// newTestStream returns a stream's state on a recordingStream, its sender
// not running, with one request pending.
func newTestStream(t *testing.T) (*inferStream, *recordingStream) {
	t.Helper()
	svc := New(coretest.Serve(t, core.Options{Backends: coretest.NewProvider()}), Options{})
	rs := &recordingStream{ctx: t.Context()}
	st := svc.newInferStream(rs)
	t.Cleanup(func() { st.cancel(); st.queue.Close(); st.arena.close() })
	st.slots <- struct{}{}
	st.pending.Add(1)
	return st, rs
}

func (st *inferStream) event(v byte, last bool) streamEvent {
	return streamEvent{msg: encodeIn(&st.arena, squareHeader, squareResponse(v), notFinal, true, ""), last: last}
}

func TestIdleStreamSendsWhereTheResponseWasProduced(t *testing.T) {
	st, rs := newTestStream(t)
	st.push(st.event(1, true))
	if rs.count() != 1 || st.queue.Len() != 0 {
		t.Fatalf("sent %d, queued %d: the response of an idle stream was handed off", rs.count(), st.queue.Len())
	}
	if st.pending.Load() != 0 || len(st.slots) != 0 {
		t.Errorf("pending %d, slots held %d: the last response did not end its request", st.pending.Load(), len(st.slots))
	}
	select {
	case <-st.settled:
	default:
		t.Error("the sender was not told that a request ended")
	}
	if n := st.arena.inFlight(); n != 0 {
		t.Errorf("%d bytes in flight after the message was written", n)
	}
}

func TestBusyStreamQueuesForItsSender(t *testing.T) {
	tests := []struct {
		name string
		busy func(t *testing.T, st *inferStream) (undo func())
	}{
		{"gRPC holds another message of the stream", func(t *testing.T, st *inferStream) func() {
			held := st.event(0, false)
			return held.free
		}},
		{"the queue holds events", func(t *testing.T, st *inferStream) func() {
			if err := st.queue.Push(streamEvent{}, nil); err != nil {
				t.Fatal(err)
			}
			return func() {}
		}},
		{"another sender is sending", func(t *testing.T, st *inferStream) func() {
			st.sendMu.Lock()
			return st.sendMu.Unlock
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st, rs := newTestStream(t)
			undo := tc.busy(t, st)
			defer undo()
			before := st.queue.Len()
			st.push(st.event(1, true))
			if rs.count() != 0 || st.queue.Len() != before+1 {
				t.Fatalf("sent %d, queued %d: a busy stream's response must go to its sender", rs.count(), st.queue.Len()-before)
			}
			if st.pending.Load() != 1 {
				t.Error("a queued response ended its request before it was sent")
			}
		})
	}
}
