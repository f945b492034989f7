package main

import (
	"os"
	"strings"
	"testing"

	"github.com/tritonhost/tritonhost/internal/testenv"
)

func TestServerSetsAndLogsItsGarbageCollector(t *testing.T) {
	t.Parallel()
	env := append(os.Environ(), "GOGC=", "GOMEMLIMIT=")
	srv := startServerEnv(t, "", env, "--gc-percent=250", "--gc-memory-limit-byte-size=1073741824")
	if want := "garbage collector: GOGC=250, memory limit 1073741824 bytes"; !strings.Contains(srv.Log(), want) {
		t.Errorf("the log does not say %q:\n%s", want, srv.Log())
	}
	fromEnv := startServerEnv(t, "", append(os.Environ(), "GOGC=75", "GOMEMLIMIT=2GiB"))
	if want := "garbage collector: GOGC=75 (environment), memory limit GOMEMLIMIT=2GiB (environment)"; !strings.Contains(fromEnv.Log(), want) {
		t.Errorf("the log does not say %q:\n%s", want, fromEnv.Log())
	}
}

// TestWorkersCollectAsTheServerDoes: an isolated model's worker runs with
// the server's --gc-percent as its GOGC; a GOGC in the server's
// environment is the workers' too; a server that collects only at its
// memory limit (-1) leaves its workers Go's default.
func TestWorkersCollectAsTheServerDoes(t *testing.T) {
	t.Parallel()
	repo := testenv.Repository(t, testenv.Model{Name: "identity_int32", Config: testenv.ExampleConfig(t, "identity_int32")})
	for _, tc := range []struct {
		name string
		env  []string
		args []string
		want string // the worker's GOGC
	}{
		{"the flag", []string{"GOGC="}, []string{"--gc-percent=250"}, "250"},
		{"the default", []string{"GOGC="}, nil, "400"},
		{"the environment", []string{"GOGC=75"}, nil, "75"},
		{"only at the limit", []string{"GOGC="}, []string{"--gc-percent=-1", "--gc-memory-limit-byte-size=1073741824"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := startServerEnv(t, repo, append(os.Environ(), tc.env...), append(tc.args, "--backend-isolation", "process")...)
			workers := children(t, srv.PID())
			if len(workers) != 1 {
				t.Fatalf("server has %d child processes, want its one worker", len(workers))
			}
			if got := envOf(t, workers[0], "GOGC"); got != tc.want {
				t.Errorf("worker's GOGC = %q, want %q", got, tc.want)
			}
		})
	}
}
