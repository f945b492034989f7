package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"tritonhost/frontend/protocol"
	"tritonhost/internal/testenv"
)

// readmeDefaultRE finds a flag and the default the README states for it:
// "`--flag` [default]" in the tables of bounds, "`--flag` (default x)" in
// the text.
var readmeDefaultRE = regexp.MustCompile("`--([a-z0-9-]+)` (?:\\[([^\\]]+)\\]|\\(default ([^)]+)\\))")

// readmeValue turns a default as the README writes it ("256 MiB", "5000
// ms", "16384 bytes/s", "1024", "false") into the flag's own spelling.
func readmeValue(s string) string {
	for unit, shift := range map[string]int{" GiB": 30, " MiB": 20, " KiB": 10} {
		if n, ok := strings.CutSuffix(s, unit); ok {
			if v, err := strconv.ParseInt(n, 10, 64); err == nil {
				return strconv.FormatInt(v<<shift, 10)
			}
		}
	}
	s = strings.TrimSuffix(s, " bytes/s")
	return strings.TrimSuffix(s, " ms")
}

// TestREADMEStatesTheDefaults: every default the README states for a serve
// flag is the flag's own, and the per-request bounds it states are the
// ones both frontends enforce (protocol.MaxRequestTensors and the others).
func TestREADMEStatesTheDefaults(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(testenv.RepoRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := strings.Join(strings.Fields(string(data)), " ")
	flags := newServeCommand().Flags()
	found := 0
	for _, m := range readmeDefaultRE.FindAllStringSubmatch(readme, -1) {
		name, stated := m[1], m[2]+m[3]
		f := flags.Lookup(name)
		if f == nil {
			continue // a flag of another command, or one written without a default
		}
		found++
		want := readmeValue(stated)
		if a, err1 := strconv.ParseFloat(want, 64); err1 == nil {
			if b, err2 := strconv.ParseFloat(f.DefValue, 64); err2 == nil && a == b {
				continue
			}
		}
		if want != f.DefValue {
			t.Errorf("the README says --%s defaults to %s; the flag's default is %s", name, stated, f.DefValue)
		}
	}
	if found < 25 {
		t.Errorf("found the defaults of %d serve flags in the README; the pattern no longer matches how it states them", found)
	}
	bounds := fmt.Sprintf("a request may have at most %d inputs and %d requested outputs, %d parameters of its own and %d on each tensor, and %d dimensions a tensor",
		protocol.MaxRequestTensors, protocol.MaxRequestTensors, protocol.MaxRequestParameters, protocol.MaxRequestParameters, protocol.MaxTensorDims)
	load := fmt.Sprintf("a load request at most %d parameters", protocol.MaxLoadParameters)
	for _, want := range []string{bounds, load} {
		if !strings.Contains(readme, want) {
			t.Errorf("the README does not say %q", want)
		}
	}
}
