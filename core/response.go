package core

import (
	"slices"
	"sync"
	"sync/atomic"
)

// Response is one response to an inference request. It carries no request
// identity: the ResponseFunc it is handed to belongs to one request, and the
// caller of Server.Infer knows which.
type Response struct {
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
	start     uint64 // Nanotime the request was accepted, for the first-response time
	onFinal   func()

	cancelled  atomic.Bool
	hookMu     sync.Mutex
	hooks      []cancelHook // OnCancel hooks not yet run or removed, in order
	hookBuf    [2]cancelHook
	nextHook   uint64
	statsIndex atomic.Uint64
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

// Requested reports whether the client asked for the output name: it named
// it, or it named no output at all. Send drops the outputs it did not ask
// for; a backend layer that copies outputs can ask first and skip them.
func (p *Responder) Requested(name string) bool { return p.requested == nil || p.requested[name] }

// Send delivers a response produced by the backend, final if final is set.
// Outputs the client did not ask for are dropped, outputs with a reshape in
// the model configuration get their configured shape back, and an output the
// model does not declare, or one larger than MaxTensorBytes, turns the
// response into an error. For a model that
// is not decoupled, a second response fails the request: the client gets an
// error and Send returns one. After the final response, Send fails with
// CodeNotFound.
func (p *Responder) Send(resp *Response, final bool) error {
	var sendErr error
	if resp.Err == nil {
		sendErr = p.shapeOutputs(resp)
		if sendErr != nil {
			resp = &Response{Err: sendErr}
		}
	}

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

// CheckOutputSize refuses an output of size bytes that is larger than the
// server holds (Options.MaxTensorBytes). Send applies it; a backend layer
// that copies outputs can apply it first and copy nothing.
func (p *Responder) CheckOutputSize(name string, size int64) error {
	if m := p.model; size > m.maxTensor.bytes {
		return Errorf(CodeInternal, "model %q sent output %q of %s", m.name, name, m.maxTensor.tooLarge(size))
	}
	return nil
}

// shapeOutputs drops outputs the client did not request, checks the rest
// against the configuration and gives outputs with a reshape their
// configured shape.
func (p *Responder) shapeOutputs(resp *Response) error {
	m := p.model
	kept := resp.Outputs[:0]
	for _, out := range resp.Outputs {
		if !p.Requested(out.Name) {
			continue
		}
		if err := p.CheckOutputSize(out.Name, int64(len(out.Data))); err != nil {
			return err
		}
		if len(m.outputs) > 0 {
			cfg := m.outputs[out.Name]
			if cfg == nil {
				return Errorf(CodeInvalidArg, "model %q sent output %q, which its configuration does not declare", m.name, out.Name)
			}
			if cfg.GetReshape() != nil {
				out.Shape = unreshape(out.Shape, m.maxBatch > 0, cfg.GetReshape().GetShape(), cfg.GetDims())
			}
		}
		kept = append(kept, out)
	}
	resp.Outputs = kept
	return nil
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

// OnCancel registers f to run once when the client cancels the request, or
// at once if it already did. Hooks add up: each layer that cares registers
// its own, and they run in the order they were added. The returned
// CancelHook removes f if it has not run yet.
func (p *Responder) OnCancel(f func()) CancelHook {
	p.hookMu.Lock()
	if p.cancelled.Load() {
		p.hookMu.Unlock()
		f()
		return CancelHook{}
	}
	if p.hooks == nil {
		p.hooks = p.hookBuf[:0]
	}
	p.nextHook++
	p.hooks = append(p.hooks, cancelHook{id: p.nextHook, f: f})
	p.hookMu.Unlock()
	return CancelHook{p: p, id: p.nextHook}
}

type cancelHook struct {
	id uint64
	f  func()
}

// CancelHook is a hook registered with Responder.OnCancel.
type CancelHook struct {
	p  *Responder
	id uint64
}

// Remove takes the hook away unless it already ran; removing it twice, or
// the zero CancelHook, does nothing.
func (h CancelHook) Remove() {
	if h.p == nil {
		return
	}
	h.p.hookMu.Lock()
	defer h.p.hookMu.Unlock()
	h.p.hooks = slices.DeleteFunc(h.p.hooks, func(c cancelHook) bool { return c.id == h.id })
}

// NextResponseIndex returns the 0-based index under which the next response
// statistics of this request are recorded.
func (p *Responder) NextResponseIndex() uint64 { return p.statsIndex.Add(1) - 1 }

// cancel marks the request cancelled and runs every cancel hook once.
func (p *Responder) cancel() {
	p.hookMu.Lock()
	if p.cancelled.Swap(true) {
		p.hookMu.Unlock()
		return
	}
	hooks := p.hooks
	p.hooks = nil
	p.hookMu.Unlock()
	for _, h := range hooks {
		h.f()
	}
}

func (p *Responder) deliverLocked(resp *Response, final bool) {
	if resp != nil {
		p.sent++
		if p.sent == 1 && resp.Err == nil {
			p.model.observeFirstResponse(p.start)
		}
	}
	if final {
		p.done = true
	}
	p.fn(resp, final)
	if final && p.onFinal != nil {
		p.onFinal()
	}
}

func (p *Responder) errorResponse(err error) *Response { return &Response{Err: err} }

func (p *Responder) closedError() error {
	return Errorf(CodeNotFound, "request %q of model %q already received its final response", p.id, p.model.name)
}
