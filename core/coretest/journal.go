package coretest

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/tritonhost/tritonhost/internal/testenv"
)

// Execution is one Execute call as the fake backend saw it.
type Execution struct {
	Model    string
	Instance string   // the instance's name
	Index    int      // how many executions of that instance came before
	IDs      []string // the request ids of the batch, in order
}

// Call is one thing a behaviour did with a request, or noticed about it, and
// what the call returned. Ops are "Send", "Send(final)", "SendFinal",
// "Release", "Release(reschedule)", "Hold", "Drop", "OnCancel" (a cancel
// hook ran) and "Cancelled" (the backend saw Request.Cancelled).
type Call struct {
	Op  string
	Err error
}

// journal is what a Provider records, with a way to wait for it to change.
type journal struct {
	mu      sync.Mutex
	events  []string
	execs   []Execution
	calls   map[string][]Call // by request id
	running map[string]int    // executions running, by model/instance
	overlap []string          // model/instance keys that ran two executions at once
	perInst map[string]int    // executions so far, by model/instance
	changed chan struct{}     // closed and replaced at every change
}

func newJournal() *journal {
	return &journal{calls: map[string][]Call{}, running: map[string]int{}, perInst: map[string]int{}, changed: make(chan struct{})}
}

// touchLocked wakes the waiters.
func (j *journal) touchLocked() {
	close(j.changed)
	j.changed = make(chan struct{})
}

func (j *journal) event(format string, args ...any) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.events = append(j.events, fmt.Sprintf(format, args...))
	j.touchLocked()
}

// begin records the start of an execution on the instance key.
func (j *journal) begin(model, instance, key string, ids []string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.running[key]++
	if j.running[key] > 1 && !slices.Contains(j.overlap, key) {
		j.overlap = append(j.overlap, key)
	}
	j.execs = append(j.execs, Execution{Model: model, Instance: instance, Index: j.perInst[key], IDs: ids})
	j.perInst[key]++
	j.touchLocked()
}

func (j *journal) end(key string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.running[key]--
	j.touchLocked()
}

func (j *journal) call(id, op string, err error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.calls[id] = append(j.calls[id], Call{Op: op, Err: err})
	j.touchLocked()
}

// waitFor waits until cond, called with the journal locked, holds; the test
// fails after testenv.Patience, naming what it waited for.
func (j *journal) waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.NewTimer(testenv.Patience)
	defer deadline.Stop()
	for {
		j.mu.Lock()
		ok := cond()
		changed := j.changed
		j.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-changed:
		case <-deadline.C:
			t.Fatalf("coretest: gave up waiting after %v for %s", testenv.Patience, what)
		}
	}
}
