package core_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/coretest"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// cachedConfig is vectorConfig with the response cache enabled.
func cachedConfig(extra ...string) string {
	return vectorConfig(append([]string{"response_cache { enable: true }"}, extra...)...)
}

// serveCached serves model "m" (cachedConfig with extra lines) on a fake
// backend that reports statistics and echoes, with cache as the server's
// response cache and opts's cache bounds.
func serveCached(t *testing.T, cache core.ResponseCache, opts core.Options, extra ...string) (*core.Server, *coretest.Provider) {
	t.Helper()
	p := coretest.NewProvider().Set("m", coretest.Reporting(true, coretest.Echo()))
	opts.Backends, opts.ResponseCache = p, cache
	srv := coretest.Serve(t, opts, coretest.ModelDir{Name: "m", Config: cachedConfig(extra...)})
	if !srv.Ready() {
		t.Fatalf("model did not load: %+v", srv.RepositoryIndex())
	}
	return srv, p
}

// echoed infers req and returns the int32 values of OUTPUT0.
func echoed(t *testing.T, srv *core.Server, req *core.Submission) []int32 {
	t.Helper()
	resp := coretest.Infer(t, srv, req).Single(t)
	if resp.Err != nil {
		t.Fatalf("request %q: %v", req.ID, resp.Err)
	}
	out, ok := coretest.OutputOf(resp, "OUTPUT0")
	if !ok {
		t.Fatalf("request %q: no OUTPUT0 in %v", req.ID, shapes(resp))
	}
	return coretest.Int32s(out.Data)
}

func TestCacheHitIsAnsweredWithoutReachingTheBackend(t *testing.T) {
	cache := coretest.NewCache()
	srv, p := serveCached(t, cache, core.Options{})
	if got := echoed(t, srv, vector("a1", 1, 2, 3)); !slices.Equal(got, []int32{1, 2, 3}) {
		t.Fatalf("first request: %v", got)
	}
	cache.WaitCalls(t, 1, 1)
	if got := echoed(t, srv, vector("a2", 1, 2, 3)); !slices.Equal(got, []int32{1, 2, 3}) {
		t.Fatalf("identical request: %v", got)
	}
	if got := echoed(t, srv, vector("b", 1, 2, 4)); !slices.Equal(got, []int32{1, 2, 4}) {
		t.Fatalf("other request: %v", got)
	}
	if got := p.Batches("m"); !slices.Equal(flatten(got), []string{"a1", "b"}) {
		t.Errorf("the backend executed %v; want a1 and b, a2 being a hit", got)
	}
	st := coretest.Statistics(t, srv, "m")
	inf := st.Inference
	if inf.CacheHit.Count != 1 || inf.CacheMiss.Count != 2 || inf.Success.Count != 3 {
		t.Errorf("hits %d, misses %d, successes %d; want 1, 2, 3", inf.CacheHit.Count, inf.CacheMiss.Count, inf.Success.Count)
	}
	if st.ExecutionCount != 2 || st.InferenceCount != 2 {
		t.Errorf("executions %d, inferences %d; want 2 each: a hit executes nothing", st.ExecutionCount, st.InferenceCount)
	}
	if inf.Queue.Count != 3 {
		t.Errorf("queue count %d, want 3: a hit counts its time before the lookup as queue time", inf.Queue.Count)
	}
	m, err := srv.Model("m", 0)
	if err != nil {
		t.Fatal(err)
	}
	k := m.Counters()
	if k.CacheHit != inf.CacheHit || k.CacheMiss.Count != inf.CacheMiss.Count || k.CacheInsertFailures != 0 {
		t.Errorf("counters %+v %+v %d disagree with the statistics", k.CacheHit, k.CacheMiss, k.CacheInsertFailures)
	}
}

func flatten(batches [][]string) []string {
	var out []string
	for _, b := range batches {
		out = append(out, b...)
	}
	return out
}

// TestCacheKeyTellsRequestsApart: requests differ in their key when their
// inputs' values or shapes, or the outputs they ask for, differ; ids and
// parameters do not count.
func TestCacheKeyTellsRequestsApart(t *testing.T) {
	twoOutputs := `backend: "go"
max_batch_size: 0
input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ -1, -1 ] }, { name: "INPUT1" data_type: TYPE_INT32 dims: [ 1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ -1, -1 ] }, { name: "OUTPUT1" data_type: TYPE_INT32 dims: [ 1 ] } ]
response_cache { enable: true }
`
	cache := coretest.NewCache()
	p := coretest.NewProvider().Set("m", coretest.Echo())
	srv := coretest.Serve(t, core.Options{Backends: p, ResponseCache: cache}, coretest.ModelDir{Name: "m", Config: twoOutputs})
	req := func(id string, shape []int64, values []int32, outputs ...string) *core.Submission {
		s := coretest.Request("m", id, coretest.Int32Input("INPUT0", shape, values...), coretest.Int32Input("INPUT1", []int64{1}, 7))
		s.Outputs = outputs
		return s
	}
	steps := []struct {
		req *core.Submission
		hit bool
	}{
		{req("first", []int64{1, 4}, []int32{1, 2, 3, 4}), false},
		{req("same again, another id", []int64{1, 4}, []int32{1, 2, 3, 4}), true},
		{func() *core.Submission {
			s := req("same with a parameter", []int64{1, 4}, []int32{1, 2, 3, 4})
			s.Parameters = []core.Parameter{core.IntParam("x", 1)}
			return s
		}(), true},
		{req("another value", []int64{1, 4}, []int32{1, 2, 3, 5}), false},
		{req("same bytes, another shape", []int64{2, 2}, []int32{1, 2, 3, 4}), false},
		{req("fewer outputs", []int64{1, 4}, []int32{1, 2, 3, 4}, "OUTPUT1"), false},
		{req("both outputs named", []int64{1, 4}, []int32{1, 2, 3, 4}, "OUTPUT1", "OUTPUT0"), true},
	}
	inserts := 0
	for _, st := range steps {
		before := coretest.Statistics(t, srv, "m").Inference.CacheHit.Count
		resp := coretest.Infer(t, srv, st.req).Single(t)
		if resp.Err != nil {
			t.Fatalf("%s: %v", st.req.ID, resp.Err)
		}
		hit := coretest.Statistics(t, srv, "m").Inference.CacheHit.Count > before
		if hit != st.hit {
			t.Errorf("%s: hit %v, want %v", st.req.ID, hit, st.hit)
		}
		want := []string{"OUTPUT0[" + fmt.Sprint(st.req.Inputs[0].Shape[0]) + " " + fmt.Sprint(st.req.Inputs[0].Shape[1]) + "]", "OUTPUT1[1]"}
		if len(st.req.Outputs) == 1 {
			want = want[1:]
		}
		if got := shapes(resp); !slices.Equal(got, want) {
			t.Errorf("%s: outputs %v, want %v", st.req.ID, got, want)
		}
		if !st.hit {
			inserts++
			cache.WaitCalls(t, 0, inserts)
		}
	}
}

// TestCacheFailuresNeverFailARequest: whatever the cache does, every
// request is answered by its model; failed lookups count as misses,
// failed inserts are counted.
func TestCacheFailuresNeverFailARequest(t *testing.T) {
	broken := errors.New("the cache is broken")
	tests := []struct {
		name         string
		cache        func(t *testing.T) *coretest.Cache
		hits         uint64
		insertFailed uint64
	}{
		{"lookups fail", func(*testing.T) *coretest.Cache { return coretest.NewCache().FailLookups(broken) }, 0, 0},
		{"inserts fail", func(*testing.T) *coretest.Cache { return coretest.NewCache().FailInserts(broken) }, 0, 2},
		{"entries come back corrupt", func(*testing.T) *coretest.Cache { return coretest.NewCache().Corrupt() }, 0, 0},
		{"lookups hang", func(t *testing.T) *coretest.Cache { return coretest.NewCache().HangLookups(coretest.NewGate(t)) }, 0, 0},
		{"inserts hang", func(t *testing.T) *coretest.Cache { return coretest.NewCache().HangInserts(coretest.NewGate(t)) }, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cache := tt.cache(t)
			srv, p := serveCached(t, cache, core.Options{CacheCallTimeout: 10 * time.Millisecond})
			for i, id := range []string{"r1", "r2"} {
				if got := echoed(t, srv, vector(id, 5, 6)); !slices.Equal(got, []int32{5, 6}) {
					t.Fatalf("request %d: %v", i, got)
				}
				if tt.insertFailed > 0 {
					cache.WaitCalls(t, 0, i+1)
				}
			}
			if n := len(p.Executions("m")); n != 2 {
				t.Errorf("%d executions, want 2: no hit", n)
			}
			m, err := srv.Model("m", 0)
			if err != nil {
				t.Fatal(err)
			}
			testenv.WaitUntil(t, "the insert failures to be counted", func() bool { return m.Counters().CacheInsertFailures >= tt.insertFailed })
			k := m.Counters()
			if k.CacheHit.Count != tt.hits || k.CacheMiss.Count != 2 || k.CacheInsertFailures != tt.insertFailed {
				t.Errorf("hits %d, misses %d, insert failures %d; want %d, 2, %d", k.CacheHit.Count, k.CacheMiss.Count, k.CacheInsertFailures, tt.hits, tt.insertFailed)
			}
		})
	}
}

// TestCacheCallsAreBounded: with one call allowed at once and a lookup
// stuck in the cache, the next request misses at once (no second call
// starts); a response larger than the bytes the path may hold is not
// inserted, and counted.
func TestCacheCallsAreBounded(t *testing.T) {
	t.Run("calls", func(t *testing.T) {
		gate := coretest.NewGate(t)
		cache := coretest.NewCache().HangLookups(gate)
		srv, p := serveCached(t, cache, core.Options{CacheMaxCalls: 1, CacheCallTimeout: 10 * time.Millisecond})
		echoed(t, srv, vector("stuck", 1))
		echoed(t, srv, vector("busy", 2))
		if n := len(p.Executions("m")); n != 2 {
			t.Errorf("%d executions, want 2", n)
		}
		if lookups, _ := cache.Calls(); lookups != 0 {
			t.Errorf("%d lookups returned while the first is stuck", lookups)
		}
		gate.Open()
		cache.WaitCalls(t, 1, 0)
		if lookups, _ := cache.Calls(); lookups != 1 {
			t.Errorf("%d lookups were made, want 1: the second request found no call free", lookups)
		}
	})
	t.Run("bytes", func(t *testing.T) {
		cache := coretest.NewCache()
		srv, _ := serveCached(t, cache, core.Options{CacheMaxBytes: 400})
		echoed(t, srv, vector("small", 1))
		cache.WaitCalls(t, 1, 1)
		big := make([]int32, 100) // 400 bytes of data: past the bound with its overhead
		echoed(t, srv, vector("big", big...))
		m, _ := srv.Model("m", 0)
		testenv.WaitUntil(t, "the dropped insert to be counted", func() bool { return m.Counters().CacheInsertFailures == 1 })
		if _, inserts := cache.Calls(); inserts != 1 || cache.Len() != 1 {
			t.Errorf("%d inserts made, %d entries; want only the small response's", inserts, cache.Len())
		}
	})
}

// TestCacheConcurrentIdenticalRequests: identical requests at once all get
// the right answer; the cache ends with one entry, and no insert failed
// (the later ones find it queued or already there).
func TestCacheConcurrentIdenticalRequests(t *testing.T) {
	cache := coretest.NewCache()
	srv, p := serveCached(t, cache, core.Options{}, "instance_group [ { count: 4 kind: KIND_CPU } ]")
	const n = 32
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			resp := coretest.Infer(t, srv, vector(fmt.Sprint("r", i), 9, 8, 7)).Single(t)
			if out, ok := coretest.OutputOf(resp, "OUTPUT0"); resp.Err != nil || !ok || !slices.Equal(coretest.Int32s(out.Data), []int32{9, 8, 7}) {
				t.Errorf("request %d: %v %v", i, resp.Err, shapes(resp))
			}
		})
	}
	wg.Wait()
	st := coretest.Statistics(t, srv, "m").Inference
	execs := uint64(len(p.Executions("m")))
	if st.CacheHit.Count+st.CacheMiss.Count != n || st.CacheMiss.Count < 1 {
		t.Errorf("hits %d + misses %d, want %d with at least one miss", st.CacheHit.Count, st.CacheMiss.Count, n)
	}
	if execs > st.CacheMiss.Count {
		t.Errorf("%d executions for %d misses", execs, st.CacheMiss.Count)
	}
	m, _ := srv.Model("m", 0)
	testenv.WaitUntil(t, "an entry", func() bool { return cache.Len() == 1 })
	if f := m.Counters().CacheInsertFailures; f != 0 {
		t.Errorf("%d insert failures, want 0", f)
	}
}

func TestCacheFollowsTritonsRulesForDecoupledModelsAndEnsembles(t *testing.T) {
	t.Run("decoupled model", func(t *testing.T) {
		srv := coretest.Serve(t, core.Options{Backends: coretest.NewProvider(), ResponseCache: coretest.NewCache()},
			coretest.ModelDir{Name: "m", Config: cachedConfig(decoupled)})
		reason := srv.RepositoryIndex()[0].Reason
		if srv.Ready() || !strings.Contains(reason, "response cache does not currently support") || !strings.Contains(reason, "decoupled") {
			t.Errorf("ready %v, reason %q; want it refused for being decoupled", srv.Ready(), reason)
		}
	})
	ensemble := func(extra string) string {
		return `platform: "ensemble"
max_batch_size: 0
input [ { name: "IN" data_type: TYPE_INT32 dims: [ -1 ] } ]
output [ { name: "OUT" data_type: TYPE_INT32 dims: [ -1 ] } ]
ensemble_scheduling { step [ { model_name: "step" model_version: -1
  input_map { key: "INPUT0" value: "IN" } output_map { key: "OUTPUT0" value: "OUT" } } ] }
response_cache { enable: true }
` + extra
	}
	t.Run("ensemble of a decoupled step", func(t *testing.T) {
		srv := coretest.Serve(t, core.Options{Backends: coretest.NewProvider().Set("step", coretest.Answering(coretest.Stream(1))), ResponseCache: coretest.NewCache()},
			coretest.ModelDir{Name: "step", Config: vectorConfig(decoupled)}, coretest.ModelDir{Name: "e", Config: ensemble("")})
		var reason string
		for _, st := range srv.RepositoryIndex() {
			if st.Name == "e" {
				reason = st.Reason
			}
		}
		if !strings.Contains(reason, "response cache does not currently support") || !strings.Contains(reason, "decoupled") {
			t.Errorf("ensemble reason %q; want it refused for being decoupled", reason)
		}
	})
	t.Run("ensemble hit runs no step", func(t *testing.T) {
		p := coretest.NewProvider()
		cache := coretest.NewCache()
		srv := coretest.Serve(t, core.Options{Backends: p, ResponseCache: cache},
			coretest.ModelDir{Name: "step", Config: vectorConfig()}, coretest.ModelDir{Name: "e", Config: ensemble("")})
		if !srv.Ready() {
			t.Fatalf("not ready: %+v", srv.RepositoryIndex())
		}
		for _, id := range []string{"e1", "e2"} {
			resp := coretest.Infer(t, srv, coretest.Request("e", id, coretest.Int32Input("IN", []int64{2}, 4, 2))).Single(t)
			out, ok := coretest.OutputOf(resp, "OUT")
			if resp.Err != nil || !ok || !slices.Equal(coretest.Int32s(out.Data), []int32{4, 2}) {
				t.Fatalf("%s: %v %v", id, resp.Err, shapes(resp))
			}
			cache.WaitCalls(t, 1, 1)
		}
		if n := len(p.Executions("step")); n != 1 {
			t.Errorf("the step ran %d times, want 1: the second request was a hit of the ensemble", n)
		}
		if st := coretest.Statistics(t, srv, "e").Inference; st.CacheHit.Count != 1 || st.CacheMiss.Count != 1 {
			t.Errorf("ensemble hits %d, misses %d; want 1 each", st.CacheHit.Count, st.CacheMiss.Count)
		}
	})
}

// TestModelEnablingTheCacheOnAServerWithoutOne runs every request.
func TestModelEnablingTheCacheOnAServerWithoutOne(t *testing.T) {
	srv, p := serveCached(t, nil, core.Options{})
	echoed(t, srv, vector("a", 1))
	echoed(t, srv, vector("b", 1))
	if n := len(p.Executions("m")); n != 2 {
		t.Errorf("%d executions, want 2", n)
	}
	m, _ := srv.Model("m", 0)
	if m.CacheEnabled() {
		t.Error("CacheEnabled without a cache")
	}
}

// TestStopClosesTheCacheOnceItsCallsReturned: Stop closes the cache; with
// a call stuck in it, Stop reports it at its deadline and leaves it open.
func TestStopClosesTheCacheOnceItsCallsReturned(t *testing.T) {
	t.Run("idle", func(t *testing.T) {
		cache := coretest.NewCache()
		srv, _ := serveCached(t, cache, core.Options{})
		echoed(t, srv, vector("a", 1))
		if err := srv.Stop(context.Background()); err != nil {
			t.Fatal(err)
		}
		if cache.Closed() != 1 {
			t.Errorf("closed %d times, want 1", cache.Closed())
		}
	})
	t.Run("stuck insert", func(t *testing.T) {
		gate := coretest.NewGate(t)
		cache := coretest.NewCache().HangInserts(gate)
		srv, _ := serveCached(t, cache, core.Options{})
		echoed(t, srv, vector("a", 1))
		testenv.WaitUntil(t, "the insert to reach the cache", func() bool { _, n := cache.Hanging(); return n == 1 })
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		err := srv.Stop(ctx)
		if err == nil || !strings.Contains(err.Error(), "response cache still has calls running") {
			t.Errorf("Stop: %v; want it to report the cache call", err)
		}
		if cache.Closed() != 0 {
			t.Error("the cache was closed while a call ran in it")
		}
		gate.Open()
	})
}
