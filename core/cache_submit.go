package core

import (
	"context"
	"errors"

	"github.com/tritonhost/tritonhost/core/configpb"
)

// A request to a model whose configuration enables response_cache, on a
// server with a response cache (Options.ResponseCache), takes the cache
// path: before it is queued, its key (cacheKey) is looked up; a hit
// answers it from the cache and it never reaches its model's scheduler or
// backend; a miss runs it as usual, and its successful response is queued
// for insertion on its way to the client. This holds for ensembles (their
// steps then do not run) and for their steps, whose models decide for
// themselves, as in Triton. Decoupled models cannot enable it (their
// configuration is refused), nor can models with sequence batching.

// cacheState is one request's part in the cache path.
type cacheState struct {
	key string // set before the request is queued; "" until then
	hit bool   // answered from the cache: nothing to insert
}

// CacheEnabled reports whether the version's requests take the response
// cache: its configuration enables response_cache and the server has a
// cache.
func (m *Model) CacheEnabled() bool {
	return m.srv != nil && m.srv.cache != nil && m.Config().GetResponseCache().GetEnable()
}

// cacheFor returns the cache state of a request to m and fn wrapped to
// queue its response for insertion, or nil and fn when m does not take
// the cache path.
func (s *Server) cacheFor(m *Model, fn ResponseFunc) (*cacheState, ResponseFunc) {
	if !m.CacheEnabled() {
		return nil, fn
	}
	cs := &cacheState{}
	p := s.cache
	return cs, func(resp *Response, final bool) {
		if final && resp != nil && resp.Err == nil && !cs.hit && cs.key != "" {
			p.queueInsert(m, cs.key, resp)
		}
		fn(resp, final)
	}
}

// answerFromCache looks r up and, on a hit, answers it with the cached
// response, releases it and returns true; on a miss (the cache's, or a
// lookup that failed, was refused or took too long) it returns false and
// r goes on to its model. Either way it is counted in the model's cache
// statistics: a hit as a success without an execution.
func (s *Server) answerFromCache(r *Request, cs *cacheState) bool {
	m := r.model
	if st := m.Readiness(); m.sched == nil || st != ModelReady && st != ModelUnloading {
		return false // enqueue refuses it, as without a cache
	}
	cs.key = cacheKey(r)
	start := Nanotime()
	resp, err := s.cache.lookup(cs.key)
	end := Nanotime()
	if resp == nil {
		m.stats.cacheMiss(span(start, end))
		if err != nil && !errors.Is(err, errCacheClosed) {
			s.log.Verbosef(1, "model %q version %d: request %q is a response cache miss: the lookup failed: %v", m.name, m.version, r.ID(), err)
		}
		return false
	}
	cs.hit = true
	m.stats.cacheHit(r.requestStart, start, end)
	r.responder.deliverCached(resp)
	r.markReleased()
	return true
}

// closeCache closes the cache path for Stop (see cachePath.close).
func (s *Server) closeCache(ctx context.Context) error {
	if s.cache == nil {
		return nil
	}
	return s.cache.close(ctx)
}

// deliverCached delivers a response taken from the cache as the request's
// final one. The response was shaped for a request with the same key
// (Send's checks and reshape applied), so it goes out as it is.
func (p *Responder) deliverCached(resp *Response) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.done {
		p.deliverLocked(resp, true)
	}
}

// The cache's statistics, as Triton's InferStatistics and per-model cache
// metrics count them.

// cacheHit counts a request answered from the cache: a success whose
// duration runs to now, with its time before the lookup as its queue time
// and the lookup's as its cache hit time; no inference or execution.
func (st *statsRecorder) cacheHit(requestStart, lookupStart, lookupEnd uint64) {
	now := Nanotime()
	st.mu.Lock()
	defer st.mu.Unlock()
	st.s.Inference.Success.add(span(requestStart, now))
	st.s.Inference.Queue.add(span(requestStart, lookupStart))
	st.s.Inference.CacheHit.add(span(lookupStart, lookupEnd))
}

// cacheMiss counts a lookup that found nothing, with its duration.
func (st *statsRecorder) cacheMiss(ns uint64) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.s.Inference.CacheMiss.add(ns)
}

// cacheInserted adds an insert's duration to the miss it followed, and to
// the request's duration, as Triton does.
func (st *statsRecorder) cacheInserted(ns uint64) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.s.Inference.CacheMiss.Ns += ns
	st.s.Inference.Success.Ns += ns
}

// cacheInsertFailed counts a response the cache did not store.
func (st *statsRecorder) cacheInsertFailed() {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.insertFailures++
}

// checkEnsembleCache refuses an ensemble that enables response_cache and
// is decoupled (a decoupled step's responses reach its outputs), as Triton
// refuses a decoupled model that enables it.
func checkEnsembleCache(cfg *configpb.ModelConfig, decoupled bool) error {
	if decoupled && cfg.GetResponseCache().GetEnable() {
		return Errorf(CodeInvalidArg, "ensemble %q: response_cache is enabled, but the response cache does not currently support models with a 'decoupled' transaction policy (%s); disable it",
			cfg.GetName(), decoupledReason(true))
	}
	return nil
}

// warnUnusedCache says, when m loads, that its configuration enables
// response_cache on a server without a cache: its requests all run.
func (s *Server) warnUnusedCache(m *Model) {
	if s.cache == nil && m.Config().GetResponseCache().GetEnable() {
		s.log.Warnf("model %q version %d enables response_cache, but the server has no response cache (--cache-config): its requests are not cached", m.name, m.version)
	}
}
