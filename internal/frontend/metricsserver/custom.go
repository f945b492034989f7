package metricsserver

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tritonhost/tritonhost/core/metrics"
	"github.com/tritonhost/tritonhost/core/serverlog"
)

// customCollector serves the families backends register through the
// TRITONSERVER_Metric* API, read from the registry (whose series read the
// values backends keep in C memory) when scraped. The families come and
// go with the backends, so the collector is unchecked: it describes
// nothing ahead.
type customCollector struct {
	reg    *metrics.Registry
	log    *serverlog.Logger
	warned sync.Map // family name -> struct{}: refusals already logged
}

func newCustomCollector(reg *metrics.Registry, log *serverlog.Logger) *customCollector {
	return &customCollector{reg: reg, log: log}
}

// NewCustomCollector returns a collector of the backends' own families in
// reg, as the endpoint serves them (Options.Custom): for a process that
// gathers them apart from the endpoint (the worker of an isolated
// backend, whose server serves them).
func NewCustomCollector(reg *metrics.Registry, log *serverlog.Logger) prometheus.Collector {
	return newCustomCollector(reg, log)
}

// Describe implements prometheus.Collector (unchecked: nothing).
func (c *customCollector) Describe(chan<- *prometheus.Desc) {}

// Collect implements prometheus.Collector.
func (c *customCollector) Collect(ch chan<- prometheus.Metric) {
	for _, f := range c.reg.Gather() {
		if serverFamilies[f.Name] {
			c.warnOnce(f.Name, "a backend's metric family %q has the name of one of the server's; it is not served", f.Name)
			continue
		}
		descs := map[string]*prometheus.Desc{} // by label names
		for i := range f.Series {
			s := &f.Series[i]
			names, values := make([]string, len(s.Labels)), make([]string, len(s.Labels))
			key := ""
			for j, l := range s.Labels {
				names[j], values[j] = l.Name, l.Value
				key += l.Name + ","
			}
			d := descs[key]
			if d == nil {
				d = prometheus.NewDesc(f.Name, f.Help, names, nil)
				descs[key] = d
			}
			m, err := customMetric(d, f.Kind, &s.Sample, values)
			if err != nil {
				c.warnOnce(f.Name, "a series of the metric family %q cannot be served: %v", f.Name, err)
				continue
			}
			ch <- m
		}
	}
}

func customMetric(d *prometheus.Desc, kind metrics.Kind, s *metrics.Sample, values []string) (prometheus.Metric, error) {
	switch kind {
	case metrics.KindCounter:
		return prometheus.NewConstMetric(d, prometheus.CounterValue, s.Value, values...)
	case metrics.KindGauge:
		return prometheus.NewConstMetric(d, prometheus.GaugeValue, s.Value, values...)
	}
	buckets := make(map[float64]uint64, len(s.Bounds))
	var cum uint64
	for i, b := range s.Bounds {
		cum += s.Counts[i]
		buckets[b] = cum
	}
	if len(s.Counts) > len(s.Bounds) {
		cum += s.Counts[len(s.Bounds)]
	}
	return prometheus.NewConstHistogram(d, cum, s.Sum, buckets, values...)
}

func (c *customCollector) warnOnce(family, format string, args ...any) {
	if _, seen := c.warned.LoadOrStore(family, struct{}{}); !seen {
		c.log.Warnf(format, args...)
	}
}
