package modelconfig

import (
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/tritonhost/tritonhost/core/configpb"
)

const (
	kindAuto  = configpb.ModelInstanceGroup_KIND_AUTO
	kindGPU   = configpb.ModelInstanceGroup_KIND_GPU
	kindCPU   = configpb.ModelInstanceGroup_KIND_CPU
	kindModel = configpb.ModelInstanceGroup_KIND_MODEL
)

func TestNormalizeFillsTritonDefaults(t *testing.T) {
	cfg := fixtureByName(t, "repeat_int32").normalized(t)

	if got := cfg.GetVersionPolicy().GetLatest().GetNumVersions(); got != 1 {
		t.Errorf("version_policy.latest.num_versions = %d, want 1", got)
	}
	opt := cfg.GetOptimization()
	if !opt.GetInputPinnedMemory().GetEnable() || !opt.GetOutputPinnedMemory().GetEnable() {
		t.Errorf("optimization = %v, want both pinned-memory buffers enabled", opt)
	}
	want := []*configpb.ModelInstanceGroup{{Name: "repeat_int32", Kind: kindCPU, Count: 1}}
	if !equalGroups(cfg.InstanceGroup, want) {
		t.Errorf("instance_group = %v, want %v", cfg.InstanceGroup, want)
	}
	if cfg.Runtime != "" || cfg.Platform != "" || cfg.DefaultModelFilename != "" {
		t.Errorf("runtime/platform/default_model_filename = %q/%q/%q, want all empty for a custom backend",
			cfg.Runtime, cfg.Platform, cfg.DefaultModelFilename)
	}
}

func TestNormalizeNameComesFromDirectory(t *testing.T) {
	cfg := fixtureByName(t, "square_int32").normalized(t)
	if cfg.Name != "square_int32" {
		t.Errorf("name = %q, want the directory name square_int32", cfg.Name)
	}
}

func TestNormalizeKeepsExplicitSettings(t *testing.T) {
	cfg := mustParse(t, `
		backend: "b" max_batch_size: 8
		version_policy { all {} }
		optimization { input_pinned_memory { enable: false } }
		dynamic_batching { preferred_batch_size: [ 2 ] }`)
	if err := Normalize(cfg, Defaults{ModelName: "m"}); err != nil {
		t.Fatal(err)
	}
	if cfg.GetVersionPolicy().GetAll() == nil {
		t.Errorf("version_policy = %v, want all{} kept", cfg.GetVersionPolicy())
	}
	if cfg.GetOptimization().GetInputPinnedMemory().GetEnable() {
		t.Error("input_pinned_memory.enable = true, want the explicit false kept")
	}
	if !cfg.GetOptimization().GetOutputPinnedMemory().GetEnable() {
		t.Error("output_pinned_memory.enable = false, want the default true")
	}
	if got := cfg.GetDynamicBatching().GetPreferredBatchSize(); len(got) != 1 || got[0] != 2 {
		t.Errorf("preferred_batch_size = %v, want [2] kept", got)
	}
}

func TestNormalizeSchedulerDefaults(t *testing.T) {
	tests := []struct {
		name string
		text string
		want func(*configpb.ModelConfig) bool
	}{
		{"dynamic batching prefers max_batch_size", `backend: "b" max_batch_size: 8 dynamic_batching {}`,
			func(c *configpb.ModelConfig) bool {
				p := c.GetDynamicBatching().GetPreferredBatchSize()
				return len(p) == 1 && p[0] == 8
			}},
		{"no preferred size without batching", `backend: "b" dynamic_batching {}`,
			func(c *configpb.ModelConfig) bool { return len(c.GetDynamicBatching().GetPreferredBatchSize()) == 0 }},
		{"sequence idle default", `backend: "b" sequence_batching {}`,
			func(c *configpb.ModelConfig) bool {
				return c.GetSequenceBatching().GetMaxSequenceIdleMicroseconds() == 1000000
			}},
		{"sequence idle kept", `backend: "b" sequence_batching { max_sequence_idle_microseconds: 7 }`,
			func(c *configpb.ModelConfig) bool {
				return c.GetSequenceBatching().GetMaxSequenceIdleMicroseconds() == 7
			}},
		{"oldest prefers max_batch_size", `backend: "b" max_batch_size: 4 sequence_batching { oldest {} }`,
			func(c *configpb.ModelConfig) bool {
				p := c.GetSequenceBatching().GetOldest().GetPreferredBatchSize()
				return len(p) == 1 && p[0] == 4
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := mustParse(t, tt.text)
			if err := Normalize(cfg, Defaults{ModelName: "m"}); err != nil {
				t.Fatal(err)
			}
			if !tt.want(cfg) {
				t.Errorf("unexpected result: %v", cfg)
			}
		})
	}
}

func TestNormalizeBackendFields(t *testing.T) {
	tests := []struct {
		name, model, text           string
		backend, platform, filename string
	}{
		{"custom backend untouched", "m", `backend: "repeat"`, "repeat", "", ""},
		{"backend from model name", "add.identity", ``, "identity", "", "model.identity"},
		{"onnx from platform", "m", `platform: "onnxruntime_onnx"`, "onnxruntime", "onnxruntime_onnx", "model.onnx"},
		{"onnx from file", "m", `default_model_filename: "model.onnx"`, "onnxruntime", "onnxruntime_onnx", "model.onnx"},
		{"tensorrt from backend", "m", `backend: "tensorrt"`, "tensorrt", "tensorrt_plan", "model.plan"},
		{"tensorflow from file", "m", `default_model_filename: "model.savedmodel"`, "tensorflow", "tensorflow_savedmodel", "model.savedmodel"},
		{"pytorch from backend", "m", `backend: "pytorch"`, "pytorch", "pytorch_libtorch", "model.pt"},
		{"python file", "m", `backend: "python"`, "python", "", "model.py"},
		{"openvino file", "m", `backend: "openvino"`, "openvino", "", "model.xml"},
		{"unknown platform left for Validate", "m", `platform: "mystery"`, "", "mystery", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := mustParse(t, tt.text)
			if err := Normalize(cfg, Defaults{ModelName: tt.model}); err != nil {
				t.Fatal(err)
			}
			if cfg.Backend != tt.backend || cfg.Platform != tt.platform || cfg.DefaultModelFilename != tt.filename {
				t.Errorf("backend/platform/default_model_filename = %q/%q/%q, want %q/%q/%q",
					cfg.Backend, cfg.Platform, cfg.DefaultModelFilename, tt.backend, tt.platform, tt.filename)
			}
		})
	}
}

func TestNormalizeInstanceGroups(t *testing.T) {
	tests := []struct {
		name      string
		backend   string
		groups    string // instance_group text, may be empty
		gpus      []int
		preferred []*configpb.ModelInstanceGroup
		want      []*configpb.ModelInstanceGroup
	}{
		{name: "default on CPU-only server",
			want: []*configpb.ModelInstanceGroup{{Name: "m", Kind: kindCPU, Count: 1}}},
		{name: "default on GPU server uses every GPU", gpus: []int{1, 0, 1},
			want: []*configpb.ModelInstanceGroup{{Name: "m", Kind: kindGPU, Count: 1, Gpus: []int32{0, 1}}}},
		{name: "default CPU count for onnxruntime", backend: "onnxruntime",
			want: []*configpb.ModelInstanceGroup{{Name: "m", Kind: kindCPU, Count: 2}}},
		{name: "unnamed groups get model_index", groups: `instance_group [{ kind: KIND_CPU }, { name: "x" kind: KIND_CPU }, { kind: KIND_CPU count: 3 }]`,
			want: []*configpb.ModelInstanceGroup{{Name: "m_0", Kind: kindCPU, Count: 1}, {Name: "x", Kind: kindCPU, Count: 1}, {Name: "m_2", Kind: kindCPU, Count: 3}}},
		{name: "negative count becomes 1", groups: `instance_group { kind: KIND_CPU count: -4 }`,
			want: []*configpb.ModelInstanceGroup{{Name: "m_0", Kind: kindCPU, Count: 1}}},
		{name: "auto without GPUs is CPU", groups: `instance_group { count: 2 }`,
			want: []*configpb.ModelInstanceGroup{{Name: "m_0", Kind: kindCPU, Count: 2}}},
		{name: "auto with GPUs is GPU", groups: `instance_group { count: 2 }`, gpus: []int{0},
			want: []*configpb.ModelInstanceGroup{{Name: "m_0", Kind: kindGPU, Count: 2, Gpus: []int32{0}}}},
		{name: "auto listing a missing GPU is CPU and keeps the list", groups: `instance_group { gpus: [ 3 ] }`, gpus: []int{0},
			want: []*configpb.ModelInstanceGroup{{Name: "m_0", Kind: kindCPU, Count: 1, Gpus: []int32{3}}}},
		{name: "explicit GPU group keeps its GPUs", groups: `instance_group { kind: KIND_GPU gpus: [ 1 ] }`, gpus: []int{0, 1},
			want: []*configpb.ModelInstanceGroup{{Name: "m_0", Kind: kindGPU, Count: 1, Gpus: []int32{1}}}},
		{name: "KIND_MODEL untouched but counted", groups: `instance_group { kind: KIND_MODEL }`,
			want: []*configpb.ModelInstanceGroup{{Name: "m_0", Kind: kindModel, Count: 1}}},
		{name: "preferred CPU group seeds the default group",
			preferred: []*configpb.ModelInstanceGroup{{Kind: kindCPU, Count: 4}}, gpus: []int{0},
			want: []*configpb.ModelInstanceGroup{{Name: "m", Kind: kindCPU, Count: 4}}},
		{name: "preferred GPU group skipped without GPUs",
			preferred: []*configpb.ModelInstanceGroup{{Kind: kindGPU, Count: 2}, {Kind: kindCPU, Count: 3}},
			want:      []*configpb.ModelInstanceGroup{{Name: "m", Kind: kindCPU, Count: 3}}},
		{name: "preferred GPU group limited to available GPUs",
			preferred: []*configpb.ModelInstanceGroup{{Kind: kindGPU, Count: 2, Gpus: []int32{1, 5}}}, gpus: []int{0, 1},
			want: []*configpb.ModelInstanceGroup{{Name: "m", Kind: kindGPU, Count: 2, Gpus: []int32{1}}}},
		{name: "preferred group fills count of same kind", groups: `instance_group { kind: KIND_CPU }`,
			preferred: []*configpb.ModelInstanceGroup{{Kind: kindGPU, Count: 9}, {Kind: kindCPU, Count: 5}},
			want:      []*configpb.ModelInstanceGroup{{Name: "m_0", Kind: kindCPU, Count: 5}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			backend := tt.backend
			if backend == "" {
				backend = "b"
			}
			cfg := mustParse(t, `backend: "`+backend+`" `+tt.groups)
			if err := Normalize(cfg, Defaults{ModelName: "m", GPUs: tt.gpus, PreferredGroups: tt.preferred}); err != nil {
				t.Fatal(err)
			}
			if !equalGroups(cfg.InstanceGroup, tt.want) {
				t.Errorf("instance_group = %v, want %v", cfg.InstanceGroup, tt.want)
			}
		})
	}
}

func TestNormalizeErrors(t *testing.T) {
	tests := []struct {
		name string
		text string
		d    Defaults
		want []string
	}{
		{"name differs from directory", `name: "other" backend: "b"`, Defaults{ModelName: "dir"},
			[]string{`model "other"`, "name", `"dir"`}},
		{"no name at all", `backend: "b"`, Defaults{}, []string{"name", "must be set"}},
		{"no backend and plain model name", `max_batch_size: 1`, Defaults{ModelName: "plain"},
			[]string{`model "plain"`, "backend", "<model>.<backend>"}},
		{"KIND_GPU on CPU-only server", `backend: "b" instance_group { name: "g" kind: KIND_GPU }`, Defaults{ModelName: "m"},
			[]string{`model "m"`, `instance_group "g"`, "KIND_GPU", "no GPUs"}},
		{"unnamed KIND_GPU group", `backend: "b" instance_group { kind: KIND_GPU count: 2 }`, Defaults{ModelName: "m"},
			[]string{`model "m"`, `instance_group "m_0"`, "KIND_GPU"}},
		{"GPU not available", `backend: "b" instance_group { name: "g" kind: KIND_GPU gpus: [ 0, 7 ] }`, Defaults{ModelName: "m", GPUs: []int{0, 1}},
			[]string{`model "m"`, `instance_group "g": gpus`, "GPU 7", "0, 1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Normalize(mustParse(t, tt.text), tt.d)
			wantErr(t, err, tt.want...)
		})
	}
	wantErr(t, Normalize(nil, Defaults{ModelName: "m"}), `model "m"`)
}

func TestNormalizeIsIdempotent(t *testing.T) {
	for _, f := range fixtures {
		if !f.valid {
			continue
		}
		t.Run(f.name, func(t *testing.T) {
			once := f.normalized(t)
			twice := cloneConfig(once)
			if err := Normalize(twice, f.defaults()); err != nil {
				t.Fatal(err)
			}
			if !proto.Equal(once, twice) {
				t.Errorf("second Normalize changed the config:\n once: %v\ntwice: %v", once, twice)
			}
		})
	}
}

func equalGroups(a, b []*configpb.ModelInstanceGroup) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !proto.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}
