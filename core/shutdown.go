package core

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Stop shuts the server down. ctx bounds it: Stop returns when the
// shutdown is done or when ctx ends, whichever comes first. In order:
//
//  1. New requests, loads and unloads are refused; Live and Ready turn
//     false; under model control POLL the poller stops (a poll in
//     progress loads nothing more).
//  2. Requests in flight may finish, until ctx ends.
//  3. Every model is unloaded, all at once: queued requests still run
//     (once ctx has ended they fail with CodeUnavailable instead), running
//     executions end, then the instances and the model are finalized, each
//     Finalize call bounded by BackendCallTimeout as well as by ctx. A load
//     or unload of a model in progress finishes first; a model whose load
//     finishes after Stop began is unloaded at once. Stop also waits
//     for the steps of a load or unload given up on earlier, which go on
//     in the background, each call bounded as above.
//  4. Once every model is unloaded, the response cache is closed (once the
//     calls into it running have returned; queued inserts are dropped),
//     then the backends, and the server's directory for the files of
//     load requests is removed.
//
// If ctx ends first (or a Finalize call outlasts BackendCallTimeout), Stop
// does not wait: it returns an error (CodeUnavailable) that names what it
// gave up on (requests still in flight, executions still running,
// Finalize calls that have not returned, loads still in a backend, per
// model) and leaves the backends open. What it gave up on goes on in the
// background and stays consistent: an execution that ends later lets its
// instances be finalized then, and a late response still reaches its
// ResponseFunc. Stop runs once; later calls return nil at once.
func (s *Server) Stop(ctx context.Context) error {
	if s.stopping.Swap(true) {
		return nil
	}
	s.stopPolling(ctx)
	if err := s.inflight.wait(ctx); err != nil {
		s.log.Warnf("stopping with %d request(s) still in flight: %v", s.inflight.count(), err)
	}
	var (
		mu      sync.Mutex
		errs    []error
		blocked []string // models whose lock Stop could not take
		wg      sync.WaitGroup
	)
	for _, name := range s.modelNames() {
		wg.Go(func() {
			unloaded, err := s.stopModel(ctx, name)
			mu.Lock()
			defer mu.Unlock()
			if !unloaded {
				blocked = append(blocked, name)
			}
			for _, e := range err {
				if !errors.As(e, new(*givenUpError)) { // what Stop gave up on is reported below, if still running
					errs = append(errs, e)
				}
			}
		})
	}
	wg.Wait()
	if err := s.closeCache(ctx); err != nil {
		errs = append(errs, err)
	}
	s.lifecycles.settle(ctx, s.opts.BackendCallTimeout)
	left := s.lifecycles.reports()
	for _, name := range blocked {
		if !slices.ContainsFunc(left, func(r string) bool { return strings.HasPrefix(r, fmt.Sprintf("model %q ", name)) }) {
			left = append(left, fmt.Sprintf("model %q: a load or unload of it did not finish", name))
		}
	}
	if n := s.inflight.count(); n > 0 {
		left = append([]string{fmt.Sprintf("%d request(s) still in flight", n)}, left...)
	}
	if len(left) > 0 {
		cause := fmt.Errorf("backend calls did not return within BackendCallTimeout (%v)", s.opts.BackendCallTimeout)
		if ctx.Err() != nil {
			cause = ctx.Err()
		}
		err := Errorf(CodeUnavailable, "stop gave up (%w) and left the backends open: %s", cause, strings.Join(left, "; "))
		s.log.Errorf("%v", err)
		return errors.Join(append(errs, err)...)
	}
	if err := s.opts.Backends.Close(); err != nil {
		errs = append(errs, fmt.Errorf("close backends: %w", err))
	}
	// Once nothing runs that may read them: a stop that gave up leaves
	// them to the next server's start, which removes them.
	s.closeUploads()
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
// progress has finished; unloaded is false when ctx ended first.
func (s *Server) stopModel(ctx context.Context, name string) (unloaded bool, errs []error) {
	unlock, err := s.lockModel(ctx, name)
	if err != nil {
		return false, nil
	}
	defer unlock()
	s.mu.Lock()
	e := s.models[name]
	delete(s.models, name)
	s.mu.Unlock()
	if e == nil {
		return true, nil
	}
	return true, s.retire(ctx, e)
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
