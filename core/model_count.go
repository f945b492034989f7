package core

import "errors"

// DefaultMaxModels is Options.MaxModels unless told otherwise: 10000. Each
// loaded model holds its configuration, its backend's state and at least
// one instance (a goroutine, and an execution context in its backend);
// 10000 is more than any repository Triton serves in practice holds, and
// well within what the server's maps and the repository index handle, so
// it bounds a client that loads models without end (explicit control,
// files sent with each load) without getting in a deployment's way.
const DefaultMaxModels = 10000

// errTooManyModels ends, and is matched (errors.Is) by, the refusal of a
// load past Options.MaxModels.
var errTooManyModels = errors.New("unload one first")

// reserveModel counts a load of model name against Options.MaxModels, or
// refuses it (CodeUnavailable, naming the setting): a model with a
// version loaded already counts, and its reload counts nothing more. The
// caller holds the model's lock, and calls release once the outcome of
// the load is installed (then the model counts if a version loaded).
func (s *Server) reserveModel(name string) (release func(), err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e := s.models[name]; e != nil && len(e.versions) > 0 {
		return func() {}, nil
	}
	if err := s.modelRoom(name); err != nil {
		return nil, err
	}
	s.firstLoads++
	return func() {
		s.mu.Lock()
		s.firstLoads--
		s.mu.Unlock()
	}, nil
}

// checkModelRoom refuses a load of model name, as reserveModel would, when
// the server holds as many models as it may; a load request refused so
// writes none of its files.
func (s *Server) checkModelRoom(name string) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if e := s.models[name]; e != nil && len(e.versions) > 0 {
		return nil
	}
	return s.modelRoom(name)
}

// modelRoom refuses a first load of model name when the models with a
// version loaded and those loading for the first time are as many as
// Options.MaxModels. The caller holds s.mu.
func (s *Server) modelRoom(name string) error {
	n := s.firstLoads
	for _, e := range s.models {
		if len(e.versions) > 0 {
			n++
		}
	}
	if n < s.opts.MaxModels {
		return nil
	}
	return Errorf(CodeUnavailable, "model %q: %d models are loaded or loading, as many as the server holds (%s); %w",
		name, n, s.opts.MaxModelsSetting, errTooManyModels)
}
