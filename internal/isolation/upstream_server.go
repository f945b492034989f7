package isolation

import (
	"bytes"
	"context"

	"github.com/tritonhost/tritonhost/abi"
	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/internal/wire"
)

// DefaultMaxUpstreamRequests is Options.MaxUpstreamRequests unless told
// otherwise.
const DefaultMaxUpstreamRequests = 1024

// servedReq is a request of a worker's backend that the server runs.
type servedReq struct {
	cancel context.CancelFunc
	region *wire.Shared // its inputs' region, unmapped once it finished; or nil
}

// admitUpstream takes one of the worker's slots for calls and requests,
// or says why there is none.
func (pr *process) admitUpstream() error {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if pr.dead {
		return pr.deathErr
	}
	if limit := pr.model.p.opts.MaxUpstreamRequests; pr.upstreamCount >= limit {
		m := pr.model.m
		return core.Errorf(core.CodeUnavailable, "model '%s' version %d: its backend has %d requests and calls to the server in flight, "+
			"the most --backend-worker-max-requests allows", m.Name(), m.Version(), limit)
	}
	pr.upstreamCount++
	return nil
}

func (pr *process) leaveUpstream() {
	pr.mu.Lock()
	pr.upstreamCount--
	pr.mu.Unlock()
}

// serveCall answers a msgCall on a goroutine of its own (a load takes
// as long as the model's initialization); the message's bytes are copied
// first.
func (pr *process) serveCall(d *wire.Decoder, src *source) error {
	id := d.Uint()
	op := byte(d.Uint())
	var name string
	var version int64
	var flag bool
	var opts core.LoadOptions
	switch op {
	case opModel, opStatistics:
		name = d.String(maxName)
		version = d.Int()
	case opLoad:
		name = d.String(maxName)
		hasConfig := d.Bool()
		cfg := src.get(d)
		if hasConfig {
			opts.Config = append([]byte(nil), cfg...)
		}
		if n := d.Count(maxLoadFiles); n > 0 {
			opts.Files = make(map[string][]byte, n)
			for range n {
				path := d.String(maxName)
				opts.Files[path] = append([]byte(nil), src.get(d)...)
			}
		}
	case opUnload:
		name = d.String(maxName)
		flag = d.Bool()
	case opIndex:
		flag = d.Bool()
	case opServerMetadata, opMetricsText:
	default:
		d.Fail("call %d", op)
	}
	if err := d.Done(); err != nil {
		return err
	}
	if err := pr.admitUpstream(); err != nil {
		pr.sendReply(id, op, err, nil, nil)
		return nil
	}
	go func() {
		srv := pr.model.p.server.Load()
		if srv == nil {
			pr.leaveUpstream()
			pr.sendReply(id, op, core.Errorf(core.CodeUnavailable, "Server not ready"), nil, nil)
			return
		}
		var err error
		var m *abi.UpstreamModel
		var js []byte
		switch op {
		case opModel:
			m, err = abi.DescribeModel(srv, name, version)
		case opLoad:
			err = srv.LoadModelWith(name, opts)
		case opUnload:
			err = srv.StartUnload(context.Background(), name, flag)
		case opStatistics:
			js, err = abi.StatisticsJSON(srv, name, version)
		case opIndex:
			js, err = abi.IndexJSON(srv, flag)
		case opServerMetadata:
			js, err = abi.ServerMetadataJSON(pr.model.p.serverInfo())
		case opMetricsText:
			var buf bytes.Buffer
			err = abi.MetricsText(pr.model.p.serverInfo(), &buf)
			js = buf.Bytes()
		}
		pr.leaveUpstream() // before the answer: the worker's next call may follow it at once
		pr.sendReply(id, op, err, m, js)
	}()
	return nil
}

// sendReply answers call id.
func (pr *process) sendReply(id uint64, op byte, err error, m *abi.UpstreamModel, js []byte) {
	total := len(js)
	if m != nil {
		total = len(m.ConfigJSON) + len(m.MetadataJSON)
	}
	p, perr := newPayload(total)
	if perr != nil {
		err, m, js = core.Errorf(core.CodeInternal, "answer the worker: %v", perr), nil, nil
		p = &payload{}
	}
	e := wire.NewEncoder(nil)
	header(e, msgReply, p)
	e.Uint(id)
	encodeError(e, err)
	if err == nil {
		switch op {
		case opModel:
			e.String(m.Name)
			e.Int(m.Version)
			e.Bool(m.Ready)
			p.put(e, m.ConfigJSON)
			p.put(e, m.MetadataJSON)
		case opStatistics, opIndex, opServerMetadata, opMetricsText:
			p.put(e, js)
		}
	}
	pr.sendToWorker(e, p)
}

// sendToWorker sends a message and p's region; a worker that is gone
// misses it (its death is handled by the reader).
func (pr *process) sendToWorker(e *wire.Encoder, p *payload) {
	var fds []int
	if p != nil {
		var err error
		if fds, err = p.files(); err != nil {
			pr.model.p.opts.Logger.Errorf("model %q: to its worker: %v", pr.model.m.Name(), err)
		}
		defer p.close()
	}
	_ = pr.conn.Send(e.Bytes(), fds...)
}

// serveSubmit submits a request of the worker's backend to the server,
// on the reader (so that a cancellation read after it finds it), and
// answers whether the server accepted it. region, if not nil, holds the
// inputs: the request owns it from here.
func (pr *process) serveSubmit(d *wire.Decoder, src *source, region *wire.Shared) error {
	id, model, version, sub := decodeSubmit(d, src)
	if err := d.Done(); err != nil {
		if region != nil {
			_ = region.Close()
		}
		return err
	}
	if region == nil {
		// Inline inputs alias the receive buffer, which the next message
		// overwrites.
		for i := range sub.Inputs {
			in := &sub.Inputs[i]
			in.Buffers[0] = append([]byte(nil), in.Buffers[0]...)
		}
	}
	fail := func(err error) error {
		if region != nil {
			_ = region.Close()
		}
		pr.sendReply(id, 0, err, nil, nil)
		return nil
	}
	if err := pr.admitUpstream(); err != nil {
		return fail(err)
	}
	srv := pr.model.p.server.Load()
	if srv == nil {
		pr.leaveUpstream()
		return fail(core.Errorf(core.CodeUnavailable, "Server not ready"))
	}
	m, err := srv.Model(model, version)
	if err != nil {
		pr.leaveUpstream()
		return fail(err)
	}
	sub.TensorLimit = core.TensorLimit{Bytes: pr.model.p.opts.InProcessMaxTensorBytes, Setting: abi.InProcessMaxTensorSetting}
	ctx, cancel := context.WithCancel(context.Background())
	sr := &servedReq{cancel: cancel, region: region}
	pr.mu.Lock()
	pr.served[id] = sr
	pr.mu.Unlock()
	sub.Finished = func() { pr.servedDone(id, sr) }
	respond := func(resp *core.Response, final bool) {
		e := wire.NewEncoder(nil)
		p, _, err := encodeResponseAs(e, msgUpResponse, id, resp, final, nil)
		if err != nil {
			p, _, _ = encodeResponseAs(e, msgUpResponse, id, &core.Response{Err: core.Errorf(core.CodeInternal, "to the worker: %v", err)}, final, nil)
		}
		pr.sendToWorker(e, p)
	}
	if err := srv.Submit(ctx, m, sub, respond); err != nil {
		pr.mu.Lock()
		delete(pr.served, id)
		pr.mu.Unlock()
		cancel()
		pr.leaveUpstream()
		return fail(err)
	}
	pr.sendReply(id, 0, nil, nil, nil)
	return nil
}

// servedDone ends request id of the worker's once the server is done with
// it: its inputs' region is unmapped and the worker told.
func (pr *process) servedDone(id uint64, sr *servedReq) {
	pr.mu.Lock()
	if pr.served[id] == sr {
		delete(pr.served, id)
	}
	pr.mu.Unlock()
	sr.cancel()
	if sr.region != nil {
		_ = sr.region.Close()
	}
	pr.leaveUpstream()
	e := wire.NewEncoder(nil)
	encodeKey(e, msgUpDone, id, 0)
	pr.sendToWorker(e, nil)
}

// cancelServed cancels request id of the worker's, as its client.
func (pr *process) cancelServed(id uint64) {
	pr.mu.Lock()
	sr := pr.served[id]
	pr.mu.Unlock()
	if sr != nil {
		sr.cancel()
	}
}

// cancelAllServed cancels every request of a dead worker's: nobody waits
// for their answers.
func (pr *process) cancelAllServed() {
	pr.mu.Lock()
	var cancels []context.CancelFunc
	for _, sr := range pr.served {
		cancels = append(cancels, sr.cancel)
	}
	pr.mu.Unlock()
	for _, c := range cancels {
		c()
	}
}
