package metricsserver

import (
	"slices"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tritonhost/tritonhost/core"
)

// Triton's per-model response cache families, served for the models that
// use the server's cache (core.Model.CacheEnabled), as Triton serves them
// only when a model's cache is enabled; and tritonhost's own count of the
// responses the cache did not store. The help texts are ours.
var (
	descCacheHits      = prometheus.NewDesc("nv_cache_num_hits_per_model", "Number of response cache hits per model", modelLabels, nil)
	descCacheMisses    = prometheus.NewDesc("nv_cache_num_misses_per_model", "Number of response cache misses per model", modelLabels, nil)
	descCacheHitUs     = prometheus.NewDesc("nv_cache_hit_duration_per_model", "Cumulative time requests spent retrieving a cached response on a hit, in microseconds", modelLabels, nil)
	descCacheMissUs    = prometheus.NewDesc("nv_cache_miss_duration_per_model", "Cumulative time requests spent looking up and inserting responses on a miss, in microseconds", modelLabels, nil)
	descInsertFailures = prometheus.NewDesc("tritonhost_cache_insert_failures_total", "Responses the response cache did not store (the cache failed, or the server held as many as --cache-held-byte-size allows), per model", modelLabels, nil)
)

func init() {
	for _, name := range []string{"nv_cache_num_hits_per_model", "nv_cache_num_misses_per_model",
		"nv_cache_hit_duration_per_model", "nv_cache_miss_duration_per_model", "tritonhost_cache_insert_failures_total"} {
		serverFamilies[name] = true
	}
}

// cacheCollector reads each cache-enabled model version's cache counters
// when scraped.
type cacheCollector struct {
	core *core.Server
}

// Describe implements prometheus.Collector.
func (c *cacheCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descCacheHits, descCacheMisses, descCacheHitUs, descCacheMissUs, descInsertFailures} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *cacheCollector) Collect(ch chan<- prometheus.Metric) {
	for _, series := range seriesOf(c.core.LoadedModels()) {
		if !slices.ContainsFunc(series.models, (*core.Model).CacheEnabled) {
			continue
		}
		labels := []string{series.name, series.version}
		k, _ := series.counters((*core.Model).CacheEnabled)
		counter := func(d *prometheus.Desc, v float64) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
		}
		counter(descCacheHits, float64(k.CacheHit.Count))
		counter(descCacheMisses, float64(k.CacheMiss.Count))
		counter(descCacheHitUs, float64(k.CacheHit.Ns/1000))
		counter(descCacheMissUs, float64(k.CacheMiss.Ns/1000))
		counter(descInsertFailures, float64(k.CacheInsertFailures))
	}
}
