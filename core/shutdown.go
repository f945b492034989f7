package core

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
)

// Stop shuts the server down: new requests, loads and unloads are refused,
// in-flight requests finish (until ctx ends), every model is unloaded (once
// a load or unload of it in progress has finished, until ctx ends; a model
// whose load finishes after Stop began is unloaded at once) and the
// backends closed. If ctx ends first, queued requests fail and Stop still
// waits for running executions and backend finalization.
func (s *Server) Stop(ctx context.Context) error {
	if s.stopping.Swap(true) {
		return nil
	}
	drainErr := s.inflight.wait(ctx)
	if drainErr != nil {
		s.log.Warnf("stopping with %d request(s) still in flight: %v", s.inflight.count(), drainErr)
	}
	var errs []error
	for _, name := range s.modelNames() {
		if err := s.stopModel(ctx, name); err != nil {
			errs = append(errs, err)
		}
	}
	if err := s.opts.Backends.Close(); err != nil {
		errs = append(errs, fmt.Errorf("close backends: %w", err))
	}
	return errors.Join(errs...)
}

// modelNames returns the names of the models Stop unloads: those in the
// repository index and those a load or unload holds the lock of.
func (s *Server) modelNames() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	names := make([]string, 0, len(s.models)+len(s.locks))
	for name := range s.models {
		names = append(names, name)
	}
	for name := range s.locks {
		if s.models[name] == nil {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// stopModel unloads model name for Stop, once a load or unload of it in
// progress has finished.
func (s *Server) stopModel(ctx context.Context, name string) error {
	unlock, err := s.lockModel(ctx, name)
	if err != nil {
		return Errorf(CodeUnavailable, "model %q: a load or unload of it did not finish (%w)", name, err)
	}
	defer unlock()
	s.mu.Lock()
	e := s.models[name]
	delete(s.models, name)
	s.mu.Unlock()
	if e == nil {
		return nil
	}
	return s.unloadVersions(ctx, e)
}

// inflightCounter counts requests and lets Stop wait for zero.
type inflightCounter struct {
	mu   sync.Mutex
	n    int
	zero chan struct{} // closed when n drops to 0 while someone waits
}

func (c *inflightCounter) add() {
	c.mu.Lock()
	c.n++
	c.mu.Unlock()
}

func (c *inflightCounter) done() {
	c.mu.Lock()
	c.n--
	if c.n == 0 && c.zero != nil {
		close(c.zero)
		c.zero = nil
	}
	c.mu.Unlock()
}

func (c *inflightCounter) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

func (c *inflightCounter) wait(ctx context.Context) error {
	c.mu.Lock()
	if c.n == 0 {
		c.mu.Unlock()
		return nil
	}
	if c.zero == nil {
		c.zero = make(chan struct{})
	}
	ch := c.zero
	c.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
