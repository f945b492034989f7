package core

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/tritonhost/tritonhost/core/serverlog"
)

// Defaults of the response cache's bounds (Options).
const (
	// DefaultCacheCallTimeout is Options.CacheCallTimeout when it is left
	// 0: how long a request waits for its lookup before it runs as a miss.
	DefaultCacheCallTimeout = 100 * time.Millisecond
	// DefaultCacheMaxCalls is Options.CacheMaxCalls when it is left 0.
	DefaultCacheMaxCalls = 64
	// DefaultCacheMaxBytes is Options.CacheMaxBytes when it is left 0.
	DefaultCacheMaxBytes = 64 << 20
)

// cacheInsertOverhead is what a queued insert costs beyond its entry, so
// that empty responses cannot queue without bound either.
const cacheInsertOverhead = 256

// Why a lookup did not find a response, for the verbose log.
var (
	errCacheBusy   = errors.New("as many cache calls as Options.CacheMaxCalls allows are running")
	errCacheSlow   = errors.New("the lookup did not return within the cache call timeout")
	errCacheClosed = errors.New("the cache is closed")
)

// cachePath is the server's side of its response cache: lookups, which a
// request waits for up to the call timeout, and inserts, which wait in a
// queue for the one goroutine that makes them, so that neither ever holds
// a backend's thread. Each is bounded: at most maxCalls cache calls run at
// once (a lookup that finds none free is a miss at once, an insert waits
// its turn), and the entries the path holds (queued and running inserts,
// entries being copied out of the cache) take at most maxBytes (an insert
// past it is dropped and counted, a lookup past it is a miss).
type cachePath struct {
	cache    ResponseCache
	log      *serverlog.Logger
	timeout  time.Duration
	maxBytes int64
	calls    chan struct{} // one token per cache call running

	mu     sync.Mutex
	bytes  int64            // held by entries (guarded by mu)
	queue  []*cacheInsert   // inserts waiting for the worker
	queued map[string]bool  // keys queued or being inserted
	closed bool             // close began: nothing new starts
	wake   chan struct{}    // cap 1: the queue has work
	stop   chan struct{}    // closed by close
	active sync.WaitGroup   // cache calls running, and the worker
	late   func(key string) // test hook: a lookup returned after its request gave up on it
}

// cacheInsert is one response waiting to be inserted.
type cacheInsert struct {
	m      *Model
	key    string
	entry  []byte
	charge int64
}

func newCachePath(c ResponseCache, opts *Options, log *serverlog.Logger) *cachePath {
	p := &cachePath{cache: c, log: log, timeout: opts.CacheCallTimeout, maxBytes: opts.CacheMaxBytes,
		calls: make(chan struct{}, opts.CacheMaxCalls), queued: map[string]bool{},
		wake: make(chan struct{}, 1), stop: make(chan struct{})}
	p.active.Add(1)
	go p.work()
	return p
}

// take charges n bytes to the path, unless that would pass maxBytes.
func (p *cachePath) take(n int64) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || n > p.maxBytes-p.bytes {
		return false
	}
	p.bytes += n
	return true
}

func (p *cachePath) give(n int64) {
	p.mu.Lock()
	p.bytes -= n
	p.mu.Unlock()
}

// lookup returns the response the cache holds under key, or nil and why
// not. It waits for the cache at most the call timeout: a lookup still
// running then goes on without its request, which runs as a miss, and
// its result is discarded when it returns.
func (p *cachePath) lookup(key string) (*Response, error) {
	p.mu.Lock()
	closed := p.closed
	if !closed {
		p.active.Add(1) // before close can wait
	}
	p.mu.Unlock()
	if closed {
		return nil, errCacheClosed
	}
	select {
	case p.calls <- struct{}{}:
	default:
		p.active.Done()
		return nil, errCacheBusy
	}
	type result struct {
		resp *Response
		err  error
	}
	var (
		handoff   sync.Mutex
		abandoned bool
		done      = make(chan result, 1)
	)
	go func() {
		defer p.active.Done()
		var entry []byte
		var charged int64
		found, err := p.cache.Lookup(key, func(n int) []byte {
			if entry != nil || n < 0 || !p.take(int64(n)) {
				return nil
			}
			charged, entry = int64(n), make([]byte, n)
			return entry
		})
		<-p.calls
		var res result
		switch {
		case err != nil:
			res.err = err
		case found && entry == nil:
			res.err = errors.New("the cache reported a hit without copying an entry")
		case found:
			res.resp, res.err = decodeEntry(entry)
		}
		// The response is handed on at once; the path holds the entry no
		// longer.
		p.give(charged)
		handoff.Lock()
		defer handoff.Unlock()
		if abandoned {
			if p.late != nil {
				p.late(key)
			}
			return
		}
		done <- res
	}()
	timer := time.NewTimer(p.timeout)
	defer timer.Stop()
	select {
	case res := <-done:
		return res.resp, res.err
	case <-timer.C:
	}
	handoff.Lock()
	defer handoff.Unlock()
	select {
	case res := <-done: // it returned while the timer fired
		return res.resp, res.err
	default:
		abandoned = true
		return nil, errCacheSlow
	}
}

// queueInsert queues resp for insertion under key, for m. It copies the
// outputs (the caller keeps resp) and returns at once, on whatever thread
// delivered the response. A key already queued is not queued again; past
// Options.CacheMaxBytes the insert is dropped, and counted as failed.
func (p *cachePath) queueInsert(m *Model, key string, resp *Response) {
	size := entrySize(resp)
	charge := int64(size) + cacheInsertOverhead
	p.mu.Lock()
	switch {
	case p.closed || p.queued[key]:
		p.mu.Unlock()
		return
	case charge > p.maxBytes-p.bytes:
		held := p.bytes
		p.mu.Unlock()
		m.stats.cacheInsertFailed()
		p.log.Verbosef(1, "model %q version %d: response of %d bytes not inserted into the response cache: it holds %d of its %d bytes (Options.CacheMaxBytes)",
			m.name, m.version, size, held, p.maxBytes)
		return
	}
	p.bytes += charge
	p.queued[key] = true
	p.mu.Unlock()
	entry := make([]byte, size)
	encodeEntry(entry, resp)
	p.mu.Lock()
	p.queue = append(p.queue, &cacheInsert{m: m, key: key, entry: entry, charge: charge})
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// next returns the oldest queued insert, waiting for one; nil once the
// path closes.
func (p *cachePath) next() *cacheInsert {
	for {
		p.mu.Lock()
		if len(p.queue) > 0 && !p.closed {
			it := p.queue[0]
			p.queue[0] = nil
			p.queue = p.queue[1:]
			p.mu.Unlock()
			return it
		}
		p.mu.Unlock()
		select {
		case <-p.wake:
		case <-p.stop:
			return nil
		}
	}
}

// work makes the queued inserts, one at a time, each once a call token is
// free.
func (p *cachePath) work() {
	defer p.active.Done()
	for {
		it := p.next()
		if it == nil {
			return
		}
		select {
		case p.calls <- struct{}{}:
		case <-p.stop:
			p.finish(it)
			return
		}
		start := Nanotime()
		err := p.cache.Insert(it.key, it.entry)
		<-p.calls
		took := span(start, Nanotime())
		p.finish(it)
		it.m.stats.cacheInserted(took)
		if err != nil && CodeOf(err) != CodeAlreadyExists {
			it.m.stats.cacheInsertFailed()
			p.log.Errorf("model %q version %d: failed to insert a response into the response cache: %v", it.m.name, it.m.version, err)
		}
	}
}

// finish releases what an insert held.
func (p *cachePath) finish(it *cacheInsert) {
	p.mu.Lock()
	p.bytes -= it.charge
	delete(p.queued, it.key)
	p.mu.Unlock()
}

// close stops the path: queued inserts are dropped, nothing new starts,
// and once the calls running have returned the cache is closed. When ctx
// ends first, close returns an error and leaves the cache open: a call
// still running in it may return later.
func (p *cachePath) close(ctx context.Context) error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	for _, it := range p.queue {
		p.bytes -= it.charge
		delete(p.queued, it.key)
	}
	p.queue = nil
	p.mu.Unlock()
	close(p.stop)
	idle := make(chan struct{})
	go func() {
		p.active.Wait()
		close(idle)
	}()
	select {
	case <-idle:
	case <-ctx.Done():
		select {
		case <-idle: // idle already: close it all the same
		default:
			return Errorf(CodeUnavailable, "the response cache still has calls running (%v); it is left open", ctx.Err())
		}
	}
	if err := p.cache.Close(); err != nil {
		return fmt.Errorf("close the response cache: %w", err)
	}
	return nil
}

// cacheDefaults fills the cache bounds left 0.
func (o *Options) cacheDefaults() {
	if o.CacheCallTimeout <= 0 {
		o.CacheCallTimeout = DefaultCacheCallTimeout
	}
	if o.CacheMaxCalls <= 0 {
		o.CacheMaxCalls = DefaultCacheMaxCalls
	}
	if o.CacheMaxBytes <= 0 {
		o.CacheMaxBytes = DefaultCacheMaxBytes
	}
}
