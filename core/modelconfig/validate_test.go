package modelconfig

import (
	"testing"

	"github.com/tritonhost/tritonhost/core/configpb"
)

func TestValidateAcceptsNormalizedFixtures(t *testing.T) {
	for _, f := range fixtures {
		if !f.valid {
			continue
		}
		t.Run(f.name, func(t *testing.T) {
			if err := Validate(f.normalized(t)); err != nil {
				t.Errorf("Validate: %v", err)
			}
		})
	}
}

// validBase is a valid model; error cases append fields to it or replace it.
const validBase = `
name: "bad_model"
backend: "identity"
max_batch_size: 4
input [{ name: "IN" data_type: TYPE_FP32 dims: [ 2, 3 ] }]
output [{ name: "OUT" data_type: TYPE_FP32 dims: [ 6 ] }]
`

func TestValidateErrorsNameModelAndField(t *testing.T) {
	const model = `model "bad_model"`
	tests := []struct {
		name  string
		text  string // appended to validBase unless full is set
		full  bool
		gpus  []int
		want  []string
		fixup func(*configpb.ModelConfig) // applied after Normalize
	}{
		// Model level.
		{name: "negative max_batch_size", text: `name: "bad_model" backend: "b" max_batch_size: -1`, full: true,
			want: []string{model, "max_batch_size", "-1"}},
		{name: "missing backend", text: `name: "bad_model" platform: "mystery"`, full: true,
			want: []string{model, "backend", "must be set"}},
		{name: "backend/platform mismatch", text: `name: "bad_model" backend: "onnxruntime" platform: "tensorrt_plan"`, full: true,
			want: []string{model, "platform", "onnxruntime"}},
		{name: "decoupled with response cache", text: `model_transaction_policy { decoupled: true } response_cache { enable: true }`,
			want: []string{model, "response_cache", "decoupled"}},

		// Inputs and outputs.
		{name: "input without data_type", text: `name: "bad_model" backend: "b" input [{ name: "IN" dims: [ -1 ] }]`, full: true,
			want: []string{model, `input "IN": data_type`, "must be set"}},
		{name: "input without name", text: `input [{ data_type: TYPE_INT32 dims: [ 1 ] }]`,
			want: []string{model, "input[1]: name"}},
		{name: "duplicate input", text: `input [{ name: "IN" data_type: TYPE_INT32 dims: [ 1 ] }]`,
			want: []string{model, `input "IN"`, "more than once"}},
		{name: "input without dims", text: `input [{ name: "X" data_type: TYPE_INT32 }]`,
			want: []string{model, `input "X": dims`, "must be set"}},
		{name: "zero dim", text: `input [{ name: "X" data_type: TYPE_INT32 dims: [ 2, 0 ] }]`,
			want: []string{model, `input "X": dims[1]`, "got 0"}},
		{name: "dim below -1", text: `output [{ name: "Y" data_type: TYPE_INT32 dims: [ -2 ] }]`,
			want: []string{model, `output "Y": dims[0]`, "-2"}},
		{name: "unknown data type", text: `output [{ name: "Y" data_type: 42 dims: [ 1 ] }]`,
			want: []string{model, `output "Y": data_type`, "42"}},
		{name: "reshape count mismatch", text: `input [{ name: "X" data_type: TYPE_INT32 dims: [ 2, 3 ] reshape { shape: [ 5 ] } }]`,
			want: []string{model, `input "X": reshape`, "element count"}},
		{name: "reshape variable runs mismatch", text: `input [{ name: "X" data_type: TYPE_INT32 dims: [ 2, -1, 3 ] reshape { shape: [ 3, -1, 2 ] } }]`,
			want: []string{model, `input "X": reshape`, "element count"}},
		{name: "reshape runs that overflow", text: `input [{ name: "X" data_type: TYPE_INT32 dims: [ -1, 4294967296, 4294967296 ] reshape { shape: [ -1, 8589934592, 2147483648 ] } }]`,
			want: []string{model, `input "X": reshape`, "64-bit"}},
		{name: "reshape variable count mismatch", text: `input [{ name: "X" data_type: TYPE_INT32 dims: [ -1, -1 ] reshape { shape: [ -1 ] } }]`,
			want: []string{model, `input "X": reshape`, "variable-size"}},
		{name: "empty reshape when not batching", text: `name: "bad_model" backend: "b" input [{ name: "X" data_type: TYPE_INT32 dims: [ 1 ] reshape {} }]`, full: true,
			want: []string{model, `input "X": reshape`, "scalar"}},
		{name: "format needs 3 dims", text: `input [{ name: "X" data_type: TYPE_FP32 format: FORMAT_NHWC dims: [ 2, 2 ] }]`,
			want: []string{model, `input "X": dims`, "FORMAT_NHWC"}},
		{name: "shape tensor outside TensorRT", text: `input [{ name: "X" data_type: TYPE_INT32 dims: [ 1 ] is_shape_tensor: true }]`,
			want: []string{model, `input "X": is_shape_tensor`}},
		{name: "non-linear IO outside TensorRT", text: `output [{ name: "Y" data_type: TYPE_INT32 dims: [ 1 ] is_non_linear_format_io: true }]`,
			want: []string{model, `output "Y": is_non_linear_format_io`}},

		// Batch inputs and outputs.
		{name: "batch input with two sources", text: `batch_input { kind: BATCH_ELEMENT_COUNT target_name: "T" data_type: TYPE_INT32 source_input: [ "IN", "IN" ] }`,
			want: []string{model, "batch_input[0].source_input", "got 2"}},
		{name: "batch input unknown source", text: `batch_input { target_name: "T" data_type: TYPE_FP32 source_input: "NOPE" }`,
			want: []string{model, "batch_input[0].source_input", "NOPE"}},
		{name: "batch input data type", text: `batch_input { target_name: "T" data_type: TYPE_INT64 source_input: "IN" }`,
			want: []string{model, "batch_input[0].data_type", "TYPE_INT64"}},
		{name: "batch output unknown target", text: `batch_output { target_name: "NOPE" source_input: "IN" }`,
			want: []string{model, "batch_output[0].target_name", "NOPE"}},

		// Dynamic batching.
		{name: "preferred size above max", text: `dynamic_batching { preferred_batch_size: [ 8 ] }`,
			want: []string{model, "dynamic_batching.preferred_batch_size", "8"}},
		{name: "preferred size not positive", text: `dynamic_batching { preferred_batch_size: [ 0 ] }`,
			want: []string{model, "dynamic_batching.preferred_batch_size", "positive"}},
		{name: "default priority out of range", text: `dynamic_batching { priority_levels: 2 default_priority_level: 3 }`,
			want: []string{model, "dynamic_batching.default_priority_level", "[1, 2]"}},
		{name: "priority queue level out of range", text: `dynamic_batching { priority_levels: 2 default_priority_level: 1 priority_queue_policy { key: 5 value {} } }`,
			want: []string{model, "dynamic_batching.priority_queue_policy", "5"}},
		{name: "preserve ordering with priorities", text: `dynamic_batching { preserve_ordering: true priority_levels: 2 default_priority_level: 1 }`,
			want: []string{model, "dynamic_batching.priority_levels", "preserve_ordering"}},
		{name: "preserve ordering with DELAY", text: `dynamic_batching { preserve_ordering: true default_queue_policy { timeout_action: DELAY default_timeout_microseconds: 10 } }`,
			want: []string{model, "default_queue_policy.timeout_action", "DELAY"}},

		// Sequence batching.
		{name: "sequence with response cache", text: `sequence_batching {} response_cache { enable: true }`,
			want: []string{model, "response_cache", "sequence"}},
		{name: "control input without name", text: `sequence_batching { control_input { control { kind: CONTROL_SEQUENCE_START int32_false_true: [ 0, 1 ] } } }`,
			want: []string{model, "sequence_batching.control_input[0].name"}},
		{name: "control without values", text: `sequence_batching { control_input { name: "S" control { kind: CONTROL_SEQUENCE_START } } }`,
			want: []string{model, `control_input "S": CONTROL_SEQUENCE_START`, "exactly one"}},
		{name: "control with one value", text: `sequence_batching { control_input { name: "S" control { kind: CONTROL_SEQUENCE_END int32_false_true: [ 1 ] } } }`,
			want: []string{model, `CONTROL_SEQUENCE_END.int32_false_true`, "2 entries"}},
		{name: "control twice", text: `sequence_batching { control_input { name: "S" control { kind: CONTROL_SEQUENCE_READY bool_false_true: [ false, true ] } } control_input { name: "T" control { kind: CONTROL_SEQUENCE_READY bool_false_true: [ false, true ] } } }`,
			want: []string{model, `control_input "S": CONTROL_SEQUENCE_READY`, `"T"`}},
		{name: "corrid float", text: `sequence_batching { control_input { name: "C" control { kind: CONTROL_SEQUENCE_CORRID data_type: TYPE_FP32 } } }`,
			want: []string{model, `CONTROL_SEQUENCE_CORRID.data_type`, "TYPE_FP32"}},
		{name: "slot utilization above 1", text: `sequence_batching { direct { minimum_slot_utilization: 1.5 } }`,
			want: []string{model, "sequence_batching.direct.minimum_slot_utilization", "1.5"}},
		{name: "oldest preferred above max", text: `sequence_batching { oldest { preferred_batch_size: [ 9 ] } }`,
			want: []string{model, "sequence_batching.oldest.preferred_batch_size", "9"}},

		// Metrics.
		{name: "metric control without buckets", text: `model_metrics { metric_control { metric_identifier { family: "f" } histogram_options {} } }`,
			want: []string{model, "model_metrics.metric_control[0].histogram_options.buckets"}},

		// Instance groups.
		{name: "CPU group listing GPUs", text: `instance_group { name: "g" gpus: [ 0 ] }`, gpus: []int{1},
			want: []string{model, `instance_group "g": gpus`, "KIND_CPU"}},
		{name: "profile outside TensorRT", text: `instance_group { name: "g" kind: KIND_CPU profile: [ "0" ] }`,
			want: []string{model, `instance_group "g": profile`}},
		{name: "zero count after normalize", text: `instance_group { name: "g" kind: KIND_CPU }`,
			fixup: func(c *configpb.ModelConfig) { c.InstanceGroup[0].Count = 0 },
			want:  []string{model, `instance_group "g": count`, ">= 1"}},
		{name: "unresolved KIND_AUTO", text: `instance_group { name: "g" kind: KIND_CPU }`,
			fixup: func(c *configpb.ModelConfig) { c.InstanceGroup[0].Kind = kindAuto },
			want:  []string{model, `instance_group "g": kind`, "KIND_AUTO"}},
		{name: "GPU group without GPUs", text: `instance_group { name: "g" kind: KIND_CPU }`,
			fixup: func(c *configpb.ModelConfig) { c.InstanceGroup[0].Kind = kindGPU },
			want:  []string{model, `instance_group "g": gpus`, "KIND_GPU"}},
		{name: "no instance groups", text: ``,
			fixup: func(c *configpb.ModelConfig) { c.InstanceGroup = nil },
			want:  []string{model, "instance_group"}},
		{name: "no version policy", text: ``,
			fixup: func(c *configpb.ModelConfig) { c.VersionPolicy = nil },
			want:  []string{model, "version_policy"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text := tt.text
			if !tt.full {
				text = validBase + text
			}
			cfg := mustParse(t, text)
			if err := Normalize(cfg, Defaults{ModelName: "bad_model", GPUs: tt.gpus}); err != nil {
				t.Fatalf("Normalize: %v", err)
			}
			if tt.fixup != nil {
				tt.fixup(cfg)
			}
			wantErr(t, Validate(cfg), tt.want...)
		})
	}
}

func TestValidateRejectsMissingConfigAndName(t *testing.T) {
	wantErr(t, Validate(nil), "missing")
	wantErr(t, Validate(&configpb.ModelConfig{Backend: "b"}), "name", "must be set")
}

func TestValidateAcceptsReshapeVariants(t *testing.T) {
	tests := []string{
		`input [{ name: "X" data_type: TYPE_INT32 dims: [ 2, 4, -1, 6 ] reshape { shape: [ 8, -1, 1, 6 ] } }]`,
		`input [{ name: "X" data_type: TYPE_INT32 dims: [ 1 ] reshape {} }]`, // scalar when batching
		`input [{ name: "X" data_type: TYPE_INT32 dims: [ 3, 2 ] reshape { shape: [ 6 ] } }]`,
	}
	for _, text := range tests {
		cfg := mustParse(t, validBase+text)
		if err := Normalize(cfg, Defaults{ModelName: "bad_model"}); err != nil {
			t.Fatal(err)
		}
		if err := Validate(cfg); err != nil {
			t.Errorf("Validate(%s): %v", text, err)
		}
	}
}
