package main

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/tritonhost/tritonhost/internal/sysmon"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// TestTheServerAndItsWorkersKeepTheRuntimeMonitorAwake: `tritonhost
// serve` restarts itself, once and under the same pid, with sysmon.Setting
// in its GODEBUG (ahead of what the environment had), and its worker
// processes inherit it; a GODEBUG that names schedtrace (schedtrace=0
// turns the setting off) is left as it is, in both.
func TestTheServerAndItsWorkersKeepTheRuntimeMonitorAwake(t *testing.T) {
	var base []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GODEBUG=") {
			base = append(base, kv)
		}
	}
	repo := testenv.Repository(t, testenv.Model{Name: "identity_int32", Config: testenv.ExampleConfig(t, "identity_int32")})
	for _, tc := range []struct {
		name    string
		godebug []string // the server's GODEBUG entries, if any
		want    string
	}{
		{"no GODEBUG", nil, sysmon.Setting},
		{"other settings", []string{"GODEBUG=madvdontneed=1"}, sysmon.Setting + ",madvdontneed=1"},
		{"turned off", []string{"GODEBUG=schedtrace=0"}, "schedtrace=0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := startServerEnv(t, repo, append(base[:len(base):len(base)], tc.godebug...), "--backend-isolation", "process")
			if got := envOf(t, srv.PID(), "GODEBUG"); got != tc.want {
				t.Errorf("server's GODEBUG = %q, want %q", got, tc.want)
			}
			workers := children(t, srv.PID())
			if len(workers) != 1 {
				t.Fatalf("server has %d child processes, want its one worker", len(workers))
			}
			if got := envOf(t, workers[0], "GODEBUG"); got != tc.want {
				t.Errorf("worker's GODEBUG = %q, want %q", got, tc.want)
			}
			if strings.Count(srv.Log(), "Started GRPCInferenceService") != 1 {
				t.Errorf("the server started its services other than once:\n%s", srv.Log())
			}
		})
	}
}

// envOf is the value of process pid's environment variable name as the
// process started (the last of that name; "" when unset).
func envOf(t *testing.T, pid int, name string) string {
	t.Helper()
	env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		t.Fatal(err)
	}
	var v string
	for _, kv := range strings.Split(string(env), "\x00") {
		if s, ok := strings.CutPrefix(kv, name+"="); ok {
			v = s
		}
	}
	return v
}
