package serverlog

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestLineFormat(t *testing.T) {
	var buf bytes.Buffer
	l := New(&buf)
	l.now = func() time.Time { return time.Date(2026, 11, 22, 9, 8, 7, 654321000, time.UTC) }
	l.pid = "42"
	l.Log(Warning, "/src/backend/square.cc", 77, "queue is long")
	if got, want := buf.String(), "W1122 09:08:07.654321 42 square.cc:77] queue is long\n"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestLevelFiltering(t *testing.T) {
	tests := []struct {
		name    string
		verbose int
		off     []Level
		level   Level
		want    bool
	}{
		{"info on by default", 0, nil, Info, true},
		{"verbose off by default", 0, nil, Verbose, false},
		{"verbose on at 1", 1, nil, Verbose, true},
		{"error switched off", 0, []Level{Error}, Error, false},
		{"warning unaffected by error off", 0, []Level{Error}, Warning, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			l := New(&buf)
			l.SetVerbose(tc.verbose)
			for _, lv := range tc.off {
				l.SetEnabled(lv, false)
			}
			l.Log(tc.level, "f.c", 1, "x")
			if got := buf.Len() > 0; got != tc.want {
				t.Fatalf("wrote=%v, want %v", got, tc.want)
			}
			if l.Enabled(tc.level) != tc.want {
				t.Fatalf("Enabled=%v, want %v", !tc.want, tc.want)
			}
		})
	}
}

func TestVerbosefLevels(t *testing.T) {
	var buf bytes.Buffer
	l := New(&buf)
	l.SetVerbose(1)
	l.Verbosef(2, "hidden")
	l.Verbosef(1, "shown %d", 1)
	out := buf.String()
	if strings.Contains(out, "hidden") || !regexp.MustCompile(`^I\d{4} .*serverlog_test\.go:\d+\] shown 1\n$`).MatchString(out) {
		t.Fatalf("unexpected output %q", out)
	}
}

func TestISO8601Format(t *testing.T) {
	var buf bytes.Buffer
	l := New(&buf)
	l.now = func() time.Time { return time.Date(2026, 11, 22, 9, 8, 7, 0, time.UTC) }
	l.pid = "7"
	l.SetFormat(FormatISO8601)
	l.Log(Error, "x.go", 3, "boom")
	if got, want := buf.String(), "2026-11-22T09:08:07Z E 7 x.go:3] boom\n"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}
