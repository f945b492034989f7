package loadgen

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/tritonhost/tritonhost/client"
	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
)

// rateStreams is how many streams carry the requests of rate mode.
const rateStreams = 16

// runRate starts requests at cfg.Rate per second until sendCtx ends, with
// at most cfg.MaxOutstanding in flight; a request that cannot start on
// time starts as soon as one completes, and counts in *delayed. Requests
// already sent finish under callCtx.
func runRate(sendCtx, callCtx context.Context, cfg Config, rec *recorder, total *Progress, delayed *atomic.Int64) error {
	slots := make(chan struct{}, cfg.MaxOutstanding)
	var start func(id string, done func(outcome)) error
	var wait func()
	switch cfg.Mode {
	case Unary:
		var wg sync.WaitGroup
		start = func(id string, done func(outcome)) error {
			req := proto.Clone(cfg.Request).(*pb.ModelInferRequest)
			wg.Go(func() {
				u := unarySender{ctx: callCtx, c: cfg.Client, req: req}
				done(u.call(id))
			})
			return nil
		}
		wait = wg.Wait
	case HTTP:
		var wg sync.WaitGroup
		start = func(id string, done func(outcome)) error {
			wg.Go(func() {
				h := httpSender{ctx: callCtx, client: cfg.HTTP, req: cfg.httpReq}
				done(h.call(id))
			})
			return nil
		}
		wait = wg.Wait
	default:
		pool, err := newStreamPool(callCtx, cfg)
		if err != nil {
			return err
		}
		start, wait = pool.start, pool.close
	}
	interval := time.Duration(float64(time.Second) / cfg.Rate)
	next := time.Now()
	var err error
	for n := 0; ; n++ {
		if d := time.Until(next); d > 0 {
			select {
			case <-sendCtx.Done():
			case <-time.After(d):
			}
		}
		if sendCtx.Err() != nil {
			break
		}
		select {
		case slots <- struct{}{}:
		default:
			delayed.Add(1)
			select {
			case slots <- struct{}{}:
			case <-sendCtx.Done():
			}
		}
		if sendCtx.Err() != nil {
			break
		}
		next = next.Add(interval)
		if err = start(fmt.Sprint(n), func(o outcome) { rec.add(o, total); <-slots }); err != nil {
			<-slots
			break
		}
	}
	wait()
	return err
}

// streamPool spreads the requests of rate mode over a few streams, each
// with one reader that matches responses to requests by id.
type streamPool struct {
	streams []*pooledStream
	next    int
	req     *pb.ModelInferRequest
}

type pooledStream struct {
	st      grpc.BidiStreamingClient[pb.ModelInferRequest, pb.ModelStreamInferResponse]
	cancel  context.CancelFunc
	sendMu  sync.Mutex
	mu      sync.Mutex
	pending map[string]*inflight
	read    chan struct{} // closed when the reader ends
}

type inflight struct {
	o    outcome
	done func(outcome)
}

func newStreamPool(ctx context.Context, cfg Config) (*streamPool, error) {
	p := &streamPool{req: streamRequest(cfg.Request)}
	for i := range rateStreams {
		sctx, cancel := context.WithCancel(ctx)
		st, err := cfg.Client.ModelStreamInfer(sctx)
		if err != nil {
			cancel()
			p.close()
			return nil, fmt.Errorf("open stream %d: %w", i, err)
		}
		ps := &pooledStream{st: st, cancel: cancel, pending: map[string]*inflight{}, read: make(chan struct{})}
		go ps.readLoop()
		p.streams = append(p.streams, ps)
	}
	return p, nil
}

// start sends one request on the next stream; done is called with its
// outcome, from the stream's reader.
func (p *streamPool) start(id string, done func(outcome)) error {
	ps := p.streams[p.next%len(p.streams)]
	p.next++
	req := proto.Clone(p.req).(*pb.ModelInferRequest)
	req.Id = id
	f := &inflight{o: outcome{sent: time.Now()}, done: done}
	ps.mu.Lock()
	ps.pending[id] = f
	ps.mu.Unlock()
	ps.sendMu.Lock()
	err := ps.st.Send(req)
	ps.sendMu.Unlock()
	if err != nil {
		ps.finish(id, fmt.Errorf("%w: send: %v", errBroken, err))
		return err
	}
	return nil
}

func (ps *pooledStream) finish(id string, err error) {
	ps.mu.Lock()
	f := ps.pending[id]
	delete(ps.pending, id)
	ps.mu.Unlock()
	if f != nil {
		f.o.done, f.o.err = time.Now(), err
		f.done(f.o)
	}
}

func (ps *pooledStream) readLoop() {
	defer close(ps.read)
	for {
		msg, err := ps.st.Recv()
		now := time.Now()
		if err != nil {
			ps.mu.Lock()
			ids := make([]string, 0, len(ps.pending))
			for id := range ps.pending {
				ids = append(ids, id)
			}
			ps.mu.Unlock()
			for _, id := range ids {
				ps.finish(id, fmt.Errorf("%w: %v", errBroken, err))
			}
			return
		}
		resp := msg.GetInferResponse()
		ps.mu.Lock()
		f := ps.pending[resp.GetId()]
		ps.mu.Unlock()
		if f == nil {
			continue
		}
		if f.o.first.IsZero() {
			f.o.first = now
		}
		if len(resp.GetOutputs()) > 0 {
			f.o.responses++
		}
		switch {
		case msg.GetErrorMessage() != "":
			ps.finish(resp.GetId(), errors.New(msg.GetErrorMessage()))
		case client.IsFinal(resp):
			ps.finish(resp.GetId(), nil)
		}
	}
}

// close waits for every request in flight, then ends the streams.
func (p *streamPool) close() {
	for _, ps := range p.streams {
		_ = ps.st.CloseSend()
	}
	for _, ps := range p.streams {
		<-ps.read
		ps.cancel()
	}
}
