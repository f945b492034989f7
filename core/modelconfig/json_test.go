package modelconfig

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/tritonhost/tritonhost/core/configpb"
)

// renderFixture returns the JSON of a fixture: normalized when it is a
// valid model, as parsed otherwise.
func renderFixture(t testing.TB, f fixture) []byte {
	t.Helper()
	cfg := f.load(t)
	if f.valid {
		cfg = f.normalized(t)
	}
	js, err := ToJSON(cfg)
	if err != nil {
		t.Fatalf("ToJSON(%s): %v", f.name, err)
	}
	return js
}

func TestToJSONMatchesGoldenFiles(t *testing.T) {
	for _, f := range fixtures {
		t.Run(f.name, func(t *testing.T) {
			checkGolden(t, f.name+".json", renderFixture(t, f))
		})
	}
}

func TestToJSONMatchesObservedTritonOutput(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "triton", "*.pbtxt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no observed configs: %v", err)
	}
	for _, file := range files {
		model := strings.TrimSuffix(filepath.Base(file), ".pbtxt")
		t.Run(model, func(t *testing.T) {
			cfg, err := ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			if err := Normalize(cfg, Defaults{ModelName: model}); err != nil {
				t.Fatal(err)
			}
			if err := Validate(cfg); err != nil {
				t.Fatal(err)
			}
			got, err := ToJSON(cfg)
			if err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile(strings.TrimSuffix(file, ".pbtxt") + ".json")
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("differs from Triton's output\n got: %s\nwant: %s", got, want)
			}
		})
	}
}

// decode parses JSON keeping numbers as json.Number, so that a number and a
// string holding digits stay distinguishable.
func decode(t *testing.T, js []byte) map[string]any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("invalid JSON %s: %v", js, err)
	}
	return doc
}

// at follows a path of object keys and array indexes through a decoded
// document.
func at(t *testing.T, v any, path ...any) any {
	t.Helper()
	for _, step := range path {
		switch s := step.(type) {
		case string:
			obj, ok := v.(map[string]any)
			if !ok {
				t.Fatalf("at %v: %v is not an object", path, v)
			}
			if v, ok = obj[s]; !ok {
				t.Fatalf("at %v: member %q is missing", path, s)
			}
		case int:
			arr, ok := v.([]any)
			if !ok || s >= len(arr) {
				t.Fatalf("at %v: %v has no index %d", path, v, s)
			}
			v = arr[s]
		}
	}
	return v
}

func TestToJSONRepeatHasWhatBackendsRead(t *testing.T) {
	doc := decode(t, renderFixture(t, fixtureByName(t, "repeat_int32")))
	num := func(n string) json.Number { return json.Number(n) }
	tests := []struct {
		path []any
		want any
	}{
		{[]any{"name"}, "repeat_int32"},
		{[]any{"backend"}, "repeat"},
		{[]any{"max_batch_size"}, num("0")},
		{[]any{"version_policy", "latest", "num_versions"}, num("1")},
		{[]any{"input", 0, "name"}, "IN"},
		{[]any{"input", 0, "data_type"}, "TYPE_INT32"},
		{[]any{"input", 0, "dims", 0}, num("-1")},
		{[]any{"input", 0, "optional"}, false},
		{[]any{"input", 1, "name"}, "DELAY"},
		{[]any{"input", 1, "data_type"}, "TYPE_UINT32"},
		{[]any{"input", 2, "dims", 0}, num("1")},
		{[]any{"output", 0, "name"}, "OUT"},
		{[]any{"output", 0, "dims", 0}, num("1")},
		{[]any{"output", 1, "name"}, "IDX"},
		{[]any{"output", 1, "data_type"}, "TYPE_UINT32"},
		{[]any{"default_model_filename"}, ""},
		{[]any{"model_transaction_policy", "decoupled"}, true},
		{[]any{"instance_group", 0, "name"}, "repeat_int32"},
		{[]any{"instance_group", 0, "kind"}, "KIND_CPU"},
		{[]any{"instance_group", 0, "count"}, num("1")},
		{[]any{"optimization", "input_pinned_memory", "enable"}, true},
		{[]any{"optimization", "output_pinned_memory", "enable"}, true},
	}
	for _, tt := range tests {
		if got := at(t, doc, tt.path...); got != tt.want {
			t.Errorf("%v = %#v, want %#v", tt.path, got, tt.want)
		}
	}
	for _, empty := range [][]any{{"batch_input"}, {"batch_output"}, {"instance_group", 0, "gpus"}, {"model_warmup"}} {
		if got, ok := at(t, doc, empty...).([]any); !ok || len(got) != 0 {
			t.Errorf("%v = %#v, want []", empty, at(t, doc, empty...))
		}
	}
	for _, empty := range [][]any{{"parameters"}, {"cc_model_filenames"}, {"metric_tags"}} {
		if got, ok := at(t, doc, empty...).(map[string]any); !ok || len(got) != 0 {
			t.Errorf("%v = %#v, want {}", empty, at(t, doc, empty...))
		}
	}
	for _, absent := range []string{"dynamic_batching", "sequence_batching", "ensemble_scheduling", "response_cache", "model_metrics"} {
		if _, ok := doc[absent]; ok {
			t.Errorf("%s is present, want it absent (unset message)", absent)
		}
	}
	if _, ok := at(t, doc, "input", 0).(map[string]any)["reshape"]; ok {
		t.Error("input[0].reshape is present, want it absent")
	}
}

func TestToJSONParametersMap(t *testing.T) {
	doc := decode(t, renderFixture(t, fixtureByName(t, "square_params")))
	params := at(t, doc, "parameters").(map[string]any)
	want := map[string]string{
		"CUSTOM_INFER_DELAY_NS": "400000000", "CUSTOM_OUTPUT_DELAY_NS": "200000000",
		"CUSTOM_FAIL_COUNT": "2", "CUSTOM_EMPTY_COUNT": "1",
	}
	if len(params) != len(want) {
		t.Errorf("parameters = %v, want %d entries", params, len(want))
	}
	for k, v := range want {
		if got := at(t, params, k, "string_value"); got != v {
			t.Errorf("parameters[%q].string_value = %#v, want %q", k, got, v)
		}
	}
	js := renderFixture(t, fixtureByName(t, "square_params"))
	if !bytes.Contains(js, []byte(`"parameters":{"CUSTOM_EMPTY_COUNT":{"string_value":"1"},"CUSTOM_FAIL_COUNT":{"string_value":"2"},`)) {
		t.Errorf("parameters not rendered as sorted {\"K\":{\"string_value\":\"V\"}}: %s", js)
	}
}

func TestToJSONInt64AsTritonRewritesThem(t *testing.T) {
	doc := decode(t, renderFixture(t, fixtureByName(t, "everything")))
	numbers := [][]any{
		{"version_policy", "specific", "versions", 2},
		{"input", 0, "dims", 0},
		{"input", 0, "reshape", "shape", 0},
		{"output", 0, "dims", 0},
		{"sequence_batching", "oldest", "max_queue_delay_microseconds"},
		{"sequence_batching", "max_sequence_idle_microseconds"},
		{"sequence_batching", "state", 0, "dims", 0},
		{"model_warmup", 0, "inputs", "IN", "dims", 0},
	}
	for _, path := range numbers {
		if _, ok := at(t, doc, path...).(json.Number); !ok {
			t.Errorf("%v = %#v, want a JSON number", path, at(t, doc, path...))
		}
	}
	quoted := [][]any{
		{"instance_group", 0, "secondary_devices", 0, "device_id"},
		{"optimization", "cuda", "graph_spec", 0, "input", "IN", "dim", 0},
		{"optimization", "cuda", "graph_spec", 0, "graph_lower_bound", "input", "IN", "dim", 0},
		{"sequence_batching", "state", 0, "initial_state", 0, "dims", 0},
	}
	for _, path := range quoted {
		if _, ok := at(t, doc, path...).(string); !ok {
			t.Errorf("%v = %#v, want a JSON string (Triton leaves it quoted)", path, at(t, doc, path...))
		}
	}
	if got := at(t, doc, "version_policy", "specific", "versions", 2); got != json.Number("9007199254740993") {
		t.Errorf("large version = %v, want 9007199254740993 exactly", got)
	}
	if got := at(t, doc, "sequence_batching", "oldest", "max_queue_delay_microseconds"); got != json.Number("18446744073709551615") {
		t.Errorf("max uint64 = %v, want 18446744073709551615", got)
	}

	dyn := decode(t, renderFixture(t, fixtureByName(t, "dynamic_priorities")))
	for _, path := range [][]any{
		{"dynamic_batching", "max_queue_delay_microseconds"},
		{"dynamic_batching", "priority_levels"},
		{"dynamic_batching", "default_priority_level"},
		{"dynamic_batching", "priority_queue_policy", "2", "default_timeout_microseconds"},
	} {
		if _, ok := at(t, dyn, path...).(json.Number); !ok {
			t.Errorf("%v = %#v, want a JSON number", path, at(t, dyn, path...))
		}
	}
}

// tritonInt64Fields is the list of 64-bit fields that Triton's
// ValidateModelConfigInt64 expects ModelConfig to have; Triton refuses to
// serialise any config if its schema has others.
var tritonInt64Fields = []string{
	"ModelConfig::input::dims",
	"ModelConfig::input::reshape::shape",
	"ModelConfig::output::dims",
	"ModelConfig::output::reshape::shape",
	"ModelConfig::version_policy::specific::versions",
	"ModelConfig::dynamic_batching::max_queue_delay_microseconds",
	"ModelConfig::dynamic_batching::default_queue_policy::default_timeout_microseconds",
	"ModelConfig::dynamic_batching::priority_queue_policy::value::default_timeout_microseconds",
	"ModelConfig::dynamic_batching::priority_levels",
	"ModelConfig::dynamic_batching::priority_queue_policy::key",
	"ModelConfig::dynamic_batching::default_priority_level",
	"ModelConfig::sequence_batching::direct::max_queue_delay_microseconds",
	"ModelConfig::sequence_batching::state::dims",
	"ModelConfig::sequence_batching::state::initial_state::dims",
	"ModelConfig::sequence_batching::oldest::max_queue_delay_microseconds",
	"ModelConfig::sequence_batching::max_sequence_idle_microseconds",
	"ModelConfig::ensemble_scheduling::step::model_version",
	"ModelConfig::model_warmup::inputs::value::dims",
	"ModelConfig::optimization::cuda::graph_spec::input::value::dim",
	"ModelConfig::optimization::cuda::graph_spec::graph_lower_bound::input::value::dim",
	"ModelConfig::instance_group::secondary_devices::device_id",
}

func TestSchemaHasTritonsInt64Fields(t *testing.T) {
	var got []string
	var walk func(md protoreflect.MessageDescriptor, prefix string)
	walk = func(md protoreflect.MessageDescriptor, prefix string) {
		for i := 0; i < md.Fields().Len(); i++ {
			fd := md.Fields().Get(i)
			path := prefix + "::" + string(fd.Name())
			switch fd.Kind() {
			case protoreflect.MessageKind:
				walk(fd.Message(), path)
			case protoreflect.Int64Kind, protoreflect.Uint64Kind, protoreflect.Sint64Kind,
				protoreflect.Fixed64Kind, protoreflect.Sfixed64Kind:
				got = append(got, path)
			}
		}
	}
	walk((&configpb.ModelConfig{}).ProtoReflect().Descriptor(), "ModelConfig")
	want := slices.Clone(tritonInt64Fields)
	sort.Strings(got)
	sort.Strings(want)
	if !slices.Equal(got, want) {
		t.Errorf("64-bit fields differ from Triton's expected set\n got: %q\nwant: %q", got, want)
	}
}

func TestToJSONFieldOrderFollowsDeclaration(t *testing.T) {
	js := renderFixture(t, fixtureByName(t, "repeat_int32"))
	keys := topLevelKeys(t, js)
	want := []string{"name", "platform", "backend", "runtime", "version_policy", "max_batch_size",
		"input", "output", "batch_input", "batch_output", "optimization", "instance_group",
		"default_model_filename", "cc_model_filenames", "metric_tags", "parameters", "model_warmup",
		"model_transaction_policy"}
	if !slices.Equal(keys, want) {
		t.Errorf("top-level keys = %q, want %q", keys, want)
	}
}

// topLevelKeys lists the members of a JSON object in document order.
func topLevelKeys(t *testing.T, js []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(js))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not an object: %s", js)
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

func TestToJSONIsCompactDeterministicAndValid(t *testing.T) {
	for _, f := range fixtures {
		t.Run(f.name, func(t *testing.T) {
			first := renderFixture(t, f)
			if !json.Valid(first) {
				t.Fatalf("invalid JSON: %s", first)
			}
			var compact bytes.Buffer
			if err := json.Compact(&compact, first); err != nil || !bytes.Equal(compact.Bytes(), first) {
				t.Errorf("output is not compact: %s", first)
			}
			if bytes.HasSuffix(first, []byte{0}) {
				t.Error("output ends with NUL")
			}
			for range 20 {
				if again := renderFixture(t, f); !bytes.Equal(again, first) {
					t.Fatalf("output changed between calls:\n%s\n%s", first, again)
				}
			}
		})
	}
}

func TestToJSONOfEmptyConfigIsEmptyLikeTriton(t *testing.T) {
	for _, cfg := range []*configpb.ModelConfig{nil, {}} {
		js, err := ToJSON(cfg)
		if err != nil || len(js) != 0 {
			t.Errorf("ToJSON(%v) = %q, %v; want empty output", cfg, js, err)
		}
	}
}

func TestToJSONFromJSONRoundTrip(t *testing.T) {
	for _, f := range fixtures {
		for _, normalized := range []bool{false, true} {
			if normalized && !f.valid {
				continue
			}
			name := f.name
			if normalized {
				name += "/normalized"
			}
			t.Run(name, func(t *testing.T) {
				cfg := f.load(t)
				if normalized {
					cfg = f.normalized(t)
				}
				js, err := ToJSON(cfg)
				if err != nil {
					t.Fatal(err)
				}
				back, err := FromJSON(js)
				if err != nil {
					t.Fatalf("FromJSON(%s): %v", js, err)
				}
				if !proto.Equal(back, cfg) {
					t.Errorf("round trip changed the config\n got: %v\nwant: %v", back, cfg)
				}
			})
		}
	}
}

func TestAppendTritonFloat(t *testing.T) {
	f32 := func(f float32) float64 { return float64(f) }
	tests := []struct {
		name string
		v    float64
		bits int
		want string
	}{
		{"zero", 0, 32, "0"},
		{"negative zero", math.Copysign(0, -1), 32, "0"},
		{"integral float", 1, 32, "1"},
		{"half", 0.5, 32, "0.5"},
		{"float 0.1 prints short", f32(0.1), 32, "0.1"},
		{"float needing 9 digits", f32(1.0000001), 32, "1.00000012"},
		{"float 1e5 stays integral", 100000, 32, "100000"},
		{"float 1e6 goes through %g exponent", 1e6, 32, "1000000.0"},
		{"float 123456789 rounds to float32", f32(123456789), 32, "123456792"},
		{"tiny float", f32(2.5e-7), 32, "2.5e-7"},
		{"1e-6 in plain notation", f32(1e-6), 32, "0.000001"},
		{"negative float", f32(-1.5), 32, "-1.5"},
		{"double third", 1.0 / 3, 64, "0.3333333333333333"},
		{"double 0.1", 0.1, 64, "0.1"},
		{"double 1e20", 1e20, 64, "100000000000000000000.0"},
		{"double 1e21", 1e21, 64, "1e21"},
		{"double 1.5e300", 1.5e300, 64, "1.5e300"},
		{"double -5", -5, 64, "-5"},
		{"double 123456.5", 123456.5, 64, "123456.5"},
		{"NaN", math.NaN(), 64, `"NaN"`},
		{"+Inf", math.Inf(1), 32, `"Infinity"`},
		{"-Inf", math.Inf(-1), 64, `"-Infinity"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(appendTritonFloat(nil, tt.v, tt.bits)); got != tt.want {
				t.Errorf("appendTritonFloat(%v, %d) = %s, want %s", tt.v, tt.bits, got, tt.want)
			}
		})
	}
}

func TestAppendJSONStringEscapesLikeRapidJSON(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain", `"plain"`},
		{`q"b\`, `"q\"b\\"`},
		{"\b\t\n\f\r", `"\b\t\n\f\r"`},
		{"\x00\x01\x1f", `"\u0000\u0001\u001F"`},
		{"</script>\x7f", "\"</script>\x7f\""},
		{"café ☃ 😀", `"café ☃ 😀"`},
		{"bad\xffbyte", `"bad byte"`},
	}
	for _, tt := range tests {
		if got := string(appendJSONString(nil, tt.in)); got != tt.want {
			t.Errorf("appendJSONString(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

func BenchmarkToJSON(b *testing.B) {
	cfg := fixtureByName(b, "repeat_int32").normalized(b)
	js, err := ToJSON(cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(js)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ToJSON(cfg); err != nil {
			b.Fatal(err)
		}
	}
}
