package coretest

import (
	"sync"
	"testing"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// Tracer is a core.TraceStarter for tests: it traces the requests of the
// models it names (all when none), and every step of a traced request, at
// its level, and keeps the finished traces.
type Tracer struct {
	Level  core.TraceLevel // TIMESTAMPS when zero
	Models []string

	mu       sync.Mutex
	finished []*core.Trace
}

// Sample is not called: StartTrace decides.
func (tr *Tracer) Sample(string, int64) bool { return false }

// StartTrace traces the models named and the children of traced requests,
// attaching its Level as the trace's data.
func (tr *Tracer) StartTrace(s core.TraceStart) *core.Trace {
	traced := s.Parent != nil || len(tr.Models) == 0
	for _, m := range tr.Models {
		traced = traced || m == s.Model
	}
	if !traced {
		return nil
	}
	level := tr.Level
	if level == 0 {
		level = core.TraceLevelTimestamps
	}
	t := core.NewTrace(s, level)
	t.SetData(s.Context)
	return t
}

// Finish keeps the trace.
func (tr *Tracer) Finish(t *core.Trace) {
	tr.mu.Lock()
	tr.finished = append(tr.finished, t)
	tr.mu.Unlock()
}

// Wait waits until n traces have finished and returns them, in the order
// they finished.
func (tr *Tracer) Wait(t testing.TB, n int) []*core.Trace {
	t.Helper()
	testenv.WaitUntil(t, "finished traces", func() bool {
		tr.mu.Lock()
		defer tr.mu.Unlock()
		return len(tr.finished) >= n
	})
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return append([]*core.Trace(nil), tr.finished...)
}
