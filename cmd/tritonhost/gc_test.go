package main

import (
	"os"
	"strings"
	"testing"
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
