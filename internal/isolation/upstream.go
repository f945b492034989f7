package isolation

// A backend in a worker calls into the server as one in process would:
// its requests to other models (BLS, TRITONSERVER_ServerInferAsync), its
// model queries, loads and unloads, statistics and index. The worker's
// abi host sends them to the server (upstreamClient, an abi.Upstream),
// which answers them against its own core.Server (process.serveCall,
// process.serveSubmit): the worker's own server holds only the version it
// executes, and the server schedules every request, the worker's own
// model's included.
//
// A call is msgCall (id, op, the op's fields), answered by msgReply (id,
// error, the op's answer). A request is msgSubmit (id, model, version, the
// request with its inputs), answered by msgReply (accepted or the
// validation error), then msgUpResponse for each response and msgUpDone
// once the server is done with it; msgSubmitCancel cancels it. Request
// and call ids are the worker's; each side bounds what it holds.

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/tritonhost/tritonhost/abi"
	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/internal/wire"
)

// The calls of msgCall.
const (
	opModel          = 1 + iota // name, version -> name, version, ready, config, metadata
	opLoad                      // name, has config, config, files -> error
	opUnload                    // name, dependents -> error
	opStatistics                // name, version -> JSON
	opIndex                     // ready only -> JSON
	opServerMetadata            // -> JSON
	opMetricsText               // -> text
)

// maxLoadFiles bounds the files of one load call; the server bounds their
// bytes as for any load request.
const maxLoadFiles = core.MaxLoadParameters

// reply is a decoded msgReply.
type reply struct {
	err   error
	model *abi.UpstreamModel // opModel
	js    []byte             // opStatistics, opIndex
}

// upstreamClient is the worker's abi.Upstream: it sends its backend's
// calls and requests to the server and routes the answers back. Any
// goroutine may call it; the worker's reader delivers the answers
// (deliver).
type upstreamClient struct {
	w       *worker
	timeout time.Duration // the longest a call waits for its answer

	mu      sync.Mutex
	nextID  uint64
	waiting map[uint64]pendingCall  // calls and submissions awaiting msgReply
	reqs    map[uint64]*upstreamReq // accepted (or being accepted) requests
}

// pendingCall is a call awaiting its reply.
type pendingCall struct {
	op   byte // 0 for a submission
	done chan reply
}

// upstreamReq is a request of the backend's that the server holds.
type upstreamReq struct {
	fn       core.ResponseFunc
	finished func()
	stop     func() bool // stops its cancellation watch
	dropped  bool        // its submission timed out here: answers go nowhere
}

var _ abi.Upstream = (*upstreamClient)(nil)

func newUpstreamClient(w *worker, timeout time.Duration) *upstreamClient {
	if timeout <= 0 {
		timeout = time.Minute
	}
	return &upstreamClient{w: w, timeout: timeout, waiting: map[uint64]pendingCall{}, reqs: map[uint64]*upstreamReq{}}
}

// register reserves an id for a call of op.
func (u *upstreamClient) register(op byte) (uint64, chan reply) {
	done := make(chan reply, 1)
	u.mu.Lock()
	u.nextID++
	id := u.nextID
	u.waiting[id] = pendingCall{op: op, done: done}
	u.mu.Unlock()
	return id, done
}

// await waits for call id's reply, at most u.timeout; timedOut says the
// wait ran out (the server may still act on the call).
func (u *upstreamClient) await(id uint64, done chan reply, what string) (r reply, timedOut bool) {
	t := time.NewTimer(u.timeout)
	defer t.Stop()
	select {
	case r := <-done:
		return r, false
	case <-t.C:
		u.mu.Lock()
		delete(u.waiting, id)
		u.mu.Unlock()
		return reply{err: core.Errorf(core.CodeUnavailable, "%s: the server did not answer within %v (--backend-call-timeout)", what, u.timeout)}, true
	}
}

// call sends a call whose fields enc writes (and p's region) and waits for
// its reply.
func (u *upstreamClient) call(op byte, what string, total int, enc func(e *wire.Encoder, p *payload)) reply {
	id, done := u.register(op)
	p, err := newPayload(total)
	if err != nil {
		u.forget(id)
		return reply{err: core.Errorf(core.CodeInternal, "%s: %v", what, err)}
	}
	e := wire.NewEncoder(nil)
	header(e, msgCall, p)
	e.Uint(id)
	e.Uint(uint64(op))
	enc(e, p)
	u.w.send(e, p)
	r, _ := u.await(id, done, what)
	return r
}

func (u *upstreamClient) forget(id uint64) {
	u.mu.Lock()
	delete(u.waiting, id)
	u.mu.Unlock()
}

// Model describes a model version as the server has it.
func (u *upstreamClient) Model(name string, version int64) (*abi.UpstreamModel, error) {
	r := u.call(opModel, fmt.Sprintf("model %q", name), 0, func(e *wire.Encoder, _ *payload) {
		e.String(name)
		e.Int(version)
	})
	return r.model, r.err
}

// LoadModel loads a model in the server.
func (u *upstreamClient) LoadModel(name string, opts core.LoadOptions) error {
	total := len(opts.Config)
	for _, b := range opts.Files {
		total += len(b)
	}
	r := u.call(opLoad, fmt.Sprintf("load model %q", name), total, func(e *wire.Encoder, p *payload) {
		e.String(name)
		e.Bool(opts.Config != nil)
		p.put(e, opts.Config)
		e.Uint(uint64(len(opts.Files)))
		for path, b := range opts.Files {
			e.String(path)
			p.put(e, b)
		}
	})
	return r.err
}

// UnloadModel starts a model's unload in the server.
func (u *upstreamClient) UnloadModel(name string, dependents bool) error {
	r := u.call(opUnload, fmt.Sprintf("unload model %q", name), 0, func(e *wire.Encoder, _ *payload) {
		e.String(name)
		e.Bool(dependents)
	})
	return r.err
}

// Statistics returns the server's statistics JSON.
func (u *upstreamClient) Statistics(name string, version int64) ([]byte, error) {
	r := u.call(opStatistics, "model statistics", 0, func(e *wire.Encoder, _ *payload) {
		e.String(name)
		e.Int(version)
	})
	return r.js, r.err
}

// Index returns the server's model index JSON.
func (u *upstreamClient) Index(readyOnly bool) ([]byte, error) {
	r := u.call(opIndex, "model index", 0, func(e *wire.Encoder, _ *payload) { e.Bool(readyOnly) })
	return r.js, r.err
}

// ServerMetadata returns the server's metadata JSON.
func (u *upstreamClient) ServerMetadata() ([]byte, error) {
	r := u.call(opServerMetadata, "server metadata", 0, func(*wire.Encoder, *payload) {})
	return r.js, r.err
}

// MetricsText returns the server's metrics in Prometheus' text format.
func (u *upstreamClient) MetricsText() ([]byte, error) {
	r := u.call(opMetricsText, "server metrics", 0, func(*wire.Encoder, *payload) {})
	return r.js, r.err
}

// Submit sends a request to the server and waits until it accepted it.
func (u *upstreamClient) Submit(ctx context.Context, m *abi.UpstreamModel, req *core.Submission, fn core.ResponseFunc) error {
	what := fmt.Sprintf("request %q to model %q", req.ID, m.Name)
	id, done := u.register(0)
	q := &upstreamReq{fn: fn, finished: req.Finished}
	u.mu.Lock()
	u.reqs[id] = q
	u.mu.Unlock()
	e := wire.NewEncoder(nil)
	p, err := encodeSubmit(e, id, m.Name, m.Version, req)
	if err != nil {
		u.mu.Lock()
		delete(u.waiting, id)
		delete(u.reqs, id)
		u.mu.Unlock()
		return core.Errorf(core.CodeInternal, "%s: %v", what, err)
	}
	u.w.send(e, p)
	r, timedOut := u.await(id, done, what)
	u.mu.Lock()
	defer u.mu.Unlock()
	if r.err != nil {
		if u.reqs[id] == q {
			if timedOut {
				q.dropped = true // the server may still take it: its answers are dropped
				go u.sendCancel(id)
			} else {
				delete(u.reqs, id)
			}
		}
		return r.err
	}
	if u.reqs[id] == q { // not done already
		q.stop = context.AfterFunc(ctx, func() { u.sendCancel(id) })
	}
	return nil
}

func (u *upstreamClient) sendCancel(id uint64) {
	e := wire.NewEncoder(nil)
	encodeKey(e, msgSubmitCancel, id, 0)
	u.w.send(e, nil)
}

// deliver handles one answer from the server; it runs on the worker's
// reader. src holds the tensor bytes (valid until it returns).
func (u *upstreamClient) deliver(kind byte, d *wire.Decoder, src *source) error {
	switch kind {
	case msgReply:
		id := d.Uint()
		u.mu.Lock()
		pc, ok := u.waiting[id]
		delete(u.waiting, id)
		u.mu.Unlock()
		r := reply{err: decodeError(d)}
		if r.err == nil {
			switch pc.op {
			case opModel:
				m := &abi.UpstreamModel{Name: d.String(maxName), Version: d.Int(), Ready: d.Bool()}
				m.ConfigJSON = append([]byte(nil), src.get(d)...)
				m.MetadataJSON = append([]byte(nil), src.get(d)...)
				r.model = m
			case opStatistics, opIndex, opServerMetadata, opMetricsText:
				r.js = append([]byte(nil), src.get(d)...)
			}
		}
		if err := d.Done(); err != nil {
			return err
		}
		if ok {
			pc.done <- r
		} else if r.err != nil {
			// The refusal of a submission that timed out here: the
			// server holds nothing of it.
			u.mu.Lock()
			if q := u.reqs[id]; q != nil && q.dropped {
				delete(u.reqs, id)
			}
			u.mu.Unlock()
		}
	case msgUpResponse:
		id, dr, final := decodeResponse(d, src, nil, nil)
		if err := d.Done(); err != nil {
			return err
		}
		u.mu.Lock()
		q := u.reqs[id]
		u.mu.Unlock()
		if q == nil || q.dropped {
			return nil
		}
		var resp *core.Response
		if dr != nil {
			copyOutputs(dr)
			resp = &dr.Response
		}
		q.fn(resp, final)
	case msgUpDone:
		id := d.Uint()
		d.Uint()
		if err := d.Done(); err != nil {
			return err
		}
		u.mu.Lock()
		q := u.reqs[id]
		delete(u.reqs, id)
		u.mu.Unlock()
		if q == nil {
			return nil
		}
		if q.stop != nil {
			q.stop()
		}
		if !q.dropped && q.finished != nil {
			q.finished()
		}
	}
	return nil
}

// encodeSubmit encodes request req of the backend's to version of model.
func encodeSubmit(e *wire.Encoder, id uint64, model string, version int64, req *core.Submission) (*payload, error) {
	total := 0
	for _, in := range req.Inputs {
		for _, b := range in.Buffers {
			total += len(b)
		}
	}
	p, err := newPayload(total)
	if err != nil {
		return nil, err
	}
	header(e, msgSubmit, p)
	e.Uint(id)
	e.String(model)
	e.Int(version)
	e.String(req.ID)
	e.Bool(req.CorrelationID.IsString)
	e.Uint(req.CorrelationID.Uint)
	e.String(req.CorrelationID.String)
	e.Uint(uint64(req.Flags))
	e.Uint(req.Priority)
	e.Int(int64(req.Timeout))
	e.Uint(uint64(len(req.Outputs)))
	for _, o := range req.Outputs {
		e.String(o)
	}
	encodeParams(e, req.Parameters)
	e.Uint(uint64(len(req.Inputs)))
	for _, in := range req.Inputs {
		e.String(in.Name)
		e.Uint(uint64(in.DataType))
		encodeShape(e, in.Shape)
		p.put(e, in.Buffers...)
	}
	return p, nil
}

// decodeSubmit reads a msgSubmit; the inputs' bytes alias src.
func decodeSubmit(d *wire.Decoder, src *source) (id uint64, model string, version int64, sub *core.Submission) {
	id = d.Uint()
	model = d.String(maxName)
	version = d.Int()
	sub = &core.Submission{Model: model, Version: version}
	sub.ID = d.String(maxName)
	sub.CorrelationID.IsString = d.Bool()
	sub.CorrelationID.Uint = d.Uint()
	sub.CorrelationID.String = d.String(maxName)
	sub.Flags = uint32(d.Uint())
	sub.Priority = d.Uint()
	sub.Timeout = durationOf(d.Int())
	for range d.Count(maxTensors) {
		sub.Outputs = append(sub.Outputs, d.String(maxName))
	}
	sub.Parameters = decodeParams(d)
	sub.Inputs = make([]core.Input, d.Count(maxTensors))
	for j := range sub.Inputs {
		in := &sub.Inputs[j]
		in.Name = d.String(maxName)
		in.DataType = core.DataType(d.Uint())
		in.Shape = decodeShape(d)
		in.Buffers = [][]byte{src.get(d)}
	}
	return id, model, version, sub
}
