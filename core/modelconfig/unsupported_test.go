package modelconfig

import "testing"

// TestValidateRefusesUnsupportedFields: a field the server does not
// honour, set, fails validation naming the field; left at its default it
// is accepted.
func TestValidateRefusesUnsupportedFields(t *testing.T) {
	tests := []struct {
		name string
		text string // appended to validBase
		want []string
	}{
		{"dynamic batcher preserve_ordering", `dynamic_batching { preserve_ordering: true }`,
			[]string{`model "bad_model"`, "dynamic_batching.preserve_ordering is not supported"}},
		{"oldest sequence batcher preserve_ordering", `sequence_batching { oldest { preserve_ordering: true } }`,
			[]string{`model "bad_model"`, "sequence_batching.oldest.preserve_ordering is not supported"}},
		{"secondary devices", `instance_group [ { kind: KIND_CPU }, { kind: KIND_CPU secondary_devices [ { kind: KIND_NVDLA device_id: 0 } ] } ]`,
			[]string{`model "bad_model"`, "instance_group[1].secondary_devices is not supported"}},
		{"metric tags", `metric_tags { key: "team" value: "infra" }`,
			[]string{`model "bad_model"`, "metric_tags is not supported"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := mustParse(t, validBase+tc.text)
			if err := Normalize(cfg, Defaults{ModelName: "bad_model"}); err != nil {
				t.Fatalf("Normalize: %v", err)
			}
			wantErr(t, Validate(cfg), tc.want...)
		})
	}
	accepted := []string{
		`dynamic_batching { preserve_ordering: false }`,
		`sequence_batching { oldest { preserve_ordering: false } }`,
		`instance_group [ { kind: KIND_CPU secondary_devices [ ] } ]`,
		`parameters { key: "k" value: { string_value: "v" } } optimization { priority: PRIORITY_MAX }`,
	}
	for _, text := range accepted {
		cfg := mustParse(t, validBase+text)
		if err := Normalize(cfg, Defaults{ModelName: "bad_model"}); err != nil {
			t.Fatalf("Normalize(%s): %v", text, err)
		}
		if err := Validate(cfg); err != nil {
			t.Errorf("Validate(%s): %v", text, err)
		}
	}
}
