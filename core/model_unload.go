package core

import (
	"context"
	"errors"
	"slices"
)

// UnloadModelAndDependents unloads a model as UnloadModel does, then the
// models its steps run (an ensemble's composing models, and theirs in
// turn) that no other loaded ensemble runs, as Triton's unload with
// "unload_dependents" does.
func (s *Server) UnloadModelAndDependents(ctx context.Context, name string) error {
	var errs []error
	for _, key := range s.unloadKeys(name) {
		if err := s.unloadWithSteps(ctx, key); err != nil {
			errs = append(errs, err)
		}
	}
	return joinErrors(errs)
}

// unloadWithSteps is UnloadModelAndDependents for the model whose key is
// key.
func (s *Server) unloadWithSteps(ctx context.Context, key string) error {
	steps := s.stepsOf(key)
	if err := s.unloadModel(ctx, key, nil); err != nil {
		return err
	}
	return errors.Join(s.unloadSteps(ctx, steps)...)
}

// StartUnload begins to unload a model (and, with dependents, the models
// UnloadModelAndDependents unloads with it) and returns once the model
// takes no more requests, as Triton's TRITONSERVER_ServerUnloadModel does:
// a backend may unload the model it serves from its own Execute, whose
// request the unload would otherwise wait for. Errors found before that
// point (no explicit model control, a model no repository has, a load or
// unload of it that does not end while ctx lasts) are returned; those of
// the unload itself are logged. The versions unload in the background, the
// requests queued for them running for at most BackendCallTimeout. With
// Options.ModelNamespacing, a name that several repositories hold unloads
// the model in each of them.
func (s *Server) StartUnload(ctx context.Context, name string, dependents bool) error {
	var errs []error
	for _, key := range s.unloadKeys(name) {
		if err := s.startUnload(ctx, key, dependents); err != nil {
			errs = append(errs, err)
		}
	}
	return joinErrors(errs)
}

// startUnload is StartUnload for the model whose key is name.
func (s *Server) startUnload(ctx context.Context, name string, dependents bool) error {
	var steps []string
	if dependents {
		steps = s.stepsOf(name)
	}
	detached := make(chan struct{})
	failed := make(chan error, 1)
	go func() {
		bg, cancel := context.WithTimeout(context.Background(), s.opts.BackendCallTimeout)
		defer cancel()
		err := s.unloadModel(bg, name, func() { close(detached) })
		select {
		case <-detached:
		default: // refused before it started
			failed <- err
			return
		}
		errs := append([]error{err}, s.unloadSteps(bg, steps)...)
		if err := errors.Join(errs...); err != nil {
			s.log.Errorf("unload model %q: %v", name, err)
		}
	}()
	select {
	case <-detached:
		return nil
	case err := <-failed:
		return err
	case <-ctx.Done():
		return Errorf(CodeUnavailable, "unload model %q: %v", name, ctx.Err())
	}
}

// stepsOf returns the models a model's steps run, as last loaded.
func (s *Server) stepsOf(name string) []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if e := s.models[name]; e != nil {
		return slices.Clone(e.steps)
	}
	return nil
}

// unloadSteps unloads each of steps, and the models its own steps run in
// turn, that no loaded ensemble runs any more.
func (s *Server) unloadSteps(ctx context.Context, steps []string) []error {
	var errs []error
	for _, st := range steps {
		if s.runByLoadedEnsemble(st) {
			continue
		}
		s.log.Infof("unloading %q, which no loaded ensemble runs any more", st)
		if err := s.unloadWithSteps(ctx, st); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// runByLoadedEnsemble reports whether a loaded ensemble runs name.
func (s *Server) runByLoadedEnsemble(name string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, e := range s.models {
		if len(e.versions) > 0 && slices.Contains(e.steps, name) {
			return true
		}
	}
	return false
}
