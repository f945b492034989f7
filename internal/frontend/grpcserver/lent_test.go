package grpcserver_test

import (
	"context"
	"io"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/coretest"
	"github.com/tritonhost/tritonhost/internal/frontend/grpcserver"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// lender stands in for a backend layer that lends its output buffers
// (core.Response.Lent) to requests whose ResponseFunc frees responses, as
// the gRPC frontend's do: it counts what is lent and not yet freed.
type lender struct {
	t        *testing.T
	out      atomic.Int64
	lentEver atomic.Int64
}

type lentBuffer struct {
	l     *lender
	freed atomic.Bool
}

func (b *lentBuffer) Free() {
	if b.freed.Swap(true) {
		b.l.t.Error("a response was freed twice")
		return
	}
	b.l.out.Add(-1)
}

// echo is the echo response of r, lent when the frontend frees responses.
func (l *lender) echo(r *core.Request) *core.Response {
	resp := coretest.EchoResponse(r)
	if r.Responder().FreesResponses() {
		l.out.Add(1)
		l.lentEver.Add(1)
		resp.Lent = &lentBuffer{l: l}
	}
	return resp
}

// stream sends n echo responses, then a flags-only final.
func (l *lender) stream(n int) coretest.Answer {
	return func(x *coretest.Exec, r *core.Request) {
		for range n {
			_ = x.Send(r, l.echo(r), false)
		}
		_ = x.SendFinal(r)
	}
}

// settled waits until everything lent was freed (collecting garbage when
// gc is set: gRPC drops the frames of a broken connection unfreed) and
// checks that something was lent at all.
func (l *lender) settled(gc bool) {
	l.t.Helper()
	if !testenv.Eventually(func() bool {
		if gc {
			runtime.GC()
		}
		return l.out.Load() == 0
	}) {
		l.t.Fatalf("%d lent responses never freed", l.out.Load())
	}
	if l.lentEver.Load() == 0 {
		l.t.Error("nothing was lent: the frontend did not ask for lent responses")
	}
}

func TestLentResponsesAreFreedOnceSent(t *testing.T) {
	t.Parallel()
	l := &lender{t: t}
	h := newHarness(t, setup{}, coretest.ModelDir{Name: "echo", Config: vector("")},
		coretest.ModelDir{Name: "dec", Config: vector(decoupled)})
	h.p.Set("echo", coretest.Answering(coretest.Reply(l.echo)))
	h.p.Set("dec", coretest.Async(l.stream(20)))
	big := make([]int32, 4<<10) // 16 KiB: sent from the lent memory
	for _, values := range [][]int32{{1, 2}, big} {
		resp, err := h.client.ModelInfer(t.Context(), request("echo", "u", values...))
		if err != nil || len(resp.GetRawOutputContents()) != 1 || len(resp.GetRawOutputContents()[0]) != 4*len(values) {
			t.Fatalf("ModelInfer of %d values: %v, %v", len(values), resp, err)
		}
		st := h.open(t, true)
		st.send(request("dec", "s", values...))
		for range 20 {
			if m := st.recv(); len(m.GetInferResponse().GetRawOutputContents()[0]) != 4*len(values) {
				t.Fatalf("streamed %s", describe(m))
			}
		}
		st.s.CloseSend()
		if err := st.ended(); err != io.EOF {
			t.Fatalf("stream ended with %v", err)
		}
	}
	l.settled(false)
}

func TestLentResponseOfAUnaryClientThatLeftIsFreed(t *testing.T) {
	t.Parallel()
	l := &lender{t: t}
	gate := coretest.NewGate(t)
	h := newHarness(t, setup{}, coretest.ModelDir{Name: "echo", Config: vector("")})
	h.p.Set("echo", coretest.Answering(coretest.After(gate, coretest.Reply(l.echo))))
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error)
	go func() {
		_, err := h.client.ModelInfer(ctx, request("echo", "gone", make([]int32, 4<<10)...))
		done <- err
	}()
	h.p.Reached(t, "gone")
	cancel()
	if err := <-done; status.Code(err) != codes.Canceled {
		t.Fatalf("ModelInfer: %v, want CANCELLED", err)
	}
	gate.Open()
	h.p.WaitCalls(t, "gone", "Send(final)", 1)
	l.settled(false)
}

func TestLentResponsesOfABrokenStreamAreFreed(t *testing.T) {
	t.Parallel()
	l := &lender{t: t}
	h := newHarness(t, setup{
		service: grpcserver.Options{Stream: grpcserver.StreamLimits{MaxResponses: 4, MaxResponseBytes: 1 << 20, StallTimeout: 200 * time.Millisecond}},
		dial:    []grpc.DialOption{grpc.WithInitialWindowSize(64 << 10), grpc.WithInitialConnWindowSize(64 << 10)},
	}, coretest.ModelDir{Name: "dec", Config: vector(decoupled)})
	h.p.Set("dec", coretest.Async(l.stream(64)))
	st := h.open(t, false) // reads nothing: responses pile up in gRPC and the queue
	st.send(request("dec", "flood", make([]int32, 8<<10)...))
	h.p.WaitCalls(t, "flood", "SendFinal", 1) // the stream was cut off, or everything queued
	h.conn.Close()
	l.settled(true)
}
