package core

import (
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/tritonhost/tritonhost/core/configpb"
	"github.com/tritonhost/tritonhost/core/modelconfig"
)

// Repository agents in a model's load and unload, as Triton runs them.
// When a model's configuration names agents (model_repository_agents),
// its load starts with each agent in turn, in the configuration's order:
// the agent model is made (Options.RepoAgents) with the model's current
// location and configuration, and told LOAD. An agent may refuse the load
// (its error is the model's reason) or point the model at other files,
// from which the next agent, and then the server, read the configuration
// and the version directories. Once the versions have loaded (at least
// one) every agent is told LOAD_COMPLETE, else LOAD_FAIL, in the reverse
// order; an agent whose LOAD was never delivered (the chain stopped before
// it) is only finalized. When the model unloads, the agents are told
// UNLOAD in order before its versions unload, and UNLOAD_COMPLETE in the
// reverse order after, then every agent model is finalized.
//
// The calls into one load's agents run one at a time, in order, on a
// goroutine of the chain's own; the server waits for each at most
// Options.BackendCallTimeout. A call that outlasts it fails a load (or is
// logged during an unload) and is left running; the calls after it, the
// chain's finalization among them, follow it when it returns.

// agentChain is the agents of one load of a model.
type agentChain struct {
	srv   *Server
	model string

	mu      sync.Mutex
	steps   []*agentStep // in the configuration's order
	ended   bool         // end began: an agent model made late is finalized at once
	queue   []func()
	running bool // a goroutine runs the queue
}

// agentStep is one agent of a chain.
type agentStep struct {
	name  string
	m     RepoAgentModel
	acted bool // LOAD was delivered: the lifecycle's end is owed (read and written on the chain's goroutine)
}

// startAgents runs the LOAD step of the agents cfg names for the model e
// describes, and returns the chain (nil when cfg names none) with the
// location and configuration the model loads from. On error the chain has
// been ended (LOAD_FAIL, finalization) and the error is the model's
// reason.
func (s *Server) startAgents(e *modelEntry, raw, cfg *configpb.ModelConfig) (*agentChain, string, *configpb.ModelConfig, *configpb.ModelConfig, error) {
	list := cfg.GetModelRepositoryAgents().GetAgents()
	if len(list) == 0 {
		return nil, e.dir, raw, cfg, nil
	}
	if s.opts.RepoAgents == nil {
		return nil, "", nil, nil, Errorf(CodeInvalidArg, "model %q: its configuration names repository agent %q, but the server has none (--repoagent-directory)", e.name, list[0].GetName())
	}
	location, err := filepath.Abs(e.dir)
	if err != nil {
		return nil, "", nil, nil, Errorf(CodeInternal, "model %q: %w", e.name, err)
	}
	c := &agentChain{srv: s, model: e.name}
	fail := func(err error) (*agentChain, string, *configpb.ModelConfig, *configpb.ModelConfig, error) {
		c.end(RepoActionLoadFail)
		return nil, "", nil, nil, err
	}
	for _, a := range list {
		js, err := modelconfig.ToJSON(cfg)
		if err != nil {
			return fail(Errorf(CodeInternal, "model %q: render config: %w", e.name, err))
		}
		spec := RepoAgentModelSpec{Model: s.modelName(e.name), Location: location, Config: js, Parameters: agentParameters(a)}
		name := a.GetName()
		st := &agentStep{name: name}
		err = c.do(fmt.Sprintf("repository agent %q: making its agent model", name), func() error {
			m, err := s.opts.RepoAgents.NewModel(name, spec)
			if err != nil {
				return err
			}
			st.m = m
			c.mu.Lock()
			late := c.ended
			if !late {
				c.steps = append(c.steps, st)
			}
			c.mu.Unlock()
			if late { // the load was given up on meanwhile
				if err := m.Finalize(); err != nil {
					s.log.Errorf("model %q: repository agent %q: finalize: %v", e.name, name, err)
				}
			}
			return nil
		})
		if err != nil {
			return fail(Errorf(CodeOf(err), "model %q: repository agent %q: %w", e.name, name, err))
		}
		err = c.do(fmt.Sprintf("repository agent %q: %v", name, RepoActionLoad), func() error {
			st.acted = true
			return st.m.Action(RepoActionLoad)
		})
		if err != nil {
			return fail(Errorf(CodeOf(err), "model %q: repository agent %q refused the load: %w", e.name, name, err))
		}
		next := st.m.Location()
		if next == location {
			continue
		}
		if !filepath.IsAbs(next) || !isDir(next) {
			return fail(Errorf(CodeInvalidArg, "model %q: repository agent %q gave the location %q, which is not a directory", e.name, name, next))
		}
		location = next
		if e.override == nil {
			if raw, cfg, err = s.readModelConfig(e.name, location); err != nil {
				return fail(Errorf(CodeOf(err), "model %q: in the location repository agent %q gave: %w", e.name, name, err))
			}
		}
		s.log.Infof("model %q: repository agent %q has the model load from %s", e.name, name, location)
	}
	return c, location, raw, cfg, nil
}

// agentParameters are an agent's parameters, sorted by name (the
// configuration holds them in a map).
func agentParameters(a *configpb.ModelRepositoryAgents_Agent) []RepoAgentSetting {
	out := make([]RepoAgentSetting, 0, len(a.GetParameters()))
	for k, v := range a.GetParameters() {
		out = append(out, RepoAgentSetting{Name: k, Value: v})
	}
	slices.SortFunc(out, func(x, y RepoAgentSetting) int {
		if x.Name < y.Name {
			return -1
		}
		if x.Name > y.Name {
			return 1
		}
		return 0
	})
	return out
}

// settleAgents ends the LOAD step of e's load: LOAD_COMPLETE when a version
// loaded (the chain then goes with the entry, for its unload), LOAD_FAIL
// and finalization otherwise.
func (s *Server) settleAgents(e *modelEntry, c *agentChain) {
	if c == nil {
		return
	}
	if len(e.versions) == 0 {
		c.end(RepoActionLoadFail)
		return
	}
	c.tell(RepoActionLoadComplete, true)
	e.agents = c
}

// unloading tells the agents the model is about to unload (UNLOAD, in
// order).
func (c *agentChain) unloading() { c.tell(RepoActionUnload, false) }

// unloaded tells the agents the model has unloaded (UNLOAD_COMPLETE, in
// the reverse order) and finalizes them.
func (c *agentChain) unloaded() { c.end(RepoActionUnloadComplete) }

// tell delivers act to every agent that received LOAD, in the reverse
// order when reverse is set, waiting for each; errors are logged.
func (c *agentChain) tell(act RepoAction, reverse bool) {
	for _, st := range c.ordered(reverse) {
		err := c.do(fmt.Sprintf("repository agent %q: %v", st.name, act), func() error {
			if !st.acted {
				return nil
			}
			return st.m.Action(act)
		})
		if err != nil {
			c.srv.log.Errorf("model %q: repository agent %q: %v: %v", c.model, st.name, act, err)
		}
	}
}

// end delivers act (LOAD_FAIL or UNLOAD_COMPLETE) to the agents that
// received LOAD, in the reverse order, then finalizes every agent model.
// It waits for each call, within its bound; calls given up on finish on
// the chain's goroutine.
func (c *agentChain) end(act RepoAction) {
	c.mu.Lock()
	c.ended = true
	c.mu.Unlock()
	c.tell(act, true)
	for _, st := range c.ordered(true) {
		if err := c.do(fmt.Sprintf("repository agent %q: TRITONREPOAGENT_ModelFinalize", st.name), st.m.Finalize); err != nil {
			c.srv.log.Errorf("model %q: repository agent %q: finalize: %v", c.model, st.name, err)
		}
	}
}

// ordered returns the chain's steps, reversed when reverse is set.
func (c *agentChain) ordered(reverse bool) []*agentStep {
	c.mu.Lock()
	steps := slices.Clone(c.steps)
	c.mu.Unlock()
	if reverse {
		slices.Reverse(steps)
	}
	return steps
}

// do runs f on the chain's goroutine after the calls queued before it, and
// waits for it at most the backend call timeout. A call that outlasts it
// is left running (its error is then lost); do returns an error saying so.
func (c *agentChain) do(what string, f func() error) error {
	done := make(chan error, 1)
	c.enqueue(func() { done <- f() })
	timeout := c.srv.opts.BackendCallTimeout
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case err := <-done:
		return err
	case <-timer.C:
		err := Errorf(CodeUnavailable, "model %q: %s did not return within %v (%s); it is left running, and the agents' calls after it follow once it returns",
			c.model, what, timeout, c.srv.opts.BackendCallTimeoutSetting)
		c.srv.log.Errorf("%v", err)
		return err
	}
}

// enqueue queues job; a goroutine runs the queue in order while it is not
// empty.
func (c *agentChain) enqueue(job func()) {
	c.mu.Lock()
	c.queue = append(c.queue, job)
	start := !c.running
	c.running = true
	c.mu.Unlock()
	if start {
		go c.run()
	}
}

func (c *agentChain) run() {
	for {
		c.mu.Lock()
		if len(c.queue) == 0 {
			c.running = false
			c.mu.Unlock()
			return
		}
		job := c.queue[0]
		c.queue[0] = nil
		c.queue = c.queue[1:]
		c.mu.Unlock()
		job()
	}
}
