package core

import (
	"sync"
	"sync/atomic"
)

// Response is one response to an inference request.
type Response struct {
	Model      string
	Version    int64
	ID         string
	Outputs    []Output
	Parameters []Parameter
	// Err is set for an error response; such a response carries no outputs.
	Err error
}

// ResponseFunc receives the responses of one request. It is called once per
// response the backend sends; the call with final == true is the last. A
// flags-only completion (the backend had nothing more to say) arrives as
// resp == nil with final == true. Calls for one request never overlap, and
// the final call comes after every other call for that request returned.
// It runs on the goroutine or backend thread that produced the response, so
// it should hand the response off rather than block for long: while it runs,
// that backend thread waits.
type ResponseFunc func(resp *Response, final bool)

// ResponseCompleteFinal is TRITONSERVER_RESPONSE_COMPLETE_FINAL.
const ResponseCompleteFinal uint32 = 1

// Responder delivers the responses of one request to its ResponseFunc and
// enforces the transaction policy: a decoupled model may send any number of
// responses; any other model exactly one. It stays valid after the request is
// released, so backends can keep sending from their own threads, and every
// method is safe for concurrent use.
type Responder struct {
	mu        sync.Mutex
	fn        ResponseFunc
	model     *Model
	id        string
	requested map[string]bool // nil: every output
	held      *Response       // non-decoupled: first response, waiting for FINAL
	sent      int
	done      bool
	onFinal   func()

	cancelled   atomic.Bool
	onCancel    atomic.Pointer[func()]
	cancelFired atomic.Bool
	statsIndex  atomic.Uint64
}

func newResponder(m *Model, id string, requested []string, fn ResponseFunc) *Responder {
	p := &Responder{fn: fn, model: m, id: id}
	if len(requested) > 0 {
		p.requested = make(map[string]bool, len(requested))
		for _, n := range requested {
			p.requested[n] = true
		}
	}
	return p
}

// Model returns the model the request was sent to.
func (p *Responder) Model() *Model { return p.model }

// Send delivers a response produced by the backend, final if final is set.
// Outputs the client did not ask for are dropped, outputs with a reshape in
// the model configuration get their configured shape back, and an output the
// model does not declare turns the response into an error. For a model that
// is not decoupled, a second response fails the request: the client gets an
// error and Send returns one. After the final response, Send fails with
// CodeNotFound.
func (p *Responder) Send(resp *Response, final bool) error {
	var sendErr error
	if resp.Err == nil {
		sendErr = p.model.shapeOutputs(resp, p.requested)
		if sendErr != nil {
			resp = &Response{Err: sendErr}
		}
	}
	p.stamp(resp)

	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done {
		return p.closedError()
	}
	if !p.model.decoupled {
		if p.held != nil || p.sent > 0 {
			err := Errorf(CodeInvalidArg, "model %q is not decoupled but sent more than one response for request %q; use model_transaction_policy { decoupled: true } to send several", p.model.name, p.id)
			p.deliverLocked(p.errorResponse(err), true)
			return err
		}
		if !final {
			p.held = resp
			return sendErr
		}
	}
	p.deliverLocked(resp, final)
	return sendErr
}

// SendFinal completes the request without a response (a flags-only FINAL).
// For a model that is not decoupled it delivers the response held back until
// now, or an error if the backend sent none.
func (p *Responder) SendFinal() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done {
		return p.closedError()
	}
	if !p.model.decoupled {
		resp := p.held
		p.held = nil
		if resp == nil {
			resp = p.errorResponse(Errorf(CodeInternal, "model %q completed request %q without sending a response", p.model.name, p.id))
		}
		p.deliverLocked(resp, true)
		return nil
	}
	p.deliverLocked(nil, true)
	return nil
}

// Fail completes the request with an error response, unless it is already
// complete. It reports whether the error was delivered.
func (p *Responder) Fail(err error) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done {
		return false
	}
	p.held = nil
	p.deliverLocked(p.errorResponse(err), true)
	return true
}

// Done reports whether the final response was delivered.
func (p *Responder) Done() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.done
}

// Cancelled reports whether the client cancelled the request.
func (p *Responder) Cancelled() bool { return p.cancelled.Load() }

// OnCancel registers f to run once when the client cancels the request (at
// once if it already did). A later call replaces an earlier hook.
func (p *Responder) OnCancel(f func()) {
	p.onCancel.Store(&f)
	if p.cancelled.Load() && p.cancelFired.CompareAndSwap(false, true) {
		f()
	}
}

// NextResponseIndex returns the 0-based index under which the next response
// statistics of this request are recorded.
func (p *Responder) NextResponseIndex() uint64 { return p.statsIndex.Add(1) - 1 }

// cancel marks the request cancelled and runs the cancel hook once.
func (p *Responder) cancel() {
	if p.cancelled.Swap(true) {
		return
	}
	if f := p.onCancel.Load(); f != nil && p.cancelFired.CompareAndSwap(false, true) {
		(*f)()
	}
}

func (p *Responder) deliverLocked(resp *Response, final bool) {
	if resp != nil {
		p.sent++
	}
	if final {
		p.done = true
	}
	p.fn(resp, final)
	if final && p.onFinal != nil {
		p.onFinal()
	}
}

func (p *Responder) stamp(resp *Response) {
	resp.Model = p.model.name
	resp.Version = p.model.version
	resp.ID = p.id
}

func (p *Responder) errorResponse(err error) *Response {
	r := &Response{Err: err}
	p.stamp(r)
	return r
}

func (p *Responder) closedError() error {
	return Errorf(CodeNotFound, "request %q of model %q already received its final response", p.id, p.model.name)
}
