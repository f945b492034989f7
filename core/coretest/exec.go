package coretest

import (
	"fmt"
	"strings"

	"github.com/tritonhost/tritonhost/core"
)

// Exec is one execution as a Behaviour sees it: the instance and its batch.
// Its methods make the backend's calls on a request through the request's
// Responder and record each with what it returned (see Provider.Calls).
type Exec struct {
	Instance *core.Instance
	Batch    []*core.Request
	p        *Provider
}

// Send sends resp, final or not.
func (x *Exec) Send(r *core.Request, resp *core.Response, final bool) error {
	err := r.Responder().Send(resp, final)
	op := "Send"
	if final {
		op = "Send(final)"
	}
	x.Note(r, op, err)
	return err
}

// SendFinal completes the request without a response (a flags-only final).
func (x *Exec) SendFinal(r *core.Request) error {
	err := r.Responder().SendFinal()
	x.Note(r, "SendFinal", err)
	return err
}

// Release gives the request back to the server.
func (x *Exec) Release(r *core.Request, flags uint32) error {
	err := r.Release(flags)
	op := "Release"
	if flags&core.ReleaseReschedule != 0 {
		op = "Release(reschedule)"
	}
	x.Note(r, op, err)
	return err
}

// Hold records that the backend will answer after releasing the request.
func (x *Exec) Hold(r *core.Request) {
	r.Hold()
	x.Note(r, "Hold", nil)
}

// Drop ends a Hold.
func (x *Exec) Drop(r *core.Request) {
	r.Drop()
	x.Note(r, "Drop", nil)
}

// OnCancel registers f as a cancel hook of the request; every run of it is
// recorded as "OnCancel". It returns the hook, to remove it.
func (x *Exec) OnCancel(r *core.Request, f func()) core.CancelHook {
	return r.Responder().OnCancel(func() {
		x.Note(r, "OnCancel", nil)
		f()
	})
}

// Note records a call, or an observation, for the request.
func (x *Exec) Note(r *core.Request, op string, err error) { x.p.log.call(r.ID(), op, err) }

func quoted(ids []string) string {
	q := make([]string, len(ids))
	for i, id := range ids {
		q[i] = fmt.Sprintf("%q", id)
	}
	return strings.Join(q, ", ")
}
