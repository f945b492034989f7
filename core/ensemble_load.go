package core

import (
	"context"
	"slices"
	"sort"
	"sync"
)

// Loading in dependency order: an ensemble loads after the models its
// steps run, and goes when one of them goes, as Triton's repository
// manager orders them.

// withSteps returns names and, transitively, the models their steps run
// that the repository holds (dirs), sorted: loading an ensemble loads the
// models it runs, as Triton polls them with it.
func (s *Server) withSteps(names []string, dirs map[string]string) []string {
	set := map[string]bool{}
	var visit func(string)
	visit = func(n string) {
		if set[n] {
			return
		}
		set[n] = true
		for _, st := range s.configuredSteps(n, dirs[n], dirs) {
			if _, ok := dirs[st]; ok {
				visit(st)
			}
		}
	}
	for _, n := range names {
		visit(n)
	}
	out := make([]string, 0, len(set))
	for n := range set {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// loadInOrder loads names (each under its model lock), at most
// LoadConcurrency at once, each ensemble once the models its steps run
// that are among names have loaded or failed. An ensemble in a cycle
// waits for nothing: its load finds the cycle and fails, and those that
// depend on it follow.
func (s *Server) loadInOrder(names []string, dirs map[string]string) {
	deps := make(map[string][]string, len(names))
	done := make(map[string]chan struct{}, len(names))
	for _, n := range names {
		for _, st := range s.configuredSteps(n, dirs[n], dirs) {
			if slices.Contains(names, st) {
				deps[n] = append(deps[n], st)
			}
		}
		done[n] = make(chan struct{})
	}
	sem := make(chan struct{}, s.opts.LoadConcurrency)
	var wg sync.WaitGroup
	for _, n := range names {
		wg.Go(func() {
			defer close(done[n])
			if !inCycle(n, deps) {
				for _, d := range deps[n] {
					<-done[d]
				}
			}
			sem <- struct{}{}
			defer func() { <-sem }()
			unlock, _ := s.lockModel(context.Background(), n)
			defer unlock()
			s.loadEntry(&modelEntry{name: n, dir: dirs[n]})
		})
	}
	wg.Wait()
}

// inCycle reports whether n depends on itself through deps.
func inCycle(n string, deps map[string][]string) bool {
	seen := map[string]bool{}
	queue := slices.Clone(deps[n])
	for len(queue) > 0 {
		d := queue[0]
		queue = queue[1:]
		if d == n {
			return true
		}
		if !seen[d] {
			seen[d] = true
			queue = append(queue, deps[d]...)
		}
	}
	return false
}

// loadWithDependencies is LoadModelWith's work once e, the entry to
// load, is known: first the models e's steps run (transitively) that the
// repositories hold and that have no loaded version, deepest first; then
// e; then the ensembles that run e's model, which are loaded again so that
// they check it anew (and come back if its unload had taken them away).
func (s *Server) loadWithDependencies(e *modelEntry) error {
	dirs, _, err := s.scanRepositories()
	if err != nil {
		s.removeFiles(e)
		return pollFailure(e.name, err)
	}
	for _, dep := range s.unloadedSteps(e, dirs) {
		_ = s.loadLocked(&modelEntry{name: dep, dir: dirs[dep]})
	}
	err = s.loadLocked(e)
	s.reloadDependents(e.name, dirs, map[string]bool{e.name: true})
	return err
}

// loadLocked loads one model entry under its lock, unless the server
// stops.
func (s *Server) loadLocked(e *modelEntry) error {
	unlock, _ := s.lockModel(context.Background(), e.name)
	defer unlock()
	if s.stopping.Load() {
		s.removeFiles(e)
		return errShuttingDown()
	}
	return s.loadEntry(e)
}

// unloadedSteps returns the models e's steps run, transitively, that the
// repository holds and that have no loaded version, each after the models
// its own steps run. e's steps are those of its load request's
// configuration when it has one.
func (s *Server) unloadedSteps(e *modelEntry, dirs map[string]string) []string {
	var out []string
	seen := map[string]bool{e.name: true}
	var visit func(string)
	visit = func(n string) {
		steps := s.configuredSteps(n, dirs[n], dirs)
		if n == e.name {
			steps = s.configuredSteps(n, e.dir, dirs)
			if e.override != nil {
				cfg := cloneConfig(e.override)
				s.setStepNamespaces(n, cfg, dirs)
				steps = stepModels(cfg)
			}
		}
		for _, st := range steps {
			if _, ok := dirs[st]; !ok || seen[st] {
				continue
			}
			seen[st] = true
			visit(st)
			if !s.hasLoadedVersion(st) {
				out = append(out, st)
			}
		}
	}
	visit(e.name)
	return out
}

func (s *Server) hasLoadedVersion(name string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	e := s.models[name]
	return e != nil && len(e.versions) > 0
}

// dependents returns the ensembles whose steps run name and that are
// loaded, or were unloaded with a model they run (orphaned), sorted.
func (s *Server) dependents(name string) []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []string
	for n, e := range s.models {
		if slices.Contains(e.steps, name) && (len(e.versions) > 0 || e.orphaned) {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// reloadDependents loads again the ensembles that run name, and those
// that run them, each once.
func (s *Server) reloadDependents(name string, dirs map[string]string, seen map[string]bool) {
	for _, dep := range s.dependents(name) {
		if seen[dep] || dirs[dep] == "" {
			continue
		}
		seen[dep] = true
		if err := s.loadLocked(&modelEntry{name: dep, dir: dirs[dep]}); err != nil {
			s.log.Warnf("ensemble %q did not load again after %q loaded: %v", dep, name, err)
		}
		s.reloadDependents(dep, dirs, seen)
	}
}

// orphanDependents unloads the ensembles that run name, which was just
// unloaded (cause nil) or is itself an ensemble unloaded with a model it
// runs (cause its reason), and those that run them: an ensemble whose step
// model is gone cannot serve. Each keeps Triton's reason in the index and
// loads again when LoadModel brings the model back. The caller holds
// name's lock; the dependents' locks are taken after it, as everywhere.
func (s *Server) orphanDependents(ctx context.Context, name string, cause error) []error {
	var errs []error
	for _, dep := range s.dependents(name) {
		unlock, err := s.lockModel(ctx, dep)
		if err != nil {
			errs = append(errs, Errorf(CodeUnavailable, "unload ensemble %q, which runs %q: %w", dep, name, err))
			continue
		}
		reason := Errorf(CodeUnavailable, "ensemble %s contains models that are not available or ambiguous: %s", dep, name)
		if cause != nil {
			reason = Errorf(CodeUnavailable, "ensemble '%s' depends on '%s' which is not valid. Model '%s' failed with error: %v", dep, name, name, cause)
		}
		s.mu.Lock()
		e := s.models[dep]
		if e == nil { // Stop took it meanwhile
			s.mu.Unlock()
			unlock()
			continue
		}
		s.models[dep] = &modelEntry{name: dep, dir: e.dir, steps: e.steps, orphaned: true, err: reason,
			status: []VersionStatus{{Name: dep, Readiness: ModelUnavailable, Reason: reason.Error()}}}
		s.mu.Unlock()
		s.log.Warnf("%v: unloading it", reason)
		errs = append(errs, s.unloadVersions(ctx, e)...)
		errs = append(errs, s.orphanDependents(ctx, dep, reason)...)
		unlock()
	}
	return errs
}
