package trace_test

import (
	"maps"
	"testing"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/internal/trace"
)

// TestFlagsAsTritonsCommandLine: --trace-config in Triton's syntax, the
// older flags with their warnings, the mode's options, and the refusals.
func TestFlagsAsTritonsCommandLine(t *testing.T) {
	t.Parallel()
	c, err := trace.Flags{Config: []string{"triton,file=/tmp/t.json", "triton,log-frequency=50", "rate=100", "level=TIMESTAMPS", "level=TENSORS", "count=7",
		"opentelemetry,url=http://x:4318/v1/traces"}}.Parse()
	want := trace.Setting{Level: core.TraceLevelTimestamps | core.TraceLevelTensors, Rate: 100, Count: 7, LogFrequency: 50, File: "/tmp/t.json", Mode: trace.ModeTriton}
	if err != nil || c.Setting != want || !maps.Equal(c.Options, map[string]string{"file": "/tmp/t.json", "log-frequency": "50"}) || len(c.Warnings) != 0 {
		t.Errorf("Parse: %+v, %v\nwant %+v", c, err, want)
	}
	c, err = trace.Flags{Config: []string{"mode=opentelemetry", "opentelemetry,url=http://x:4318/v1/traces", "opentelemetry,resource=service.name=th",
		"opentelemetry,bsp_max_queue_size=64", "level=timestamps", "rate=1"}}.Parse()
	if err != nil || c.Setting.Mode != trace.ModeOpenTelemetry || c.URL != "http://x:4318/v1/traces" || c.Resource["service.name"] != "th" ||
		c.BSPMaxQueueSize != 64 || c.BSPMaxExportBatchSize != 512 || c.Options["bsp_schedule_delay"] != "5000" || c.Options["url"] != "http://x:4318/v1/traces" {
		t.Errorf("opentelemetry: %+v, %v", c, err)
	}
	file, rate := "/tmp/old.json", "10"
	c, err = trace.Flags{File: &file, Rate: &rate, Levels: []string{"TIMESTAMPS", "OFF"}}.Parse()
	if err != nil || c.Setting.File != file || c.Setting.Rate != 10 || c.Setting.Level != core.TraceLevelDisabled || len(c.Warnings) != 4 {
		t.Errorf("older flags: %+v, %v (an OFF level turns tracing off)", c, err)
	}
	for _, tc := range []struct{ arg, text string }{
		{",rate=1", "No trace mode specified. --trace-config option format is <trace mode>,<setting>=<value> or <setting>=<value>. Got ,rate=1"},
		{"rate", "--trace-config option format is '<trace mode>,<setting>=<value>'. Got rate"},
		{"jaeger,url=x", `invalid value for trace mode option: jaeger. Available options are "triton" and "opentelemetry"`},
		{"level=loud", "Bad option: \"--trace-config level\".\ninvalid value for trace level option: loud"},
	} {
		if _, err := (trace.Flags{Config: []string{tc.arg}}).Parse(); err == nil || err.Error() != tc.text {
			t.Errorf("%q: %v, want %q", tc.arg, err, tc.text)
		}
	}
}
