package ensemble_test

import (
	"strconv"
	"testing"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/coretest"
)

// taggedModel is a vector model whose every response is one value, tag,
// so that a test sees which of the models of one name ran.
func taggedModel(name string, tag int) coretest.ModelDir {
	return coretest.ModelDir{Name: name, Config: vectorConfig(`parameters { key: "tag" value: { string_value: "` + strconv.Itoa(tag) + `" } }`)}
}

// answerTag answers a request of a taggedModel with its tag.
func answerTag() coretest.Behaviour {
	return coretest.Answering(coretest.Reply(func(r *core.Request) *core.Response {
		tag, _ := strconv.Atoi(r.Model().Config().GetParameters()["tag"].GetStringValue())
		return &core.Response{Outputs: []core.Output{{Name: "OUTPUT0", DataType: core.TypeInt32, Shape: []int64{1},
			Data: input("x", int32(tag)).Buffers[0]}}}
	}))
}

// runs is an ensemble whose one step runs model.
func runs(name, model string) coretest.ModelDir {
	return coretest.ModelDir{Name: name, Config: ensembleConfig([]string{"IN"}, []string{"OUT"}, []string{step(model, "INPUT0:IN", "OUTPUT0:OUT")})}
}

func TestNamespacingEnsembleSteps(t *testing.T) {
	p := coretest.NewProvider().Set("m", answerTag()).Set("only_a", answerTag())
	a := coretest.WriteRepository(t, taggedModel("m", 1), taggedModel("only_a", 3), runs("ens_a", "m"))
	b := coretest.WriteRepository(t, taggedModel("m", 2), runs("ens_b", "m"))
	srv := coretest.Serve(t, core.Options{Backends: p, ModelNamespacing: true, ModelRepositories: []string{a, b}},
		runs("ens_c", "only_a"), runs("ens_bad", "m"))
	c := srv.Repositories()[2]

	for _, tc := range []struct {
		ensemble string
		tag      int32 // 0: the ensemble does not load
		reason   string
	}{
		{ensemble: "ens_a", tag: 1}, // its own repository's m
		{ensemble: "ens_b", tag: 2}, // its own repository's m
		{ensemble: "ens_c", tag: 3}, // the only only_a, in another repository
		{ensemble: "ens_bad", tag: 0, // no m of its own, and two elsewhere
			reason: "ensemble " + c + "::ens_bad contains models that are not available or ambiguous: m"},
	} {
		t.Run(tc.ensemble, func(t *testing.T) {
			if tc.tag == 0 {
				readiness, reason := indexReason(t, srv, tc.ensemble)
				if readiness == core.ModelReady || reason != tc.reason {
					t.Errorf("index: %v %q, want UNAVAILABLE %q", readiness, reason, tc.reason)
				}
				return
			}
			resp := coretest.Infer(t, srv, coretest.Request(tc.ensemble, "1", input("IN", 0))).Single(t)
			if got := ints(t, resp, "OUT"); len(got) != 1 || got[0] != tc.tag {
				t.Errorf("OUT = %v, want [%d]", got, tc.tag)
			}
		})
	}
}
