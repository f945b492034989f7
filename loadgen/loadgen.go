package loadgen

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	pb "tritonhost/frontend/inferencepb"
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

// Config is one measurement.
type Config struct {
	// Client carries Unary and Stream requests; HTTP, HTTP ones.
	Client pb.GRPCInferenceServiceClient
	HTTP   *HTTPTarget
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
	// Warmup runs before the window, uncounted; Window is what is measured.
	Warmup, Window time.Duration
	// Progress, when set, is called about every second with the counts so
	// far (from the start of the warm-up).
	Progress func(Progress)

	httpReq *httpRequest // Request encoded for HTTP mode (by Run)
}

// connections is how many requests may be in flight at once.
func (cfg Config) connections() int {
	if cfg.Rate > 0 {
		return cfg.MaxOutstanding
	}
	return cfg.Concurrency
}

// Progress is a run's state while it runs.
type Progress struct {
	Elapsed             time.Duration
	Requests, Responses int64
	Errors              int64
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
}

// Throughput returns completed requests per second.
func (r Result) Throughput() float64 { return float64(r.Requests) / r.Window.Seconds() }

// ResponseRate returns responses per second.
func (r Result) ResponseRate() float64 { return float64(r.Responses) / r.Window.Seconds() }

// recorder collects one worker's measurements.
type recorder struct {
	mu                        sync.Mutex
	latency, first            Histogram
	requests, responses, errs int64
	firstErr                  string
}

// clock says whether an instant is in the window.
type clock struct {
	from, to time.Time
}

func (c clock) counts(t time.Time) bool { return !t.Before(c.from) && t.Before(c.to) }

// outcome is one request's end.
type outcome struct {
	sent, first, done time.Time
	responses         int64
	err               error
}

// merge adds o's counts to r.
func (r *recorder) merge(o *recorder) {
	r.latency.Merge(&o.latency)
	r.first.Merge(&o.first)
	r.requests += o.requests
	r.responses += o.responses
	r.errs += o.errs
	if r.firstErr == "" {
		r.firstErr = o.firstErr
	}
}

func (r *recorder) add(c clock, o outcome, total *Progress) {
	atomic.AddInt64(&total.Requests, 1)
	atomic.AddInt64(&total.Responses, o.responses)
	if o.err != nil {
		atomic.AddInt64(&total.Errors, 1)
	}
	if !c.counts(o.done) {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.requests++
	r.responses += o.responses
	if o.err != nil {
		r.errs++
		if r.firstErr == "" {
			r.firstErr = o.err.Error()
		}
		return
	}
	r.latency.Record(o.done.Sub(o.sent))
	if !o.first.IsZero() {
		r.first.Record(o.first.Sub(o.sent))
	}
}

// Run performs one measurement: warm-up, then the window. It returns when
// the window has passed and the requests in flight have completed (or ctx
// ended).
func Run(ctx context.Context, cfg Config) (Result, error) {
	if cfg.Request == nil {
		return Result{}, errors.New("loadgen: a request is required")
	}
	if cfg.MaxOutstanding <= 0 {
		cfg.MaxOutstanding = DefaultMaxOutstanding
	}
	if cfg.Mode == HTTP {
		if cfg.HTTP == nil || cfg.HTTP.URL == "" {
			return Result{}, errors.New("loadgen: HTTP mode needs a server URL")
		}
		var err error
		if cfg.httpReq, err = encodeHTTP(cfg.HTTP.URL, cfg.Request); err != nil {
			return Result{}, err
		}
		if cfg.HTTP.Client == nil {
			cfg.HTTP = &HTTPTarget{URL: cfg.HTTP.URL, Client: NewHTTPClient(cfg.connections())}
		}
	} else if cfg.Client == nil {
		return Result{}, errors.New("loadgen: a gRPC client is required")
	}
	if cfg.Window <= 0 {
		return Result{}, errors.New("loadgen: the window must be positive")
	}
	if cfg.Rate <= 0 && cfg.Concurrency <= 0 {
		return Result{}, errors.New("loadgen: give a concurrency or a rate")
	}
	start := time.Now()
	c := clock{from: start.Add(cfg.Warmup), to: start.Add(cfg.Warmup + cfg.Window)}
	runCtx, stop := context.WithDeadline(ctx, c.to)
	defer stop()
	var total Progress
	var rec recorder
	progressDone := reportProgress(runCtx, cfg.Progress, start, &total)
	var delayed int64
	var err error
	if cfg.Rate > 0 {
		delayed, err = runRate(runCtx, ctx, cfg, c, &rec, &total)
	} else {
		err = runConcurrency(runCtx, ctx, cfg, c, &rec, &total)
	}
	stop()
	<-progressDone
	res := Result{Mode: cfg.Mode, Rate: cfg.Rate, Window: cfg.Window, Requests: rec.requests,
		Responses: rec.responses, Errors: rec.errs, Delayed: delayed, FirstError: rec.firstErr,
		Latency: rec.latency.Summary(), FirstResponse: rec.first.Summary()}
	if cfg.Rate <= 0 {
		res.Concurrency = cfg.Concurrency
	}
	if err == nil && ctx.Err() != nil {
		err = ctx.Err()
	}
	return res, err
}

func reportProgress(ctx context.Context, fn func(Progress), start time.Time, total *Progress) <-chan struct{} {
	done := make(chan struct{})
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
				fn(Progress{Elapsed: time.Since(start), Requests: atomic.LoadInt64(&total.Requests),
					Responses: atomic.LoadInt64(&total.Responses), Errors: atomic.LoadInt64(&total.Errors)})
			}
		}
	}()
	return done
}

// runConcurrency keeps cfg.Concurrency requests in flight until sendCtx
// ends; requests already sent finish under callCtx.
func runConcurrency(sendCtx, callCtx context.Context, cfg Config, c clock, rec *recorder, total *Progress) error {
	var wg sync.WaitGroup
	errs := make(chan error, cfg.Concurrency)
	recs := make([]recorder, cfg.Concurrency) // one each: no lock shared per request
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
				rec.add(c, o, total)
				if errors.Is(o.err, errBroken) {
					errs <- o.err
					return
				}
			}
		})
	}
	wg.Wait()
	for i := range recs {
		rec.merge(&recs[i])
	}
	close(errs)
	return <-errs
}
