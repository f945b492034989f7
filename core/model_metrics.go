package core

import (
	"github.com/tritonhost/tritonhost/core/configpb"
	"github.com/tritonhost/tritonhost/core/metrics"
)

// FirstResponseFamily is the metric family of a decoupled model's
// time-to-first-response histogram, the one family whose buckets a model
// configuration's model_metrics may set, as in Triton.
const FirstResponseFamily = "nv_inference_first_response_histogram_ms"

// firstResponseHistogram returns the time-to-first-response histogram a
// version with configuration cfg starts with: bucket bounds
// FirstResponseBucketsMs, or those of the model_metrics metric_control for
// FirstResponseFamily (the last one, when several name it), as Triton's
// MetricReporterConfig sets them. A metric_control for any other family is
// logged and changes nothing, as in Triton; bounds that are not strictly
// ascending fail the load, naming the field.
func (m *Model) firstResponseHistogram(cfg *configpb.ModelConfig) (*metrics.Histogram, error) {
	bounds := FirstResponseBucketsMs
	for i, mc := range cfg.GetModelMetrics().GetMetricControl() {
		family := mc.GetMetricIdentifier().GetFamily()
		if family != FirstResponseFamily {
			m.log.Warnf("model %q: model_metrics: metric family '%s' in 'metric_identifier' is not a customizable metric; its buckets are left as they are", m.name, family)
			continue
		}
		if _, err := metrics.CheckBounds(mc.GetHistogramOptions().GetBuckets()); err != nil {
			return nil, Errorf(CodeInvalidArg, "model %q: model_metrics.metric_control[%d].histogram_options.buckets: %v", m.name, i, err)
		}
		bounds = mc.GetHistogramOptions().GetBuckets()
	}
	h, err := metrics.NewHistogram(bounds)
	if err != nil {
		return nil, Errorf(CodeInternal, "model %q: first-response histogram: %v", m.name, err)
	}
	return h, nil
}
