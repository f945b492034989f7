package server

import (
	"strings"
	"testing"

	"github.com/tritonhost/tritonhost/internal/trace"
)

// TestTraceFileMaxSizeFlag: --trace-file-max-size bounds the trace files
// (trace.DefaultMaxFileBytes unless set) and must be positive.
func TestTraceFileMaxSizeFlag(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want int64
		err  string
	}{
		{nil, trace.DefaultMaxFileBytes, ""},
		{[]string{"--trace-file-max-size=4096"}, 4096, ""},
		{[]string{"--trace-file-max-size=0"}, 0, "--trace-file-max-size must be positive"},
		{[]string{"--trace-file-max-size=-1"}, 0, "--trace-file-max-size must be positive"},
	} {
		p := flagConfig(t, c.args...).Trace
		_, err := p.parse()
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%v: %v, want an error saying %q", c.args, err, c.err)
			}
			continue
		}
		if err != nil || p.FileMaxSize != c.want {
			t.Errorf("%v: %d, %v; want %d", c.args, p.FileMaxSize, err, c.want)
		}
	}
}
