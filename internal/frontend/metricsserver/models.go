package metricsserver

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/metrics"
)

// Triton's per-model families. The help texts are ours.
var (
	modelLabels = []string{"model", "version"}

	descSuccess       = prometheus.NewDesc("nv_inference_request_success", "Number of successful inference requests, all batch sizes", modelLabels, nil)
	descFailure       = prometheus.NewDesc("nv_inference_request_failure", "Number of failed inference requests, all batch sizes, by reason", append(modelLabels, "reason"), nil)
	descCount         = prometheus.NewDesc("nv_inference_count", "Number of inferences performed (a batch of n counts n)", modelLabels, nil)
	descExecCount     = prometheus.NewDesc("nv_inference_exec_count", "Number of model executions performed", modelLabels, nil)
	descPending       = prometheus.NewDesc("nv_inference_pending_request_count", "Number of requests received and waiting for the backend, per model", modelLabels, nil)
	descRequestUs     = prometheus.NewDesc("nv_inference_request_duration_us", "Cumulative duration of successful inference requests in microseconds", modelLabels, nil)
	descQueueUs       = prometheus.NewDesc("nv_inference_queue_duration_us", "Cumulative time requests waited in the queue, in microseconds", modelLabels, nil)
	descInputUs       = prometheus.NewDesc("nv_inference_compute_input_duration_us", "Cumulative time spent preparing inputs, in microseconds", modelLabels, nil)
	descInferUs       = prometheus.NewDesc("nv_inference_compute_infer_duration_us", "Cumulative time spent executing the model, in microseconds", modelLabels, nil)
	descOutputUs      = prometheus.NewDesc("nv_inference_compute_output_duration_us", "Cumulative time spent producing outputs, in microseconds", modelLabels, nil)
	descFirstResponse = prometheus.NewDesc("nv_inference_first_response_histogram_ms", "Time from a request's arrival to its first response, in milliseconds (decoupled models)", modelLabels, nil)
	descRestarts      = prometheus.NewDesc("tritonhost_backend_restarts_total", "Restarts of the worker process of a model whose backend runs isolated (--backend-isolation), after it died or hung", modelLabels, nil)
)

// serverFamilies are the names this package's collectors own; backends'
// custom families of these names are left out.
var serverFamilies = map[string]bool{
	"nv_inference_request_success": true, "nv_inference_request_failure": true, "nv_inference_count": true,
	"nv_inference_exec_count": true, "nv_inference_pending_request_count": true, "nv_inference_request_duration_us": true,
	"nv_inference_queue_duration_us": true, "nv_inference_compute_input_duration_us": true,
	"nv_inference_compute_infer_duration_us": true, "nv_inference_compute_output_duration_us": true,
	"nv_inference_first_response_histogram_ms": true, "tritonhost_backend_restarts_total": true,
	"nv_cpu_utilization": true, "nv_cpu_memory_total_bytes": true, "nv_cpu_memory_used_bytes": true,
}

// modelCollector reads each loaded model version's counters when scraped.
type modelCollector struct {
	core *core.Server
}

func newModelCollector(srv *core.Server) *modelCollector { return &modelCollector{core: srv} }

// Describe implements prometheus.Collector.
func (c *modelCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descSuccess, descFailure, descCount, descExecCount, descPending, descRequestUs,
		descQueueUs, descInputUs, descInferUs, descOutputUs, descFirstResponse, descRestarts} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *modelCollector) Collect(ch chan<- prometheus.Metric) {
	for _, series := range seriesOf(c.core.LoadedModels()) {
		name, version := series.name, series.version
		k, restarts := series.counters(nil)
		counter := func(d *prometheus.Desc, v float64, extra ...string) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, append([]string{name, version}, extra...)...)
		}
		us := func(d core.Duration) float64 { return float64(d.Ns / 1000) }
		counter(descSuccess, float64(k.Success.Count))
		for _, r := range core.FailureReasons() {
			counter(descFailure, float64(k.Failures[r]), r.String())
		}
		counter(descCount, float64(k.InferenceCount))
		counter(descExecCount, float64(k.ExecutionCount))
		ch <- prometheus.MustNewConstMetric(descPending, prometheus.GaugeValue, float64(k.Pending), name, version)
		counter(descRequestUs, us(k.Success))
		counter(descQueueUs, us(k.Queue))
		counter(descInputUs, us(k.ComputeInput))
		counter(descInferUs, us(k.ComputeInfer))
		counter(descOutputUs, us(k.ComputeOutput))
		counter(descRestarts, float64(restarts))
		if s, ok := series.firstResponses(); ok {
			ch <- constHistogram(descFirstResponse, &s, name, version)
		}
	}
}

// constHistogram turns a histogram sample into a Prometheus metric.
func constHistogram(d *prometheus.Desc, s *metrics.Sample, labels ...string) prometheus.Metric {
	m, err := customMetric(d, metrics.KindHistogram, s, labels)
	if err != nil {
		return prometheus.NewInvalidMetric(d, err)
	}
	return m
}
