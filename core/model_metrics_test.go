package core_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/coretest"
	"github.com/tritonhost/tritonhost/core/metrics"
	"github.com/tritonhost/tritonhost/core/serverlog"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// TestModelMetricsSetFirstResponseBuckets: model_metrics sets the buckets
// of a decoupled model's time-to-first-response histogram, as in Triton;
// a metric_control for another family is logged and changes nothing;
// bounds out of order fail the load, naming the field.
func TestModelMetricsSetFirstResponseBuckets(t *testing.T) {
	control := func(family, buckets string) string {
		return fmt.Sprintf(`metric_control [ { metric_identifier { family: "%s" } histogram_options { buckets: [ %s ] } } ]`, family, buckets)
	}
	tests := []struct {
		name    string
		metrics string // inside model_metrics { }
		want    []float64
		log     string
		err     string
	}{
		{"none", "", core.FirstResponseBucketsMs, "", ""},
		{"first response", control(core.FirstResponseFamily, "1, 10, 100"), []float64{1, 10, 100}, "", ""},
		{"another family", control("nv_inference_queue_duration_us", "1, 2"), core.FirstResponseBucketsMs,
			`model "m": model_metrics: metric family 'nv_inference_queue_duration_us' in 'metric_identifier' is not a customizable metric`, ""},
		{"bounds out of order", control(core.FirstResponseFamily, "10, 1"), nil, "",
			`model "m": model_metrics.metric_control[0].histogram_options.buckets: histogram bucket bounds must be strictly ascending`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			logs := &testenv.LogBuffer{}
			p := coretest.NewProvider()
			srv := coretest.Serve(t, core.Options{Backends: p, Logger: serverlog.New(logs), ExplicitModelControl: true},
				coretest.ModelDir{Name: "m", Config: vectorConfig(decoupled, "model_metrics { "+tc.metrics+" }")})
			err := srv.LoadModel("m")
			if tc.err != "" {
				coretest.WantError(t, "load", err, core.CodeInvalidArg, tc.err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			m, err := srv.Model("m", 0)
			if err != nil {
				t.Fatal(err)
			}
			var s metrics.Sample
			m.FirstResponseHistogram().Collect(&s)
			if !slices.Equal(s.Bounds, tc.want) {
				t.Errorf("bounds %v, want %v", s.Bounds, tc.want)
			}
			if tc.log != "" && !strings.Contains(logs.String(), tc.log) {
				t.Errorf("the log does not say %q:\n%s", tc.log, logs.String())
			}
		})
	}
}
