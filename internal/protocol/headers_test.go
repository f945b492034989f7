package protocol_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/serverlog"
	"github.com/tritonhost/tritonhost/internal/protocol"
)

// TestForwardHeaders: the headers a --*-header-forward-pattern matches
// (case-insensitively, anywhere in the name) become string parameters,
// every value of each, in the order of their names; a reserved name
// refuses the request; an empty pattern forwards nothing; a pattern that
// is no regular expression is refused.
func TestForwardHeaders(t *testing.T) {
	t.Parallel()
	headers := map[string][]string{"my_header_2": {"b"}, "my_header_1": {"a", "a2"}, "other": {"x"}}
	for _, tc := range []struct {
		pattern string
		want    []string
		err     string
	}{
		{"", nil, ""},
		{"my_header.*", []string{"my_header_1=a", "my_header_1=a2", "my_header_2=b"}, ""},
		{"MY_HEADER_2", []string{"my_header_2=b"}, ""},
		{"(?-i)MY_HEADER.*", nil, ""},
		{"^other$", []string{"other=x"}, ""},
		{"(", nil, "missing closing )"},
	} {
		re, err := protocol.HeaderForwardPattern(tc.pattern)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("pattern %q: %v, want %q", tc.pattern, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		ir := &core.Submission{Parameters: []core.Parameter{core.IntParam("own", 1)}}
		if err := protocol.ForwardHeaders(re, "--x-header-forward-pattern", headers, ir); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, p := range ir.Parameters[1:] {
			if p.Type != core.ParamString {
				t.Errorf("parameter %q is not a string", p.Name)
			}
			got = append(got, p.Name+"="+p.String)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("pattern %q forwarded %q, want %q", tc.pattern, got, tc.want)
		}
	}
	re, _ := protocol.HeaderForwardPattern(".*")
	for _, name := range []string{"sequence_id", "sequence_start", "sequence_end", "priority", "timeout", "headers", "binary_data_output", "triton_x"} {
		err := protocol.ForwardHeaders(re, "--x-header-forward-pattern", map[string][]string{name: {"v"}}, &core.Submission{})
		if core.CodeOf(err) != core.CodeInvalidArg || !strings.Contains(err.Error(), "reserved for Triton usage") || !strings.Contains(err.Error(), "--x-header-forward-pattern") {
			t.Errorf("header %q: %v, want INVALID_ARG reserved for Triton usage", name, err)
		}
	}
}

// TestLogControlUseFile: a log file the server opened for --log-file is
// what the settings report, and a change of log_file closes it.
func TestLogControlUseFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "server.log")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	log := serverlog.New(f)
	c := protocol.NewLogControl(log, true)
	c.UseFile(path, f)
	if got := c.Current().File; got != path {
		t.Errorf("log_file %q, want %q", got, path)
	}
	next := filepath.Join(dir, "next.log")
	if err := c.Apply(map[string]protocol.LogValue{"log_file": {Kind: protocol.KindString, String: next}}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("x"); err == nil {
		t.Error("the --log-file file is still open after the log moved")
	}
	if got := c.Current().File; got != next {
		t.Errorf("log_file %q, want %q", got, next)
	}
	_ = c.Apply(map[string]protocol.LogValue{"log_file": {Kind: protocol.KindString, String: ""}})
}
