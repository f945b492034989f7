package coretest

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// Agents is a Go-native core.RepoAgentProvider for tests: each agent does
// what the AgentFunc set for it says (nothing, when none was set), may be
// made to hang in an action until a gate opens (Hang), and every call is
// recorded (Log, WaitLog). Safe for concurrent use.
type Agents struct {
	mu      sync.Mutex
	funcs   map[string]AgentFunc
	hangs   map[string]*Gate // by "<agent> <action>"
	log     []string
	specs   []core.RepoAgentModelSpec
	changed chan struct{}
}

// AgentFunc is what an agent does when told act about the model spec
// describes: it returns the location the model should load from ("" keeps
// the current one; only for RepoActionLoad) and an error (which refuses a
// LOAD).
type AgentFunc func(act core.RepoAction, spec core.RepoAgentModelSpec) (location string, err error)

var _ core.RepoAgentProvider = (*Agents)(nil)

// NewAgents returns agents that do nothing but record.
func NewAgents() *Agents {
	return &Agents{funcs: map[string]AgentFunc{}, hangs: map[string]*Gate{}, changed: make(chan struct{})}
}

// Set makes agent name do f.
func (a *Agents) Set(name string, f AgentFunc) *Agents {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.funcs[name] = f
	return a
}

// Hang makes agent name wait for g when told act.
func (a *Agents) Hang(name string, act core.RepoAction, g *Gate) *Agents {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.hangs[name+" "+act.String()] = g
	return a
}

func (a *Agents) record(format string, args ...any) {
	a.mu.Lock()
	a.log = append(a.log, fmt.Sprintf(format, args...))
	close(a.changed)
	a.changed = make(chan struct{})
	a.mu.Unlock()
}

// Log returns the calls so far: "<agent> <model> new", "<agent> <model>
// <action>" (the action's name less its TRITONREPOAGENT_ACTION_ prefix),
// "<agent> <model> finalize".
func (a *Agents) Log() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.log)
}

// Specs returns the specs the agent models were made with, in order.
func (a *Agents) Specs() []core.RepoAgentModelSpec {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.specs)
}

// WaitLog waits until the log holds want's lines in order (the whole log
// equals want), failing the test after testenv.Patience.
func (a *Agents) WaitLog(t testing.TB, want ...string) {
	t.Helper()
	deadline := time.NewTimer(testenv.Patience)
	defer deadline.Stop()
	for {
		a.mu.Lock()
		got := slices.Clone(a.log)
		changed := a.changed
		a.mu.Unlock()
		if slices.Equal(got, want) {
			return
		}
		select {
		case <-changed:
		case <-deadline.C:
			t.Fatalf("coretest: agents' log after %v:\n got %q\nwant %q", testenv.Patience, got, want)
		}
	}
}

// NewModel implements core.RepoAgentProvider.
func (a *Agents) NewModel(name string, spec core.RepoAgentModelSpec) (core.RepoAgentModel, error) {
	a.mu.Lock()
	a.specs = append(a.specs, spec)
	a.mu.Unlock()
	a.record("%s %s new", name, spec.Model)
	return &agentModel{a: a, name: name, spec: spec, location: spec.Location}, nil
}

type agentModel struct {
	a        *Agents
	name     string
	spec     core.RepoAgentModelSpec
	mu       sync.Mutex
	location string
}

var actionNames = [...]string{"LOAD", "LOAD_COMPLETE", "LOAD_FAIL", "UNLOAD", "UNLOAD_COMPLETE"}

func (m *agentModel) Action(act core.RepoAction) error {
	m.a.mu.Lock()
	g := m.a.hangs[m.name+" "+act.String()]
	f := m.a.funcs[m.name]
	m.a.mu.Unlock()
	if g != nil {
		m.a.record("%s %s %s waits", m.name, m.spec.Model, actionNames[act])
		g.Wait()
	}
	m.a.record("%s %s %s", m.name, m.spec.Model, actionNames[act])
	if f == nil {
		return nil
	}
	loc, err := f(act, m.spec)
	if loc != "" && act == core.RepoActionLoad {
		m.mu.Lock()
		m.location = loc
		m.mu.Unlock()
	}
	return err
}

func (m *agentModel) Location() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.location
}

func (m *agentModel) Finalize() error {
	m.a.record("%s %s finalize", m.name, m.spec.Model)
	return nil
}
