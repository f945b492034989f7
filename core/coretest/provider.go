package coretest

import (
	"slices"
	"sync"
	"testing"

	"github.com/tritonhost/tritonhost/core"
)

// Provider is a core.BackendProvider whose models run in Go: each does what
// the Behaviour set for it says (Echo when none was set). It records the
// server's lifecycle calls, every execution and every call a behaviour makes
// for a request. Its methods are safe for concurrent use, and Set may be
// called while the server runs.
type Provider struct {
	mu         sync.Mutex
	behaviours map[string]Behaviour
	failLoad   map[string]error
	failInst   map[string]error // by "model/instance"
	hangs      map[string]*Gate // by lifecycle event
	log        *journal
}

var _ core.BackendProvider = (*Provider)(nil)

// NewProvider returns a provider whose models echo their inputs.
func NewProvider() *Provider {
	return &Provider{behaviours: map[string]Behaviour{}, failLoad: map[string]error{}, failInst: map[string]error{}, hangs: map[string]*Gate{}, log: newJournal()}
}

// Set makes model behave as b from its next execution on.
func (p *Provider) Set(model string, b Behaviour) *Provider {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.behaviours[model] = b
	return p
}

// FailLoad makes loading model fail with err.
func (p *Provider) FailLoad(model string, err error) *Provider {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.failLoad[model] = err
	return p
}

// FailInstance makes creating the named instance of model fail with err.
func (p *Provider) FailInstance(model, instance string, err error) *Provider {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.failInst[model+"/"+instance] = err
	return p
}

// Hang makes the lifecycle call whose event is ev ("load M", "instance
// M/I", "finalize instance M/I" or "finalize model M"; see Events) wait for
// g before it does anything: a backend stuck in a call for as long as the
// test wants. The call records "ev waits" when it starts waiting; once g
// opens it does what it would have done, recording ev as usual (or "ev
// failed"). Every later call of that event passes the open gate at once.
func (p *Provider) Hang(ev string, g *Gate) *Provider {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.hangs[ev] = g
	return p
}

// hang waits at the gate of ev, if Hang set one.
func (p *Provider) hang(ev string) {
	p.mu.Lock()
	g := p.hangs[ev]
	p.mu.Unlock()
	if g == nil {
		return
	}
	p.log.event("%s waits", ev)
	g.Wait()
}

func (p *Provider) behaviour(model string) Behaviour {
	p.mu.Lock()
	defer p.mu.Unlock()
	if b := p.behaviours[model]; b != nil {
		return b
	}
	return Echo()
}

// LoadModel implements core.BackendProvider.
func (p *Provider) LoadModel(m *core.Model) (core.BackendModel, error) {
	p.hang("load " + m.Name())
	p.mu.Lock()
	err := p.failLoad[m.Name()]
	p.mu.Unlock()
	if err != nil {
		p.log.event("load %s failed", m.Name())
		return nil, err
	}
	p.log.event("load %s", m.Name())
	return &model{p: p, m: m}, nil
}

// Close implements core.BackendProvider.
func (p *Provider) Close() error {
	p.log.event("close")
	return nil
}

// Events returns the lifecycle calls so far, in order: "load M", "load M
// failed", "instance M/I", "instance M/I failed", "finalize instance M/I",
// "finalize model M", "close", and "<event> waits" for a call that Hang
// holds back.
func (p *Provider) Events() []string {
	p.log.mu.Lock()
	defer p.log.mu.Unlock()
	return slices.Clone(p.log.events)
}

// Executions returns the executions of model so far (of every model when
// model is ""), in the order they started.
func (p *Provider) Executions(model string) []Execution {
	p.log.mu.Lock()
	defer p.log.mu.Unlock()
	var out []Execution
	for _, e := range p.log.execs {
		if model == "" || e.Model == model {
			out = append(out, e)
		}
	}
	return out
}

// Batches returns the request ids of each execution of model, in order.
func (p *Provider) Batches(model string) [][]string {
	var out [][]string
	for _, e := range p.Executions(model) {
		out = append(out, e.IDs)
	}
	return out
}

// Executed reports whether request id reached Execute.
func (p *Provider) Executed(id string) bool {
	p.log.mu.Lock()
	defer p.log.mu.Unlock()
	return p.executedLocked(id)
}

func (p *Provider) executedLocked(id string) bool {
	for _, e := range p.log.execs {
		if slices.Contains(e.IDs, id) {
			return true
		}
	}
	return false
}

// Calls returns what behaviours did for request id, in order. Request ids
// are how the provider tells requests apart: give each one of a test its
// own.
func (p *Provider) Calls(id string) []Call {
	p.log.mu.Lock()
	defer p.log.mu.Unlock()
	return slices.Clone(p.log.calls[id])
}

// Count returns how many calls of op were made for request id.
func (p *Provider) Count(id, op string) int {
	p.log.mu.Lock()
	defer p.log.mu.Unlock()
	return p.countLocked(id, op)
}

func (p *Provider) countLocked(id, op string) int {
	n := 0
	for _, c := range p.log.calls[id] {
		if c.Op == op {
			n++
		}
	}
	return n
}

// Overlaps returns the instances ("model/instance") that ever ran two
// executions at once; the server must never let that happen.
func (p *Provider) Overlaps() []string {
	p.log.mu.Lock()
	defer p.log.mu.Unlock()
	return slices.Clone(p.log.overlap)
}

// Reached waits until every request in ids has reached Execute.
func (p *Provider) Reached(t testing.TB, ids ...string) {
	t.Helper()
	p.log.waitFor(t, "requests "+quoted(ids)+" to reach the backend", func() bool {
		for _, id := range ids {
			if !p.executedLocked(id) {
				return false
			}
		}
		return true
	})
}

// WaitCalls waits until behaviours made n calls of op for request id.
func (p *Provider) WaitCalls(t testing.TB, id, op string, n int) {
	t.Helper()
	p.log.waitFor(t, quoted([]string{id})+" to see "+op, func() bool { return p.countLocked(id, op) >= n })
}

// WaitEvent waits until the lifecycle event ev has happened.
func (p *Provider) WaitEvent(t testing.TB, ev string) {
	t.Helper()
	p.log.waitFor(t, "event "+ev, func() bool { return slices.Contains(p.log.events, ev) })
}

// model and instance are the core.BackendModel and core.BackendInstance of
// the provider.
type model struct {
	p *Provider
	m *core.Model
}

func (m *model) NewInstance(inst *core.Instance) (core.BackendInstance, error) {
	key := m.m.Name() + "/" + inst.Name()
	m.p.hang("instance " + key)
	m.p.mu.Lock()
	err := m.p.failInst[key]
	m.p.mu.Unlock()
	if err != nil {
		m.p.log.event("instance %s failed", key)
		return nil, err
	}
	m.p.log.event("instance %s", key)
	return &instance{p: m.p, inst: inst, key: key}, nil
}

func (*model) ParallelInstanceLoading() bool { return false }

func (m *model) Finalize() error {
	m.p.hang("finalize model " + m.m.Name())
	m.p.log.event("finalize model %s", m.m.Name())
	return nil
}

type instance struct {
	p    *Provider
	inst *core.Instance
	key  string
}

func (i *instance) Execute(batch []*core.Request) error {
	ids := make([]string, len(batch))
	for k, r := range batch {
		ids[k] = r.ID()
	}
	name := i.inst.Model().Name()
	i.p.log.begin(name, i.inst.Name(), i.key, ids)
	defer i.p.log.end(i.key)
	return i.p.behaviour(name)(&Exec{Instance: i.inst, Batch: batch, p: i.p})
}

func (i *instance) Finalize() error {
	i.p.hang("finalize instance " + i.key)
	i.p.log.event("finalize instance %s", i.key)
	return nil
}
