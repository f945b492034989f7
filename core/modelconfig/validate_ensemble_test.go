package modelconfig

import (
	"errors"
	"strings"
	"testing"
)

// pipeline is a valid ensemble: IN -> step "pre" -> mid -> step "post" -> OUT.
const pipeline = `
name: "pipe"
platform: "ensemble"
max_batch_size: 0
input [ { name: "IN" data_type: TYPE_INT32 dims: [ 1 ] } ]
output [ { name: "OUT" data_type: TYPE_INT32 dims: [ 1 ] } ]
`

// steps returns the ensemble_scheduling of pipeline with the given steps.
func steps(s ...string) string {
	return "ensemble_scheduling { step [ " + strings.Join(s, ", ") + " ] }"
}

const (
	preStep  = `{ model_name: "pre" model_version: -1 input_map { key: "INPUT0" value: "IN" } output_map { key: "OUTPUT0" value: "mid" } }`
	postStep = `{ model_name: "post" model_version: -1 input_map { key: "IN" value: "mid" } output_map { key: "OUT" value: "OUT" } }`
)

func TestValidateAcceptsAnEnsemble(t *testing.T) {
	cfg := mustParse(t, pipeline+steps(preStep, postStep))
	if err := Normalize(cfg, Defaults{ModelName: "pipe"}); err != nil {
		t.Fatal(err)
	}
	if err := Validate(cfg); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	if len(cfg.GetInstanceGroup()) != 0 || cfg.GetOptimization() != nil {
		t.Errorf("Normalize gave the ensemble instance groups %v or optimization %v; Triton gives it neither", cfg.GetInstanceGroup(), cfg.GetOptimization())
	}
}

// TestValidateRefusesEnsemblesAsTritonDoes compares the whole message with
// Triton's text (ValidateModelConfig, ValidateEnsembleSchedulingConfig).
func TestValidateRefusesEnsemblesAsTritonDoes(t *testing.T) {
	for _, tc := range []struct {
		name, config, want string
	}{
		{"backend on an ensemble", pipeline + `backend: "identity"` + steps(preStep, postStep),
			"Ensemble model 'pipe' must have platform type 'ensemble' and empty backend type"},
		{"ensemble without scheduling", pipeline,
			"ensemble scheduling must be set for ensemble pipe whose platform is ensemble"},
		{"scheduling on another platform", strings.Replace(pipeline, `platform: "ensemble"`, `backend: "identity"`, 1) + steps(preStep, postStep),
			"ensemble scheduling cannot be set for model 'pipe' whose platform is not ensemble"},
		{"instance group", pipeline + `instance_group [ { kind: KIND_CPU } ]` + steps(preStep, postStep),
			"instance group should not be specified for ensemble 'pipe'"},
		{"optimization", pipeline + `optimization { input_pinned_memory { enable: true } }` + steps(preStep, postStep),
			"optimization should not be specified for ensemble 'pipe'"},
		{"warmup", pipeline + `model_warmup [ { name: "w" batch_size: 1 } ]` + steps(preStep, postStep),
			"model_warmup can not be specified for ensemble 'pipe'"},
		{"no step", pipeline + `ensemble_scheduling { }`,
			"must specify 'step' for ensemble 'pipe'"},
		{"step without model", pipeline + steps(preStep, `{ input_map { key: "IN" value: "mid" } output_map { key: "OUT" value: "OUT" } }`),
			"must specify 'model_name' in step 1 of ensemble 'pipe'"},
		{"step without input map", pipeline + steps(`{ model_name: "pre" output_map { key: "OUTPUT0" value: "mid" } }`, postStep),
			"must specify 'input_map' in step 0 of ensemble 'pipe'"},
		{"step without output map", pipeline + steps(`{ model_name: "pre" input_map { key: "INPUT0" value: "IN" } }`, postStep),
			"must specify 'output_map' in step 0 of ensemble 'pipe'"},
		{"tensor written twice", pipeline + steps(preStep, `{ model_name: "pre2" input_map { key: "INPUT0" value: "IN" } output_map { key: "OUTPUT0" value: "mid" } }`, postStep),
			"ensemble tensor 'mid' can appear in an output map only once for ensemble 'pipe' step 1"},
		{"input not mapped", strings.Replace(pipeline, `output [`, `input [ { name: "EXTRA" data_type: TYPE_INT32 dims: [ 1 ] } ] output [`, 1) + steps(preStep, postStep),
			"ensemble input 'EXTRA' for ensemble pipe' is not used"},
		{"output not mapped", pipeline + `output [ { name: "OUT2" data_type: TYPE_INT32 dims: [ 1 ] } ]` + steps(preStep, postStep),
			"ensemble output 'OUT2' for ensemble pipe' is not used"},
		{"output unreachable", pipeline + steps(preStep, `{ model_name: "post" input_map [ { key: "A" value: "mid" }, { key: "B" value: "lost" } ] output_map { key: "OUT" value: "OUT" } }`),
			"output 'OUT' for ensemble 'pipe' is not written: at least one of its depending tensors, 'lost', is not connected"},
		{"cycle between steps", pipeline + steps(
			`{ model_name: "pre" input_map [ { key: "INPUT0" value: "IN" }, { key: "INPUT1" value: "back" } ] output_map { key: "OUTPUT0" value: "mid" } }`,
			`{ model_name: "post" input_map { key: "IN" value: "mid" } output_map [ { key: "OUT" value: "OUT" }, { key: "BACK" value: "back" } ] }`),
			"output 'OUT' for ensemble 'pipe' is not written: at least one of its depending tensors, 'back', is not connected"},
		{"output written by nothing", pipeline + steps(`{ model_name: "pre" input_map { key: "INPUT0" value: "IN" } output_map { key: "OUTPUT0" value: "mid" } }`,
			`{ model_name: "post" input_map { key: "IN" value: "mid" } output_map { key: "X" value: "x" } }`),
			"ensemble output 'OUT' for ensemble pipe' is not used"},
		{"tensor unused", pipeline + steps(`{ model_name: "pre" input_map { key: "INPUT0" value: "IN" } output_map [ { key: "OUTPUT0" value: "mid" }, { key: "OUTPUT1" value: "spare" } ] }`, postStep),
			"ensemble tensor 'spare' is unused in ensemble 'pipe'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := mustParse(t, tc.config)
			if err := Normalize(cfg, Defaults{ModelName: "pipe"}); err != nil {
				t.Fatalf("Normalize: %v", err)
			}
			err := Validate(cfg)
			if err == nil || err.Error() != tc.want {
				t.Fatalf("Validate:\n got %v\nwant %s", err, tc.want)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("error %q does not wrap ErrInvalid", err)
			}
		})
	}
}
