// Package tracetest holds what the tests of several packages need of
// tracing: a trace manager set as Triton's trace endpoint tests start the
// server, and a trace file read back as Triton writes it. It is for tests
// only.
package tracetest

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/internal/trace"
)

// UnittestSetting is the setting Triton's trace endpoint tests start with:
// mode triton, file <dir>/global_unittest.log, level TIMESTAMPS, rate 1.
func UnittestSetting(dir string) trace.Setting {
	s := trace.DefaultSetting()
	s.Level, s.Rate, s.File = core.TraceLevelTimestamps, 1, filepath.Join(dir, "global_unittest.log")
	return s
}

// NewManager returns a trace manager made with opts, closed at cleanup
// (an error closing it fails the test).
func NewManager(t testing.TB, opts trace.Options) *trace.Manager {
	t.Helper()
	m, err := trace.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := m.Close(ctx); err != nil {
			t.Errorf("closing the trace manager: %v", err)
		}
	})
	return m
}

// ReadFile reads a trace file as Triton writes it: a JSON array of
// objects.
func ReadFile(t testing.TB, path string) []map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatalf("%s is not Triton's JSON array of objects: %v\n%s", path, err, data)
	}
	return out
}
