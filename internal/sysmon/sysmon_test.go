package sysmon

import (
	"slices"
	"testing"
)

func TestEnvAddsTheSettingUnlessScheduleTraceIsNamed(t *testing.T) {
	for _, tc := range []struct {
		name    string
		env     []string
		want    []string
		changed bool
	}{
		{"no GODEBUG", []string{"A=1"}, []string{"A=1", "GODEBUG=" + Setting}, true},
		{"empty GODEBUG", []string{"GODEBUG=", "A=1"}, []string{"GODEBUG=" + Setting, "A=1"}, true},
		{"other settings follow it", []string{"GODEBUG=madvdontneed=1,gctrace=0"}, []string{"GODEBUG=" + Setting + ",madvdontneed=1,gctrace=0"}, true},
		{"schedtrace named", []string{"GODEBUG=gctrace=0,schedtrace=0"}, []string{"GODEBUG=gctrace=0,schedtrace=0"}, false},
		{"schedtrace with spaces", []string{"GODEBUG= schedtrace =100"}, []string{"GODEBUG= schedtrace =100"}, false},
		{"scheddetail is another setting", []string{"GODEBUG=scheddetail=1"}, []string{"GODEBUG=" + Setting + ",scheddetail=1"}, true},
		{"a repeated GODEBUG counts once", []string{"GODEBUG=x=1", "GODEBUG=schedtrace=0"}, []string{"GODEBUG=" + Setting + ",x=1"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, changed := Env(tc.env)
			if !slices.Equal(got, tc.want) || changed != tc.changed {
				t.Errorf("Env(%q) = %q, %v; want %q, %v", tc.env, got, changed, tc.want, tc.changed)
			}
		})
	}
}

func TestActiveReadsTheLastScheduleTraceEntry(t *testing.T) {
	for _, tc := range []struct {
		godebug string
		want    bool
	}{
		{"", false},
		{Setting, true},
		{Setting + ",gctrace=0", true},
		{Setting + ",schedtrace=0", false},
		{"schedtrace=0," + Setting, true},
		{"schedtrace=1000", false},
	} {
		t.Setenv("GODEBUG", tc.godebug)
		if got := Active(); got != tc.want {
			t.Errorf("Active() with GODEBUG=%q = %v, want %v", tc.godebug, got, tc.want)
		}
	}
}

func TestIsTraceLineKnowsTheRuntimesSchedulerLine(t *testing.T) {
	for _, tc := range []struct {
		line string
		want bool
	}{
		{"SCHED 0ms: gomaxprocs=2 idleprocs=2 threads=5 spinningthreads=0 needspinning=0 idlethreads=2 runqueue=0 [0 0]", true},
		{"SCHED 2147483647ms: gomaxprocs=16 idleprocs=16", true},
		{"SCHED 12ms: gomaxprocs=", false},
		{"SCHED ms: gomaxprocs=2", false},
		{"SCHED 1s: gomaxprocs=2", false},
		{"I1128 backend: SCHED 0ms: gomaxprocs=2", false},
		{"SCHEDULED 0ms: gomaxprocs=2", false},
		{"", false},
	} {
		if got := IsTraceLine([]byte(tc.line)); got != tc.want {
			t.Errorf("IsTraceLine(%q) = %v, want %v", tc.line, got, tc.want)
		}
	}
}
