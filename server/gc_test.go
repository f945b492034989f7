package server

import (
	"strings"
	"testing"
)

func TestGCFlagsChooseThePolicy(t *testing.T) {
	t.Parallel()
	const gib = 1 << 30
	tests := []struct {
		name        string
		args        []string
		env         map[string]string
		cgroup      int64 // the cgroup's memory limit (0: none)
		wantPercent int   // -100: the environment's GOGC stays
		wantLimit   int64 // -1: the environment's GOMEMLIMIT stays
	}{
		{"defaults, no container", nil, nil, 0, DefaultGCPercent, 0},
		{"defaults in a container", nil, nil, 10 * gib, DefaultGCPercent, 9 * gib},
		{"flags", []string{"--gc-percent=150", "--gc-memory-limit-byte-size=123456789"}, nil, 10 * gib, 150, 123456789},
		{"no limit although in a container", []string{"--gc-memory-limit-byte-size=0"}, nil, 10 * gib, DefaultGCPercent, 0},
		{"the environment without flags", nil, map[string]string{"GOGC": "50", "GOMEMLIMIT": "1GiB"}, 10 * gib, -100, -1},
		{"flags over the environment", []string{"--gc-percent=300", "--gc-memory-limit-byte-size=2048"},
			map[string]string{"GOGC": "50", "GOMEMLIMIT": "1GiB"}, 0, 300, 2048},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := flagConfig(t, tc.args...).GC
			getenv := func(k string) string { return tc.env[k] }
			p, env := g.percent(getenv)
			if env != (tc.wantPercent == -100) || !env && p != tc.wantPercent {
				t.Errorf("percent %d (environment's: %v), want %d", p, env, tc.wantPercent)
			}
			if l := g.limit(getenv, func() int64 { return tc.cgroup }); l != tc.wantLimit {
				t.Errorf("memory limit %d, want %d", l, tc.wantLimit)
			}
		})
	}
}

func TestGCFlagsRefuseWhatCannotWork(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"--gc-percent=-2"}, {"--gc-memory-limit-byte-size=-2"}, {"--gc-percent=-1", "--gc-memory-limit-byte-size=0"}} {
		g := flagConfig(t, args...).GC
		name := strings.TrimPrefix(strings.SplitN(args[0], "=", 2)[0], "--")
		if err := g.validate(); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%v: %v, want an error naming --%s", args, err, name)
		}
	}
}

func TestCgroupMemoryLimits(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]int64{"max\n": 0, "1073741824\n": 1 << 30, "9223372036854771712\n": 0, "": 0, "junk": 0} {
		if got := parseCgroupLimit(in); got != want {
			t.Errorf("parseCgroupLimit(%q) = %d, want %d", in, got, want)
		}
	}
}
