package repocache

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the cache's Prometheus families, labelled by repository
// (the path as given).
type metrics struct {
	bytes      *prometheus.CounterVec
	failures   *prometheus.CounterVec
	duration   *prometheus.HistogramVec
	cacheBytes prometheus.Gauge
}

func newMetrics() *metrics {
	return &metrics{
		bytes: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "tritonhost_repository_download_bytes_total",
			Help: "Bytes downloaded from remote model repositories"}, []string{"repository"}),
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "tritonhost_repository_download_failures_total",
			Help: "Model downloads from remote model repositories that failed"}, []string{"repository"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "tritonhost_repository_download_duration_seconds",
			Help:    "Time a model's download from a remote model repository took, by outcome",
			Buckets: []float64{0.1, 0.5, 1, 5, 15, 60, 300, 900, 1800}}, []string{"repository", "outcome"}),
		cacheBytes: prometheus.NewGauge(prometheus.GaugeOpts{Name: "tritonhost_repository_cache_bytes",
			Help: "Bytes the local copies of remote model repositories and the downloads in progress hold"}),
	}
}

func (m *metrics) fetched(repo string, n int) { m.bytes.WithLabelValues(repo).Add(float64(n)) }
func (m *metrics) failed(repo string)         { m.failures.WithLabelValues(repo).Inc() }
func (m *metrics) took(repo, outcome string, d time.Duration) {
	m.duration.WithLabelValues(repo, outcome).Observe(d.Seconds())
}

// Describe implements prometheus.Collector.
func (m *metrics) Describe(ch chan<- *prometheus.Desc) {
	m.bytes.Describe(ch)
	m.failures.Describe(ch)
	m.duration.Describe(ch)
	m.cacheBytes.Describe(ch)
}

// Collect implements prometheus.Collector.
func (m *metrics) Collect(ch chan<- prometheus.Metric) {
	m.bytes.Collect(ch)
	m.failures.Collect(ch)
	m.duration.Collect(ch)
	m.cacheBytes.Collect(ch)
}

// Collector returns the cache's metrics for a Prometheus registry: bytes
// downloaded, failed downloads, download durations and the cache's size.
func (c *Cache) Collector() prometheus.Collector { return c.metrics }
