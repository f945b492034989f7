package coretest

import (
	"sync"

	"github.com/tritonhost/tritonhost/core"
)

// Answer sends the responses of one request. It does not release the
// request: the Behaviour running it does.
type Answer func(x *Exec, r *core.Request)

// IndexParam is the response parameter that numbers the responses of Times
// and Stream, from 0.
const IndexParam = "index"

// Once sends one response echoing the request's inputs, final.
func Once() Answer { return Send(true) }

// Send sends one response echoing the request's inputs, final or not.
func Send(final bool) Answer {
	return func(x *Exec, r *core.Request) { _ = x.Send(r, EchoResponse(r), final) }
}

// SendFinal completes the request with a flags-only final.
func SendFinal() Answer {
	return func(x *Exec, r *core.Request) { _ = x.SendFinal(r) }
}

// Times sends n echo responses numbered by IndexParam, the last one final;
// with n == 0 it sends a flags-only final.
func Times(n int) Answer {
	return func(x *Exec, r *core.Request) {
		if n == 0 {
			_ = x.SendFinal(r)
		}
		for i := range n {
			_ = x.Send(r, numbered(r, i), i == n-1)
		}
	}
}

// Stream sends n echo responses numbered by IndexParam, none final, then a
// flags-only final: how decoupled backends end a request.
func Stream(n int) Answer {
	return func(x *Exec, r *core.Request) {
		for i := range n {
			_ = x.Send(r, numbered(r, i), false)
		}
		_ = x.SendFinal(r)
	}
}

func numbered(r *core.Request, i int) *core.Response {
	resp := EchoResponse(r)
	resp.Parameters = append(resp.Parameters, core.IntParam(IndexParam, int64(i)))
	return resp
}

// Reply sends the response f makes for the request, final.
func Reply(f func(r *core.Request) *core.Response) Answer {
	return func(x *Exec, r *core.Request) { _ = x.Send(r, f(r), true) }
}

// FailWith sends err as the request's final response.
func FailWith(err error) Answer {
	return Reply(func(*core.Request) *core.Response { return &core.Response{Err: err} })
}

// Silence sends nothing.
func Silence() Answer { return func(*Exec, *core.Request) {} }

// Then runs answers one after the other.
func Then(answers ...Answer) Answer {
	return func(x *Exec, r *core.Request) {
		for _, a := range answers {
			a(x, r)
		}
	}
}

// After waits for g, then runs a.
func After(g *Gate, a Answer) Answer {
	return func(x *Exec, r *core.Request) {
		g.Wait()
		a(x, r)
	}
}

// AwaitCancel waits until the client cancels the request, learning it from a
// cancel hook (Responder.OnCancel), notes "Cancelled" if Request.Cancelled
// then says so, and sends a CANCELLED error as the final response. Run it
// with Async or Detached: it blocks until the test cancels.
func AwaitCancel() Answer {
	return func(x *Exec, r *core.Request) {
		hit := make(chan struct{})
		once := sync.OnceFunc(func() { close(hit) })
		x.OnCancel(r, once)
		<-hit
		if r.Cancelled() {
			x.Note(r, "Cancelled", nil)
		}
		_ = x.Send(r, &core.Response{Err: core.Errorf(core.CodeCancelled, "request %q was cancelled", r.ID())}, true)
	}
}

// Response statistics that ReportedStream reports for every response, in
// nanoseconds: compute infer, compute output, and the two together.
const (
	StreamInferNs  = 5
	StreamOutputNs = 10
	StreamTotalNs  = StreamInferNs + StreamOutputNs
)

// ReportedStream sends n responses without outputs, none final, reporting
// each to the model's response statistics as a success of StreamInferNs
// compute infer and StreamOutputNs compute output, then a flags-only final:
// a long decoupled stream that costs little. Only the final is recorded
// (as "SendFinal"); a failed Send is recorded as "Send".
func ReportedStream(n int) Answer {
	return func(x *Exec, r *core.Request) {
		p := r.Responder()
		for range n {
			start := core.Nanotime()
			if err := p.Send(&core.Response{}, false); err != nil {
				x.Note(r, "Send", err)
				return
			}
			x.Instance.ReportResponseStatistics(p, start, start+StreamInferNs, start+StreamTotalNs, core.ResponseSucceeded)
		}
		_ = x.SendFinal(r)
	}
}
