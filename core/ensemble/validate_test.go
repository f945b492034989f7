package ensemble_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/coretest"
)

// TestEnsembleLoadErrorsAreTritons: an ensemble that cannot load is
// unavailable with Triton's message as its reason, whole: a model it runs
// missing, a cycle of ensembles, a model it runs invalid or not loaded,
// and a graph that does not fit the configurations of its models.
func TestEnsembleLoadErrorsAreTritons(t *testing.T) {
	t.Parallel()
	typed := func(dt, dims string) string {
		return strings.Replace(ensembleConfig([]string{"IN"}, []string{"OUT"}, []string{step("pre", "INPUT0:IN", "OUTPUT0:OUT")}),
			"TYPE_INT32 dims: [ -1 ] } ]\noutput", dt+" dims: [ "+dims+" ] } ]\noutput", 1)
	}
	for _, tc := range []struct {
		name     string
		ensemble string // the configuration of ensemble "pipe"
		others   []coretest.ModelDir
		failLoad string // a model whose load fails
		upstream string // the model whose own reason ends want (%s)
		want     string
	}{
		{name: "models missing", ensemble: ensembleConfig([]string{"IN"}, []string{"OUT"}, []string{
			step("pre", "INPUT0:IN", "OUTPUT0:a"), step("nope", "INPUT0:a", "OUTPUT0:b"), step("gone", "INPUT0:b", "OUTPUT0:OUT")}),
			want: "ensemble pipe contains models that are not available or ambiguous: gone, nope"},
		{name: "itself as a step", ensemble: ensembleConfig([]string{"IN"}, []string{"OUT"}, []string{step("pipe", "IN:IN", "OUT:OUT")}),
			want: "circular dependency between ensembles: pipe -> ... -> pipe -> pipe"},
		{name: "cycle of ensembles", ensemble: ensembleConfig([]string{"IN"}, []string{"OUT"}, []string{step("other", "IN:IN", "OUT:OUT")}),
			others: []coretest.ModelDir{{Name: "other", Config: ensembleConfig([]string{"IN"}, []string{"OUT"}, []string{step("pipe", "IN:IN", "OUT:OUT")})}},
			want:   "circular dependency between ensembles: pipe -> ... -> other -> pipe"},
		{name: "model invalid", ensemble: ensembleConfig([]string{"IN"}, []string{"OUT"}, []string{step("bad", "INPUT0:IN", "OUTPUT0:OUT")}),
			others:   []coretest.ModelDir{{Name: "bad", Config: `backend: "go" max_batch_size: -1`}},
			upstream: "bad", want: "ensemble 'pipe' depends on 'bad' which is not valid. Model 'bad' failed with error: %s"},
		{name: "model failed to load", ensemble: ensembleConfig([]string{"IN"}, []string{"OUT"}, []string{step("pre", "INPUT0:IN", "OUTPUT0:OUT")}),
			failLoad: "pre", upstream: "pre", want: "ensemble 'pipe' depends on 'pre' which has no loaded version. Model 'pre' loading failed with error: %s"},
		{name: "version not loaded", ensemble: strings.Replace(ensembleConfig([]string{"IN"}, []string{"OUT"}, []string{step("pre", "INPUT0:IN", "OUTPUT0:OUT")}), "model_version: -1", "model_version: 2", 1),
			want: "ensemble 'pipe' depends on 'pre' whose required version 2 is not loaded."},
		{name: "batches more than a step", ensemble: strings.Replace(ensembleConfig([]string{"IN"}, []string{"OUT"}, []string{step("small", "INPUT0:IN", "OUTPUT0:OUT")}), "max_batch_size: 0", "max_batch_size: 8", 1),
			others: []coretest.ModelDir{{Name: "small", Config: coretest.VectorConfig("max_batch_size: 4")}},
			want:   "ensemble pipe allows maximum batch size 8, but it contains model small which only allows maximum batch size to be 4"},
		{name: "no such input", ensemble: ensembleConfig([]string{"IN"}, []string{"OUT"}, []string{step("pre", "NOPE:IN", "OUTPUT0:OUT")}),
			want: "in ensemble pipe, ensemble tensor IN is mapping to non-existing input NOPE in model pre"},
		{name: "input not mapped", ensemble: ensembleConfig([]string{"IN"}, []string{"OUT"}, []string{step("sum", "INPUT0:IN", "OUTPUT0:OUT")}),
			want: "in ensemble pipe, input INPUT1 in model sum is not mapped to any ensemble tensors"},
		{name: "no such output", ensemble: ensembleConfig([]string{"IN"}, []string{"OUT"}, []string{step("pre", "INPUT0:IN", "NOPE:OUT")}),
			want: "in ensemble pipe, ensemble tensor OUT is mapped from non-existing output NOPE in model pre"},
		{name: "data types differ", ensemble: typed("TYPE_FP32", "-1"),
			want: "in ensemble pipe, ensemble tensor IN: inconsistent data type: TYPE_FP32 is inferred from model pipe while TYPE_INT32 is inferred from model pre"},
		{name: "shapes differ", ensemble: typed("TYPE_INT32", "2, 3"),
			want: "in ensemble pipe, ensemble tensor IN: inconsistent shape: [2,3] is inferred from model pipe while [-1] is inferred from model pre"},
		{name: "a step fed by a decoupled step and the inputs", ensemble: ensembleConfig([]string{"IN"}, []string{"OUT"}, []string{
			step("gen", "INPUT0:IN", "OUTPUT0:g"), step("sum", "INPUT0:g, INPUT1:IN", "OUTPUT0:s"), step("pre", "INPUT0:s", "OUTPUT0:OUT")}),
			want: "in ensemble pipe, step of model 'sum' receives inputs originated from different decoupled models"},
		{name: "outputs from a decoupled step and the inputs", ensemble: ensembleConfig([]string{"IN"}, []string{"OUT1", "OUT2"}, []string{
			step("gen", "INPUT0:IN", "OUTPUT0:OUT1"), step("pre", "INPUT0:IN", "OUTPUT0:OUT2")}),
			want: "in ensemble pipe, step of model 'pipe' receives inputs originated from different decoupled models"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := coretest.NewProvider()
			if tc.failLoad != "" {
				p.FailLoad(tc.failLoad, errors.New("no weights"))
			}
			models := append([]coretest.ModelDir{{Name: "pipe", Config: tc.ensemble}, {Name: "pre", Config: vectorConfig()}, sumModel(p), genModel(p)}, tc.others...)
			srv := coretest.Serve(t, core.Options{Backends: p}, models...)
			want := tc.want
			if tc.upstream != "" {
				_, reason := indexReason(t, srv, tc.upstream)
				want = fmt.Sprintf(tc.want, reason)
			}
			state, reason := indexReason(t, srv, "pipe")
			if state != core.ModelUnavailable || reason != want {
				t.Errorf("pipe is %v:\n got %s\nwant %s", state, reason, want)
			}
			_, err := srv.Model("pipe", 0)
			coretest.WantError(t, "Model", err, core.CodeNotFound, "Request for unknown model: 'pipe' has no available versions", want)
			if srv.Ready() {
				t.Errorf("the server is ready though an ensemble failed to load")
			}
		})
	}
}
