package coretest

import (
	"context"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// Collector is a core.ResponseFunc (its Receive method) that keeps what one
// request received and checks the ResponseFunc contract as calls arrive:
// they never overlap, exactly one is final, and none comes after it.
type Collector struct {
	mu        sync.Mutex
	inCall    bool
	responses []*core.Response
	finals    int
	flagsOnly bool
	broken    []string // contract violations, in order
	done      chan struct{}
}

// Result is what a request received.
type Result struct {
	Responses      []*core.Response // every response, in the order delivered
	FlagsOnlyFinal bool             // the final call carried no response
}

// NewCollector returns an empty collector.
func NewCollector() *Collector { return &Collector{done: make(chan struct{})} }

// Receive is the core.ResponseFunc.
func (c *Collector) Receive(resp *core.Response, final bool) {
	c.mu.Lock()
	if c.inCall {
		c.broken = append(c.broken, "two calls overlapped")
	}
	if c.finals > 0 {
		c.broken = append(c.broken, "a call came after the final one")
	}
	c.inCall = true
	if resp != nil {
		c.responses = append(c.responses, resp)
	}
	if final {
		c.finals++
		c.flagsOnly = resp == nil
	}
	c.mu.Unlock()
	runtime.Gosched() // give an overlapping call a chance to be seen
	c.mu.Lock()
	c.inCall = false
	first := final && c.finals == 1
	c.mu.Unlock()
	if first {
		close(c.done)
	}
}

// Done is closed when the final response has arrived.
func (c *Collector) Done() <-chan struct{} { return c.done }

// Finished reports whether the final response has arrived.
func (c *Collector) Finished() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// Snapshot returns what arrived so far, without waiting.
func (c *Collector) Snapshot() Result {
	c.mu.Lock()
	defer c.mu.Unlock()
	return Result{Responses: slices.Clone(c.responses), FlagsOnlyFinal: c.flagsOnly}
}

// Check fails the test if the contract was broken so far.
func (c *Collector) Check(t testing.TB) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, b := range c.broken {
		t.Errorf("response function contract broken: %s", b)
	}
	c.broken = nil
}

// Wait waits for the final response (failing the test after testenv.Patience),
// checks the contract and returns what arrived.
func (c *Collector) Wait(t testing.TB) Result {
	t.Helper()
	select {
	case <-c.done:
	case <-time.After(testenv.Patience):
		t.Fatalf("coretest: no final response after %v; got %d response(s)", testenv.Patience, len(c.Snapshot().Responses))
	}
	c.Check(t)
	return c.Snapshot()
}

// Single waits for the final response and returns it, failing the test
// unless exactly one response arrived and it was the final one.
func (c *Collector) Single(t testing.TB) *core.Response {
	t.Helper()
	res := c.Wait(t)
	if len(res.Responses) != 1 || res.FlagsOnlyFinal {
		t.Fatalf("got %d response(s) (flags-only final: %v), want exactly one final response", len(res.Responses), res.FlagsOnlyFinal)
	}
	return res.Responses[0]
}

// Err waits for a single final response and returns its error.
func (c *Collector) Err(t testing.TB) error {
	t.Helper()
	return c.Single(t).Err
}

// Infer submits req to srv and returns its collector; Infer's error fails
// the test.
func Infer(t testing.TB, srv *core.Server, req *core.Submission) *Collector {
	t.Helper()
	return InferCtx(t, context.Background(), srv, req)
}

// InferCtx is Infer with a context that can cancel the request.
func InferCtx(t testing.TB, ctx context.Context, srv *core.Server, req *core.Submission) *Collector {
	t.Helper()
	c := NewCollector()
	if err := srv.Infer(ctx, req, c.Receive); err != nil {
		t.Fatalf("Infer %q: %v", req.ID, err)
	}
	return c
}

// Succeeded waits for the single response of each collector's request and
// fails the test on an error response.
func Succeeded(t testing.TB, replies ...*Collector) {
	t.Helper()
	for _, c := range replies {
		if err := c.Err(t); err != nil {
			t.Errorf("response: %v", err)
		}
	}
}
