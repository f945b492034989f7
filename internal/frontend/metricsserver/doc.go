// Package metricsserver serves the server's metrics in the Prometheus text
// format at /metrics, with Triton's metric families and labels: per model
// version (labels model and version) the request, inference and execution
// counts, failures by reason, pending requests, cumulative durations and,
// for decoupled models, the time-to-first-response histogram; the host's
// CPU utilization and memory; and the custom metric families backends
// register through the TRITONSERVER_Metric* API.
//
// Each family is a prometheus.Collector that reads the live values when
// scraped (core's counters, the registry's series), so nothing is copied
// between scrapes. Register adds collectors of other subsystems (GPU
// figures, say) to the same endpoint.
package metricsserver
