package metricsserver_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/coretest"
	"github.com/tritonhost/tritonhost/internal/frontend/metricsserver"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// TestCacheFamiliesCountHitsAndMisses: a model that uses the response
// cache has Triton's per-model cache families (and tritonhost's count of
// failed inserts); a model that does not has none.
func TestCacheFamiliesCountHitsAndMisses(t *testing.T) {
	t.Parallel()
	cache := coretest.NewCache()
	p := coretest.NewProvider()
	srv := coretest.Serve(t, core.Options{Backends: p, ResponseCache: cache},
		coretest.ModelDir{Name: "cached", Config: coretest.VectorConfig("response_cache { enable: true }")},
		coretest.ModelDir{Name: "plain", Config: vector})
	_, url := serve(t, metricsserver.Options{Core: srv})
	in := func(model, id string, v int32) *core.Submission {
		return coretest.Request(model, id, coretest.Int32Input("INPUT0", []int64{1}, v))
	}
	coretest.Succeeded(t, coretest.Infer(t, srv, in("cached", "a", 1)))
	cache.WaitCalls(t, 1, 1)
	coretest.Succeeded(t, coretest.Infer(t, srv, in("cached", "b", 1)), coretest.Infer(t, srv, in("plain", "c", 1)))
	cache.FailInserts(errors.New("full"))
	coretest.Succeeded(t, coretest.Infer(t, srv, in("cached", "d", 2)))
	m, err := srv.Model("cached", 0)
	if err != nil {
		t.Fatal(err)
	}
	testenv.WaitUntil(t, "the failed insert to be counted", func() bool { return m.Counters().CacheInsertFailures == 1 })
	body := scrape(t, url)
	for _, want := range []string{
		`nv_cache_num_hits_per_model{model="cached",version="1"} 1`,
		`nv_cache_num_misses_per_model{model="cached",version="1"} 2`,
		`tritonhost_cache_insert_failures_total{model="cached",version="1"} 1`,
		`# TYPE nv_cache_hit_duration_per_model counter`,
		`nv_cache_miss_duration_per_model{model="cached",version="1"} `,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("no %q in\n%s", want, body)
		}
	}
	if strings.Contains(body, `nv_cache_num_hits_per_model{model="plain"`) {
		t.Errorf("a model without the cache has cache series:\n%s", body)
	}
}
