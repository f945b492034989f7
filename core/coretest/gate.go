package coretest

import (
	"sync"
	"testing"
)

// Gate holds back whatever waits on it until the test opens it, once. It is
// how a test keeps an execution running, or a request unanswered, for as
// long as it needs.
type Gate struct {
	ch   chan struct{}
	once sync.Once
}

// gates are the open-able gates of each test: a server's cleanup opens
// them before it stops, so that a failing test does not leave an execution
// waiting forever.
var (
	gatesMu sync.Mutex
	gates   = map[testing.TB][]*Gate{}
)

// NewGate returns a closed gate. It opens at t's cleanup at the latest, and
// before any server Start or Serve made for t stops.
func NewGate(t testing.TB) *Gate {
	g := &Gate{ch: make(chan struct{})}
	gatesMu.Lock()
	gates[t] = append(gates[t], g)
	gatesMu.Unlock()
	t.Cleanup(func() { openGates(t) })
	return g
}

// Open lets everything waiting on the gate through, now and later.
func (g *Gate) Open() { g.once.Do(func() { close(g.ch) }) }

// Wait blocks until the gate is open.
func (g *Gate) Wait() { <-g.ch }

// Opened is closed once the gate is open.
func (g *Gate) Opened() <-chan struct{} { return g.ch }

// openGates opens every gate made for t.
func openGates(t testing.TB) {
	gatesMu.Lock()
	list := gates[t]
	delete(gates, t)
	gatesMu.Unlock()
	for _, g := range list {
		g.Open()
	}
}
