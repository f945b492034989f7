package modelconfig

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/tritonhost/tritonhost/core/configpb"
)

// io is a compact description of an input or output for comparisons.
type io struct {
	name string
	dt   configpb.DataType
	dims []int64
}

func inputsOf(cfg *configpb.ModelConfig) []io {
	var out []io
	for _, in := range cfg.Input {
		out = append(out, io{in.Name, in.DataType, in.Dims})
	}
	return out
}

func outputsOf(cfg *configpb.ModelConfig) []io {
	var out []io
	for _, o := range cfg.Output {
		out = append(out, io{o.Name, o.DataType, o.Dims})
	}
	return out
}

func sameIO(a, b []io) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].name != b[i].name || a[i].dt != b[i].dt || !equalInt64s(a[i].dims, b[i].dims) {
			return false
		}
	}
	return true
}

func equalInt64s(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestParseReadsShippedConfigs(t *testing.T) {
	const (
		i32  = configpb.DataType_TYPE_INT32
		u32  = configpb.DataType_TYPE_UINT32
		fp32 = configpb.DataType_TYPE_FP32
	)
	tests := []struct {
		fixture        string
		name, backend  string
		maxBatch       int32
		decoupled      bool
		dynamicBatcher bool
		inputs         []io
		outputs        []io
		groups         int
	}{
		{
			fixture: "repeat_int32", name: "repeat_int32", backend: "repeat", decoupled: true,
			inputs:  []io{{"IN", i32, []int64{-1}}, {"DELAY", u32, []int64{-1}}, {"WAIT", u32, []int64{1}}},
			outputs: []io{{"OUT", i32, []int64{1}}, {"IDX", u32, []int64{1}}},
		},
		{
			fixture: "square_int32", backend: "square", decoupled: true,
			inputs:  []io{{"IN", i32, []int64{1}}},
			outputs: []io{{"OUT", i32, []int64{1}}},
		},
		{
			fixture: "identity_fp32", backend: "identity", maxBatch: 8, dynamicBatcher: true, groups: 1,
			inputs:  []io{{"INPUT0", fp32, []int64{-1}}},
			outputs: []io{{"OUTPUT0", fp32, []int64{-1}}},
		},
		{
			fixture: "identity_int32", backend: "identity", maxBatch: 8, groups: 1,
			inputs:  []io{{"INPUT0", i32, []int64{-1}}},
			outputs: []io{{"OUTPUT0", i32, []int64{-1}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			cfg := fixtureByName(t, tt.fixture).load(t)
			if cfg.Name != tt.name || cfg.Backend != tt.backend || cfg.MaxBatchSize != tt.maxBatch {
				t.Errorf("name/backend/max_batch_size = %q/%q/%d, want %q/%q/%d",
					cfg.Name, cfg.Backend, cfg.MaxBatchSize, tt.name, tt.backend, tt.maxBatch)
			}
			if got := cfg.GetModelTransactionPolicy().GetDecoupled(); got != tt.decoupled {
				t.Errorf("decoupled = %v, want %v", got, tt.decoupled)
			}
			if got := cfg.GetDynamicBatching() != nil; got != tt.dynamicBatcher {
				t.Errorf("dynamic_batching set = %v, want %v", got, tt.dynamicBatcher)
			}
			if !sameIO(inputsOf(cfg), tt.inputs) {
				t.Errorf("inputs = %v, want %v", inputsOf(cfg), tt.inputs)
			}
			if !sameIO(outputsOf(cfg), tt.outputs) {
				t.Errorf("outputs = %v, want %v", outputsOf(cfg), tt.outputs)
			}
			if len(cfg.InstanceGroup) != tt.groups {
				t.Fatalf("instance groups = %d, want %d", len(cfg.InstanceGroup), tt.groups)
			}
			for _, g := range cfg.InstanceGroup {
				if g.Count != 2 || g.Kind != configpb.ModelInstanceGroup_KIND_CPU {
					t.Errorf("instance group = %v, want count 2 KIND_CPU", g)
				}
			}
		})
	}
}

func TestParseAcceptsEveryFixture(t *testing.T) {
	for _, f := range fixtures {
		t.Run(f.name, func(t *testing.T) {
			f.load(t)
		})
	}
}

func TestParseAcceptsTritonTextSyntax(t *testing.T) {
	tests := []struct {
		name string
		text string
		want *configpb.ModelConfig
	}{
		{"capitalised bool", `model_transaction_policy { decoupled: True }`,
			&configpb.ModelConfig{ModelTransactionPolicy: &configpb.ModelTransactionPolicy{Decoupled: true}}},
		{"short bool", `model_transaction_policy { decoupled: t }`,
			&configpb.ModelConfig{ModelTransactionPolicy: &configpb.ModelTransactionPolicy{Decoupled: true}}},
		{"numeric bool", `model_transaction_policy: { decoupled: 1 }`,
			&configpb.ModelConfig{ModelTransactionPolicy: &configpb.ModelTransactionPolicy{Decoupled: true}}},
		{"False", `model_transaction_policy { decoupled: False }`,
			&configpb.ModelConfig{ModelTransactionPolicy: &configpb.ModelTransactionPolicy{}}},
		{"scalar list", `input { dims: [ -1, 3 ] }`,
			&configpb.ModelConfig{Input: []*configpb.ModelInput{{Dims: []int64{-1, 3}}}}},
		{"message list", `input [ { name: "A" }, { name: "B" } ]`,
			&configpb.ModelConfig{Input: []*configpb.ModelInput{{Name: "A"}, {Name: "B"}}}},
		{"map as list", `parameters [{ key: "K" value: { string_value: "V" } }]`,
			&configpb.ModelConfig{Parameters: map[string]*configpb.ModelParameter{"K": {StringValue: "V"}}}},
		{"map entry with colon", `parameters: { key: "K" value: { string_value: "V" } }`,
			&configpb.ModelConfig{Parameters: map[string]*configpb.ModelParameter{"K": {StringValue: "V"}}}},
		{"comments", "# leading\nname: \"m\" # trailing\n",
			&configpb.ModelConfig{Name: "m"}},
		{"separators", `instance_group [{ count: 2, kind: KIND_CPU; }]`,
			&configpb.ModelConfig{InstanceGroup: []*configpb.ModelInstanceGroup{{Count: 2, Kind: configpb.ModelInstanceGroup_KIND_CPU}}}},
		{"enum by number", `instance_group { kind: 1 }`,
			&configpb.ModelConfig{InstanceGroup: []*configpb.ModelInstanceGroup{{Kind: configpb.ModelInstanceGroup_KIND_GPU}}}},
		{"angle brackets", `response_cache < enable: true >`,
			&configpb.ModelConfig{ResponseCache: &configpb.ModelResponseCache{Enable: true}}},
		{"float suffix", `sequence_batching { direct { minimum_slot_utilization: 0.5f } }`,
			&configpb.ModelConfig{SchedulingChoice: &configpb.ModelConfig_SequenceBatching{SequenceBatching: &configpb.ModelSequenceBatching{
				StrategyChoice: &configpb.ModelSequenceBatching_Direct{Direct: &configpb.ModelSequenceBatching_StrategyDirect{MinimumSlotUtilization: 0.5}}}}}},
		{"CRLF", "name: \"m\"\r\nmax_batch_size: 2\r\n",
			&configpb.ModelConfig{Name: "m", MaxBatchSize: 2}},
		{"empty", ``, &configpb.ModelConfig{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := mustParse(t, tt.text)
			if !proto.Equal(got, tt.want) {
				t.Errorf("Parse(%q) = %v, want %v", tt.text, got, tt.want)
			}
		})
	}
}

func TestParseErrorsNameTheProblem(t *testing.T) {
	tests := []struct {
		name string
		text string
		want []string
	}{
		{"unknown top-level field", "name: \"m\"\nbogus_field: 1", []string{"unknown field", "bogus_field", "line 2"}},
		{"unknown nested field", `input { name: "IN" dimz: [1] }`, []string{"unknown field", "dimz"}},
		{"upper-case bool", `model_transaction_policy { decoupled: TRUE }`, []string{"TRUE"}},
		{"unknown enum name", `input { data_type: TYPE_FOO }`, []string{"TYPE_FOO"}},
		{"repeated singular", `max_batch_size: 1 max_batch_size: 2`, []string{"max_batch_size"}},
		{"int overflow", `max_batch_size: 2147483648`, []string{"2147483648"}},
		{"unterminated message", `input { name: "IN"`, []string{"parse model config"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.text))
			wantErr(t, err, tt.want...)
		})
	}
}

func TestReadFileErrorsNameTheFile(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "config.pbtxt")
	if err := os.WriteFile(bad, []byte("nonsense: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ReadFile(bad)
	wantErr(t, err, bad, "nonsense")

	missing := filepath.Join(dir, "missing", "config.pbtxt")
	_, err = ReadFile(missing)
	if err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("ReadFile(missing) error = %v, want one naming %s", err, missing)
	}
	if errorsIs(err, ErrInvalid) {
		t.Errorf("a missing file is not an invalid configuration: %v", err)
	}
}
