package protocol_test

import (
	"strings"
	"testing"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/internal/protocol"
)

// TestParseModelVersionReadsAsTriton: "" is the newest (-1); otherwise the
// leading integer as strtol reads it, which must not be negative; the
// errors are Triton's words.
func TestParseModelVersionReadsAsTriton(t *testing.T) {
	const notInt = "failed to get model version from specified version string '%s' (details: stol), version should be an integral value > 0"
	const negative = "invalid model version specified '%s' , version should be an integral value > 0"
	for _, tc := range []struct {
		in   string
		want int64
		err  string
	}{
		{"", -1, ""},
		{"0", 0, ""},
		{"3", 3, ""},
		{"  +7", 7, ""},
		{"12abc", 12, ""},
		{"9223372036854775807", 9223372036854775807, ""},
		{"-1", 0, negative},
		{"abc", 0, notInt},
		{" ", 0, notInt},
		{"9223372036854775808", 0, notInt},
	} {
		got, err := protocol.ParseModelVersion(tc.in)
		switch {
		case tc.err == "" && (err != nil || got != tc.want):
			t.Errorf("ParseModelVersion(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		case tc.err != "" && (err == nil || core.CodeOf(err) != core.CodeInvalidArg || err.Error() != strings.ReplaceAll(tc.err, "%s", tc.in)):
			t.Errorf("ParseModelVersion(%q) = %d, %v; want INVALID_ARG %q", tc.in, got, err, strings.ReplaceAll(tc.err, "%s", tc.in))
		}
	}
}

// TestLoadOptionsTakesConfigAndFiles: the two parameters Triton knows, in
// order; any other name, or too many, is refused in Triton's words; a value
// the frontend cannot read stops the request with the frontend's error.
func TestLoadOptionsTakesConfigAndFiles(t *testing.T) {
	str := func(_ string, v string) (string, error) { return v, nil }
	file := func(name string, v string) ([]byte, error) {
		if v == "bad" {
			return nil, core.Errorf(core.CodeInvalidArg, "bad %s", name)
		}
		return []byte(v), nil
	}
	opts, err := protocol.LoadOptions(map[string]string{"config": "{}", "file:1/a": "A", "file:b": "B"}, str, file)
	if err != nil || string(opts.Config) != "{}" || string(opts.Files["1/a"]) != "A" || string(opts.Files["b"]) != "B" || len(opts.Files) != 2 {
		t.Errorf("LoadOptions = %+v, %v", opts, err)
	}
	for _, tc := range []struct {
		params map[string]string
		want   string
	}{
		{map[string]string{"nope": "x"}, "unrecognized load parameter 'nope'."},
		{map[string]string{"config": "{}", "file:x": "bad"}, "bad file:x"},
	} {
		if _, err := protocol.LoadOptions(tc.params, str, file); err == nil || err.Error() != tc.want {
			t.Errorf("LoadOptions(%v): %v, want %q", tc.params, err, tc.want)
		}
	}
	many := map[string]string{}
	for i := range protocol.MaxLoadParameters + 1 {
		many["file:"+strings.Repeat("x", i+1)] = ""
	}
	if _, err := protocol.LoadOptions(many, str, file); err == nil || !strings.Contains(err.Error(), "more than the 1024") {
		t.Errorf("LoadOptions with %d parameters: %v", len(many), err)
	}
}
