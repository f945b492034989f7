package modelconfig

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/tritonhost/tritonhost/core/configpb"
)

// FuzzParse feeds arbitrary text to Parse. Whatever Parse accepts must go
// through Normalize, Validate and ToJSON without panicking; the JSON must be
// valid and read back by FromJSON into an equal config. It starts from the
// fixtures and from every configuration in examples/models.
func FuzzParse(f *testing.F) {
	examples, err := filepath.Glob(filepath.Join("..", "..", "examples", "models", "*", "config.pbtxt"))
	if err != nil || len(examples) == 0 {
		f.Fatalf("no configurations in examples/models (%v)", err)
	}
	for _, fx := range fixtures {
		examples = append(examples, fx.path())
	}
	for _, path := range examples {
		text, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(text)
	}
	f.Add([]byte(`instance_group [{ kind: KIND_GPU gpus: [ 0, 5 ] }] backend: "b"`))
	f.Add([]byte(`name: "x.y" dynamic_batching { preferred_batch_size: [ -1 ] } max_batch_size: -3`))

	f.Fuzz(func(t *testing.T, text []byte) {
		cfg, err := Parse(text)
		if err != nil {
			return
		}
		checkJSON(t, cfg) // the raw config must render too
		for _, d := range []Defaults{{ModelName: "fuzz"}, {ModelName: cfg.GetName(), GPUs: []int{0, 1}}} {
			c := cloneConfig(cfg)
			if Normalize(c, d) != nil {
				continue
			}
			_ = Validate(c)
			checkJSON(t, c)
		}
	})
}

// checkJSON renders cfg and checks the output reads back unchanged.
func checkJSON(t *testing.T, cfg *configpb.ModelConfig) {
	t.Helper()
	js, err := ToJSON(cfg)
	if err != nil {
		t.Fatalf("ToJSON(%v): %v", cfg, err)
	}
	if len(js) == 0 {
		if proto.Size(cfg) != 0 {
			t.Fatalf("ToJSON(%v) is empty", cfg)
		}
		return
	}
	if !json.Valid(js) {
		t.Fatalf("ToJSON(%v) is not valid JSON: %s", cfg, js)
	}
	back, err := FromJSON(js)
	if err != nil {
		t.Fatalf("FromJSON(%s): %v", js, err)
	}
	if !proto.Equal(back, cfg) {
		t.Fatalf("round trip through %s changed\n%v\ninto\n%v", js, cfg, back)
	}
}
