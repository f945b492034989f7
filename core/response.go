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
	// Lent, when set, owns memory outside the Go heap that the outputs'
	// Data and Shape point into: the buffers a backend wrote its outputs
	// to, lent to the caller rather than copied (only to a caller that
	// asked for it, Submission.FreesResponses). Free gives it back.
	Lent LentMemory
}

// LentMemory is memory outside the Go heap that a backend layer lends to a
// response. Free gives it back; it is called once, from any goroutine.
type LentMemory interface {
	Free()
}

// Free gives back the memory lent to the response, if any (Lent). It ends
// a response with lent memory: from then on neither the response nor its
// outputs may be used (the backend layer may reuse the Response itself).
// It does nothing on a nil response or one with nothing lent, and clears
// Lent, so a second call on the same response does nothing. Whoever holds
// a response with lent memory frees it exactly once: the caller of
// Server.Infer that asked for lent memory, or the server for a response it
// drops.
func (r *Response) Free() {
	if r == nil || r.Lent == nil {
		return
	}
	l := r.Lent
	r.Lent = nil
	l.Free()
}

// ResponseFunc receives the responses of one request. It is called once per
// response the backend sends; the call with final == true is the last. A
// flags-only completion (the backend had nothing more to say) arrives as
// resp == nil with final == true. Calls for one request never overlap, and
// the final call comes after every other call for that request returned.
// It runs on the goroutine or backend thread that produced the response, so
// it should hand the response off rather than block for long: while it runs,
// that backend thread waits.
//
// The response is the callee's. Unless the request set
// Submission.FreesResponses, its memory is Go memory and the callee
// needs to do nothing about it; with FreesResponses the callee calls
// resp.Free once it no longer reads the outputs (for instance after the
// wire has written them), on any goroutine.
type ResponseFunc func(resp *Response, final bool)

// ResponseCompleteFinal is TRITONSERVER_RESPONSE_COMPLETE_FINAL.
const ResponseCompleteFinal uint32 = 1

// Responder delivers the responses of one request to its ResponseFunc and
// enforces the transaction policy: a decoupled model may send any number of
// responses; any other model exactly one. It stays valid after the request is
// released, so backends can keep sending from their own threads, and every
// method is safe for concurrent use.
type Responder struct {
	mu    sync.Mutex
	fn    ResponseFunc
	model *Model
	id    string
	// The outputs the client named (nil: every output), the submission's
	// own slice; as a set too when there are more than requestedScan.
	requested    []string
	requestedSet map[string]bool
	frees        bool      // the ResponseFunc frees responses (FreesResponses)
	held         *Response // non-decoupled: first response, waiting for FINAL
	dropped      int       // non-decoupled: further responses dropped
	sent         int
	done         bool
	start        uint64   // Nanotime the request was accepted, for the first-response time
	req          *Request // its finalDelivered runs after the final response; nil: nothing runs
	trace        *Trace   // the request's trace, nil when it is not traced

	cancelled atomic.Bool
	hookMu    sync.Mutex
	hooks     []cancelHook // OnCancel hooks not yet run or removed, in order
	hookBuf   [2]cancelHook
	nextHook  uint64
	// statsIndex is the index of the next response statistics of the
	// request (statsRecorder.response); guarded by the lock of its shard
	// of its model's statistics, statsShard.
	statsIndex uint64
	statsShard uint8
	maxTensor  tensorLimit // the largest output: the request's bound, or the server's
	// passThrough: a forwarded request's responses go on as sent, its
	// server shapes them and applies the transaction policy.
	passThrough bool
}

func newResponder(m *Model, id string, requested []string, frees bool, fn ResponseFunc) *Responder {
	p := new(Responder)
	p.init(m, id, requested, frees, fn)
	return p
}

// init sets up p, a zero Responder, as newResponder's.
func (p *Responder) init(m *Model, id string, requested []string, frees bool, fn ResponseFunc) {
	p.fn, p.model, p.id, p.frees, p.maxTensor = fn, m, id, frees, m.maxTensor
	p.statsShard = m.stats.shard()
	if len(requested) > 0 {
		p.requested = requested
	}
	if len(requested) > requestedScan {
		p.requestedSet = make(map[string]bool, len(requested))
		for _, n := range requested {
			p.requestedSet[n] = true
		}
	}
}

// requestedScan is how many requested outputs Requested looks through one
// by one; a request that names more gets a set (a map per request costs
// two allocations, and most name one or two).
const requestedScan = 8

// Model returns the model the request was sent to.
func (p *Responder) Model() *Model { return p.model }

// FreesResponses reports whether the ResponseFunc frees the responses it is
// handed (Submission.FreesResponses): a backend layer may then lend
// its output buffers (Response.Lent) instead of copying them into Go
// memory.
func (p *Responder) FreesResponses() bool { return p.frees }

// SchedulerKey is the scheduler key of the request p answers
// (Request.SchedulerKey); nil for a responder of no request.
func (p *Responder) SchedulerKey() any {
	if p.req == nil {
		return nil
	}
	return p.req.SchedulerKey()
}

// Requested reports whether the client asked for the output name: it named
// it, or it named no output at all. Send drops the outputs it did not ask
// for; a backend layer that copies outputs can ask first and skip them.
func (p *Responder) Requested(name string) bool {
	switch {
	case p.requested == nil:
		return true
	case p.requestedSet != nil:
		return p.requestedSet[name]
	}
	return slices.Contains(p.requested, name)
}

// Send delivers a response produced by the backend, final if final is set.
// Outputs the client did not ask for are dropped, outputs with a reshape in
// the model configuration get their configured shape back, and an output the
// model does not declare, or one larger than MaxTensorBytes, turns the
// response into an error. A model that is not decoupled answers once, as
// Triton's: its first response is held until the final flag and delivered
// then; any further response is dropped (Send returns nil), counted in
// Model.DroppedResponses and, once the request is complete, logged at
// verbose level 1. After the final response, Send fails with CodeNotFound.
//
// Send takes resp whatever the outcome: a response it does not deliver
// (dropped, refused, or turned into an error) has its lent memory freed here.
func (p *Responder) Send(resp *Response, final bool) error {
	if p.passThrough {
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.done {
			resp.Free()
			return p.closedError()
		}
		p.deliverLocked(resp, final)
		return nil
	}
	var sendErr error
	if resp.Err == nil {
		sendErr = p.shapeOutputs(resp)
		if sendErr != nil {
			resp.Free()
			resp = &Response{Err: sendErr}
		}
	}

	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done {
		resp.Free()
		return p.closedError()
	}
	if !p.model.decoupled && p.held != nil {
		resp.Free()
		p.dropped++
		p.model.droppedResponses.Add(1)
		if final {
			held := p.held
			p.held = nil
			p.deliverLocked(held, true)
		}
		return nil
	}
	p.traceOutputs(resp)
	if !p.model.decoupled && !final {
		p.held = resp
		return sendErr
	}
	p.deliverLocked(resp, final)
	return sendErr
}

// CheckOutputSize refuses an output of size bytes that is larger than the
// request's bound (Submission.TensorLimit) or else the server's
// (Options.MaxTensorBytes). Send applies it; a backend layer that copies
// outputs can apply it first and copy nothing.
func (p *Responder) CheckOutputSize(name string, size int64) error {
	if size > p.maxTensor.bytes {
		return Errorf(CodeInternal, "model %q sent output %q of %s", p.model.name, name, p.maxTensor.tooLarge(size))
	}
	return nil
}

// MaxTensorBytes returns the largest output the request takes, in bytes
// (see CheckOutputSize).
func (p *Responder) MaxTensorBytes() int64 { return p.maxTensor.bytes }

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
			cfg := m.OutputConfig(out.Name)
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
	if !p.model.decoupled && !p.passThrough {
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
	p.held.Free()
	p.held = nil
	p.deliverLocked(p.errorResponse(err), true)
	return true
}

// close ends the request without a response: nothing more is delivered.
func (p *Responder) close() {
	p.mu.Lock()
	p.done = true
	p.held.Free()
	p.held = nil
	p.mu.Unlock()
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
	return p.addHook(cancelHook{f: f})
}

// OnCancelArg is OnCancel of f(arg): a hook that takes no closure, for a
// layer that registers one for every request.
func (p *Responder) OnCancelArg(f func(arg any), arg any) CancelHook {
	return p.addHook(cancelHook{fArg: f, arg: arg})
}

func (p *Responder) addHook(h cancelHook) CancelHook {
	p.hookMu.Lock()
	if p.cancelled.Load() {
		p.hookMu.Unlock()
		h.run()
		return CancelHook{}
	}
	if p.hooks == nil {
		p.hooks = p.hookBuf[:0]
	}
	p.nextHook++
	h.id = p.nextHook
	p.hooks = append(p.hooks, h)
	p.hookMu.Unlock()
	return CancelHook{p: p, id: h.id}
}

// cancelHook is f(), or fArg(arg) when f is nil.
type cancelHook struct {
	id   uint64
	f    func()
	fArg func(any)
	arg  any
}

func (h cancelHook) run() {
	if h.f != nil {
		h.f()
		return
	}
	h.fArg(h.arg)
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

// nextResponseIndex returns the 0-based index under which the next
// response statistics of this request are recorded, taking the lock of
// its shard of its model's statistics (statsRecorder.response takes it
// without this when it records for the request's own model, as it nearly
// always does).
func (p *Responder) nextResponseIndex() uint64 {
	sh := &p.model.stats.shards[p.statsShard]
	sh.mu.Lock()
	n := p.statsIndex
	p.statsIndex++
	sh.mu.Unlock()
	return n
}

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
		h.run()
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
		if p.dropped > 0 {
			p.model.log.Verbosef(1, "%smodel '%s' is not decoupled but sent %d responses; the first was delivered and the other %d dropped",
				requestPrefix(p.id), p.model.name, p.dropped+1, p.dropped)
		}
	}
	p.fn(resp, final)
	if final && p.req != nil {
		p.req.finalDelivered()
	}
}

func (p *Responder) errorResponse(err error) *Response { return &Response{Err: err} }

func (p *Responder) closedError() error {
	return Errorf(CodeNotFound, "request %q of model %q already received its final response", p.id, p.model.name)
}
