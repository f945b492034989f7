package modelconfig

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/tritonhost/tritonhost/core/configpb"
)

// update rewrites the golden files under testdata/golden.
var update = flag.Bool("update", false, "rewrite testdata/golden/*.json")

// fixture describes one testdata/<name>.pbtxt.
type fixture struct {
	name  string // file stem, also the model directory name
	gpus  []int  // GPUs the server has when the fixture is normalized
	valid bool   // passes Normalize and Validate
}

// fixtures lists every testdata/*.pbtxt (TestFixtureTableIsComplete checks).
var fixtures = []fixture{
	{name: "repeat_int32", valid: true},
	{name: "square_int32", valid: true},
	{name: "square_params", valid: true},
	{name: "identity_fp32", valid: true},
	{name: "identity_int32", valid: true},
	{name: "dynamic_priorities", valid: true},
	{name: "syntax_variants", gpus: []int{0, 1}, valid: true},
	{name: "everything", valid: false},
}

func (f fixture) path() string { return filepath.Join("testdata", f.name+".pbtxt") }

func (f fixture) defaults() Defaults { return Defaults{ModelName: f.name, GPUs: f.gpus} }

// load parses the fixture, failing the test on error.
func (f fixture) load(t testing.TB) *configpb.ModelConfig {
	t.Helper()
	cfg, err := ReadFile(f.path())
	if err != nil {
		t.Fatalf("ReadFile(%s): %v", f.path(), err)
	}
	return cfg
}

// normalized parses and normalizes the fixture, failing the test on error.
func (f fixture) normalized(t testing.TB) *configpb.ModelConfig {
	t.Helper()
	cfg := f.load(t)
	if err := Normalize(cfg, f.defaults()); err != nil {
		t.Fatalf("Normalize(%s): %v", f.name, err)
	}
	return cfg
}

// fixtureByName returns the named fixture.
func fixtureByName(t testing.TB, name string) fixture {
	t.Helper()
	i := slices.IndexFunc(fixtures, func(f fixture) bool { return f.name == name })
	if i < 0 {
		t.Fatalf("no fixture %q", name)
	}
	return fixtures[i]
}

// mustParse parses text, failing the test on error.
func mustParse(t testing.TB, text string) *configpb.ModelConfig {
	t.Helper()
	cfg, err := Parse([]byte(text))
	if err != nil {
		t.Fatalf("Parse(%q): %v", text, err)
	}
	return cfg
}

// checkGolden compares got with testdata/golden/<name>, rewriting it under
// -update.
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden file (run go test -update to create it): %v", err)
	}
	if string(got) != string(want) {
		t.Errorf("%s: output differs from golden file\n got: %s\nwant: %s", name, got, want)
	}
}

// wantErr checks that err is an ErrInvalid whose message holds every
// substring in want.
func wantErr(t *testing.T, err error, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want one containing %q", want)
	}
	if !errorsIs(err, ErrInvalid) {
		t.Errorf("error %q does not wrap ErrInvalid", err)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not contain %q", err, w)
		}
	}
}

func TestFixtureTableIsComplete(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.pbtxt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".pbtxt")
		if !slices.ContainsFunc(fixtures, func(f fixture) bool { return f.name == name }) {
			t.Errorf("%s is not listed in the fixtures table", file)
		}
	}
	if len(files) != len(fixtures) {
		t.Errorf("%d fixture files, %d table entries", len(files), len(fixtures))
	}
}

// cloneConfig deep-copies cfg.
func cloneConfig(cfg *configpb.ModelConfig) *configpb.ModelConfig {
	return proto.Clone(cfg).(*configpb.ModelConfig)
}

// errorsIs is errors.Is, kept here so every test file need not import errors.
func errorsIs(err, target error) bool { return errors.Is(err, target) }
