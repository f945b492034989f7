package loadgen

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tritonhost/tritonhost/client"
	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
)

// Mode says how requests travel.
type Mode int

const (
	// Unary sends each request with ModelInfer and waits for its response.
	Unary Mode = iota
	// Stream sends requests on ModelStreamInfer streams and counts every
	// response of each, up to its final (decoupled models).
	Stream
	// HTTP sends each request to Triton's HTTP/REST infer route, with its
	// tensors in the binary tensor extension, and waits for its response.
	HTTP
)

func (m Mode) String() string {
	switch m {
	case Stream:
		return "stream"
	case HTTP:
		return "http"
	}
	return "unary"
}

// DefaultMaxOutstanding bounds the requests in flight in rate mode.
const DefaultMaxOutstanding = 1024

// Config is a load, and for Run one measurement of it.
type Config struct {
	// Client carries Unary and Stream requests; HTTP, HTTP ones (it should
	// keep a connection per request in flight, client.NewHTTP).
	Client pb.GRPCInferenceServiceClient
	HTTP   *client.HTTP
	// Request is sent over and over; its id is replaced per request. In
	// Stream mode the parameter triton_enable_empty_final_response is set,
	// so that every request ends with a marked final.
	Request *pb.ModelInferRequest
	Mode    Mode
	// Concurrency is how many requests are kept in flight (each worker
	// sends its next request when the previous one completed); in Stream
	// mode each worker has its own stream. Ignored when Rate is set.
	Concurrency int
	// Rate, when positive, starts requests at this many per second
	// instead, whatever the server's pace, with at most MaxOutstanding in
	// flight (DefaultMaxOutstanding when 0).
	Rate           float64
	MaxOutstanding int
	// Warmup runs before the window, uncounted; Window is what is measured
	// (Run only: Start leaves both to the caller's Measure calls).
	Warmup, Window time.Duration
	// Progress, when set, is called about every second with the counts so
	// far (from the start of the load).
	Progress func(Progress)

	httpReq *client.BinaryInfer // Request encoded for HTTP mode (by Start)
}

// Progress is a load's state while it runs.
type Progress struct {
	Elapsed             time.Duration
	Requests, Responses int64
	Errors              int64
	// Windows is how many windows Measure has taken so far.
	Windows int64
}

// Result is what a measurement found.
type Result struct {
	Mode        Mode
	Concurrency int     // 0 in rate mode
	Rate        float64 // the rate asked for; 0 in concurrency mode
	Window      time.Duration
	// Requests completed in the window, their responses (one each for
	// Unary; every response, final included when it carries outputs, for
	// Stream), failed requests, and requests of rate mode that started
	// late because MaxOutstanding were in flight.
	Requests, Responses, Errors, Delayed int64
	// Latency is from sending a request to its last response;
	// FirstResponse (Stream) to its first response.
	Latency, FirstResponse Percentiles
	// FirstError is the first failure's message, if any.
	FirstError string

	// The histograms behind Latency and FirstResponse, for Merge and
	// LatencyAt; nil in a zero Result.
	latency, first *Histogram
}

// Throughput returns completed requests per second.
func (r Result) Throughput() float64 { return float64(r.Requests) / r.Window.Seconds() }

// ResponseRate returns responses per second.
func (r Result) ResponseRate() float64 { return float64(r.Responses) / r.Window.Seconds() }

// LatencyAt returns the latency below which the fraction p (0 to 1) of the
// window's successful requests completed.
func (r Result) LatencyAt(p float64) time.Duration {
	if r.latency == nil {
		return 0
	}
	return r.latency.Percentile(p)
}

// Merge returns consecutive windows of one load as one measurement: their
// counts and durations added, their latencies together. Mode, Concurrency
// and Rate are the first window's.
func Merge(windows []Result) Result {
	if len(windows) == 0 {
		return Result{}
	}
	m := Result{Mode: windows[0].Mode, Concurrency: windows[0].Concurrency, Rate: windows[0].Rate,
		latency: new(Histogram), first: new(Histogram)}
	for _, w := range windows {
		m.Window += w.Window
		m.Requests += w.Requests
		m.Responses += w.Responses
		m.Errors += w.Errors
		m.Delayed += w.Delayed
		if m.FirstError == "" {
			m.FirstError = w.FirstError
		}
		if w.latency != nil {
			m.latency.Merge(w.latency)
			m.first.Merge(w.first)
		}
	}
	m.Latency, m.FirstResponse = m.latency.Summary(), m.first.Summary()
	return m
}

// tally is what one recorder counted since its last cut.
type tally struct {
	latency, first            Histogram
	requests, responses, errs int64
	firstErr                  string
}

func (t *tally) add(o outcome) {
	t.requests++
	t.responses += o.responses
	if o.err != nil {
		t.errs++
		if t.firstErr == "" {
			t.firstErr = o.err.Error()
		}
		return
	}
	t.latency.Record(o.done.Sub(o.sent))
	if !o.first.IsZero() {
		t.first.Record(o.first.Sub(o.sent))
	}
}

// merge adds o's counts to t.
func (t *tally) merge(o *tally) {
	t.latency.Merge(&o.latency)
	t.first.Merge(&o.first)
	t.requests += o.requests
	t.responses += o.responses
	t.errs += o.errs
	if t.firstErr == "" {
		t.firstErr = o.firstErr
	}
}

// recorder collects the outcomes of one worker (or of rate mode) until
// Measure cuts them off: an outcome counts in the window in which it is
// recorded, which is when its request completed, give or take the lock.
type recorder struct {
	mu  sync.Mutex
	cur tally
}

func (r *recorder) add(o outcome, total *Progress) {
	atomic.AddInt64(&total.Requests, 1)
	atomic.AddInt64(&total.Responses, o.responses)
	if o.err != nil {
		atomic.AddInt64(&total.Errors, 1)
	}
	r.mu.Lock()
	r.cur.add(o)
	r.mu.Unlock()
}

// cut adds what r counted to into, and starts r afresh.
func (r *recorder) cut(into *tally) {
	r.mu.Lock()
	into.merge(&r.cur)
	r.cur = tally{}
	r.mu.Unlock()
}

// outcome is one request's end.
type outcome struct {
	sent, first, done time.Time
	responses         int64
	err               error
}

// Load is a load running against a server: Start starts it, each Measure
// takes the next window of it, Stop ends it. Windows follow one another
// with no gap, so a load measured window after window (as perf_analyzer
// measures until its windows agree) never pauses. Measure and Stop are for
// one goroutine.
type Load struct {
	ctx      context.Context
	cfg      Config
	start    time.Time
	lastCut  time.Time
	stopSend context.CancelFunc
	done     chan struct{} // closed when the senders have returned
	err      error         // theirs, once done is closed
	recs     []recorder
	delayed  atomic.Int64 // rate mode, since the last cut
	total    Progress     // updated atomically
	progress chan struct{}
	stopped  bool
}

// Start checks cfg and starts its load; the first window begins now.
func Start(ctx context.Context, cfg Config) (*Load, error) {
	if cfg.Request == nil {
		return nil, errors.New("loadgen: a request is required")
	}
	if cfg.MaxOutstanding <= 0 {
		cfg.MaxOutstanding = DefaultMaxOutstanding
	}
	if cfg.Mode == HTTP {
		if cfg.HTTP == nil {
			return nil, errors.New("loadgen: HTTP mode needs an HTTP client")
		}
		var err error
		if cfg.httpReq, err = client.EncodeBinaryInfer(cfg.Request); err != nil {
			return nil, fmt.Errorf("loadgen: %w", err)
		}
	} else if cfg.Client == nil {
		return nil, errors.New("loadgen: a gRPC client is required")
	}
	if cfg.Rate <= 0 && cfg.Concurrency <= 0 {
		return nil, errors.New("loadgen: give a concurrency or a rate")
	}
	sendCtx, stop := context.WithCancel(ctx)
	l := &Load{ctx: ctx, cfg: cfg, start: time.Now(), stopSend: stop, done: make(chan struct{})}
	l.lastCut = l.start
	if cfg.Rate > 0 {
		l.recs = make([]recorder, 1)
	} else {
		l.recs = make([]recorder, cfg.Concurrency) // one each: no lock shared per request
	}
	l.progress = l.reportProgress(sendCtx)
	go func() {
		defer close(l.done)
		if cfg.Rate > 0 {
			l.err = runRate(sendCtx, ctx, cfg, &l.recs[0], &l.total, &l.delayed)
		} else {
			l.err = runConcurrency(sendCtx, ctx, cfg, l.recs, &l.total)
		}
	}()
	return l, nil
}

// Measure waits until d after the previous window's end (or the start),
// then returns what completed since: one window. It fails early if the
// senders stopped: with their error, or the context's when it ended.
func (l *Load) Measure(d time.Duration) (Result, error) {
	if d <= 0 {
		return Result{}, errors.New("loadgen: the window must be positive")
	}
	if l.stopped {
		return Result{}, errors.New("loadgen: the load was stopped")
	}
	timer := time.NewTimer(time.Until(l.lastCut.Add(d)))
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-l.done:
		switch {
		case l.err != nil:
			return Result{}, l.err
		case l.ctx.Err() != nil:
			return Result{}, l.ctx.Err()
		}
		return Result{}, errors.New("loadgen: the load stopped before the window ended")
	}
	now := time.Now()
	var t tally
	for i := range l.recs {
		l.recs[i].cut(&t)
	}
	res := Result{Mode: l.cfg.Mode, Rate: l.cfg.Rate, Window: now.Sub(l.lastCut), Requests: t.requests,
		Responses: t.responses, Errors: t.errs, Delayed: l.delayed.Swap(0), FirstError: t.firstErr,
		Latency: t.latency.Summary(), FirstResponse: t.first.Summary(), latency: &t.latency, first: &t.first}
	if l.cfg.Rate <= 0 {
		res.Concurrency = l.cfg.Concurrency
	}
	l.lastCut = now
	atomic.AddInt64(&l.total.Windows, 1)
	return res, nil
}

// Stop stops sending, waits for the requests in flight to complete (or
// the context to end), and returns the senders' error, if any.
func (l *Load) Stop() error {
	if !l.stopped {
		l.stopped = true
		l.stopSend()
		<-l.done
		<-l.progress
	}
	return l.err
}

// Run performs one measurement: warm-up, then the window. It returns when
// the window has passed and the requests in flight have completed (or ctx
// ended).
func Run(ctx context.Context, cfg Config) (Result, error) {
	if cfg.Window <= 0 {
		return Result{}, errors.New("loadgen: the window must be positive")
	}
	l, err := Start(ctx, cfg)
	if err != nil {
		return Result{}, err
	}
	var res Result
	if cfg.Warmup > 0 {
		_, err = l.Measure(cfg.Warmup)
	}
	if err == nil {
		res, err = l.Measure(cfg.Window)
	}
	if stopErr := l.Stop(); err == nil {
		err = stopErr
	}
	if err == nil && ctx.Err() != nil {
		err = ctx.Err()
	}
	return res, err
}

// reportProgress calls cfg.Progress about every second until ctx ends; the
// channel it returns is closed once it has stopped.
func (l *Load) reportProgress(ctx context.Context) chan struct{} {
	done := make(chan struct{})
	fn := l.cfg.Progress
	if fn == nil {
		close(done)
		return done
	}
	go func() {
		defer close(done)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				fn(Progress{Elapsed: time.Since(l.start), Requests: atomic.LoadInt64(&l.total.Requests),
					Responses: atomic.LoadInt64(&l.total.Responses), Errors: atomic.LoadInt64(&l.total.Errors),
					Windows: atomic.LoadInt64(&l.total.Windows)})
			}
		}
	}()
	return done
}

// runConcurrency keeps cfg.Concurrency requests in flight until sendCtx
// ends, worker w recording into recs[w]; requests already sent finish under
// callCtx.
func runConcurrency(sendCtx, callCtx context.Context, cfg Config, recs []recorder, total *Progress) error {
	var wg sync.WaitGroup
	errs := make(chan error, cfg.Concurrency)
	for w := range cfg.Concurrency {
		rec := &recs[w]
		wg.Go(func() {
			send, err := newSender(callCtx, cfg, w)
			if err != nil {
				errs <- err
				return
			}
			defer send.close()
			for n := 0; sendCtx.Err() == nil; n++ {
				o := send.call(fmt.Sprintf("%d-%d", w, n))
				rec.add(o, total)
				if errors.Is(o.err, errBroken) {
					errs <- o.err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	return <-errs
}
