package core

import (
	"maps"
	"path/filepath"
	"slices"
	"sync"
)

// The model repositories a server serves can change while it runs: under
// explicit model control, repositories are registered and unregistered
// (Triton's TRITONSERVER_ServerRegisterModelRepository), and under poll
// model control, Poll brings the loaded models in line with what the
// repositories hold (poll.go).

// repositorySet is the server's model repositories and the models of
// registered ones served under another name. Safe for concurrent use.
type repositorySet struct {
	mu    sync.RWMutex
	paths []string
	// mapped: model name -> directory, for the subdirectories of
	// registered repositories served under a name of the mapping's.
	mapped map[string]mappedModel
	// namespacing: each repository is a namespace (Options.ModelNamespacing).
	namespacing bool
}

type mappedModel struct{ repo, dir string }

// scan lists the model directories of the repositories by model key, as
// scanRepositories does, with the registered mappings applied: a mapped
// subdirectory is the model its mapping names, and only that (in its
// repository's namespace, with namespacing).
func (r *repositorySet) scan() (map[string]string, map[string]error, error) {
	r.mu.RLock()
	paths := slices.Clone(r.paths)
	mapped := maps.Clone(r.mapped)
	r.mu.RUnlock()
	dirs, dupes, err := scanRepositories(paths, r.namespacing)
	if err != nil || len(mapped) == 0 {
		return dirs, dupes, err
	}
	for name, dir := range dirs {
		for _, m := range mapped {
			if m.dir == dir {
				delete(dirs, name)
			}
		}
	}
	for name, m := range mapped {
		key := name
		if r.namespacing {
			key = modelKey(m.repo, name)
		}
		if prev, ok := dirs[key]; ok {
			dupes[key] = Errorf(CodeAlreadyExists, "model %q is in two repositories: %s and %s", name, prev, m.dir)
			continue
		}
		dirs[key] = m.dir
	}
	return dirs, dupes, nil
}

// scanRepositories lists the model directories of the server's
// repositories (see repositorySet.scan).
func (s *Server) scanRepositories() (map[string]string, map[string]error, error) {
	return s.repos.scan()
}

// Repositories returns the model repositories the server serves, in the
// order they were given or registered.
func (s *Server) Repositories() []string {
	s.repos.mu.RLock()
	defer s.repos.mu.RUnlock()
	return slices.Clone(s.repos.paths)
}

// RegisterRepository adds a model repository, under explicit model
// control, with Triton's rules and words: the models in it can then be
// loaded by name; mapping names models served under another name (model
// name -> its subdirectory of path). Nothing loads by itself.
func (s *Server) RegisterRepository(path string, mapping map[string]string) error {
	if !s.opts.ExplicitModelControl {
		return Errorf(CodeUnsupported, "repository registration is not allowed if model control mode is not EXPLICIT")
	}
	given := path
	path, err := s.localRepository(given) // a remote repository's local copy (remote_repository.go)
	if err != nil {
		return Errorf(CodeInvalidArg, "failed to register '%s': %w", given, err)
	}
	if !isDir(path) {
		return Errorf(CodeInvalidArg, "failed to register '%s', repository not found", given)
	}
	s.repos.mu.Lock()
	defer s.repos.mu.Unlock()
	if slices.Contains(s.repos.paths, path) {
		return Errorf(CodeAlreadyExists, "model repository '%s' has already been registered", given)
	}
	for name := range mapping {
		if _, ok := s.repos.mapped[name]; ok {
			return Errorf(CodeAlreadyExists, "failed to register '%s', there is a conflicting mapping for '%s'", name, name)
		}
	}
	s.repos.paths = append(s.repos.paths, path)
	if s.repos.mapped == nil && len(mapping) > 0 {
		s.repos.mapped = map[string]mappedModel{}
	}
	for name, sub := range mapping {
		s.repos.mapped[name] = mappedModel{repo: path, dir: filepath.Join(path, sub)}
	}
	s.log.Infof("Model repository registered: %s", given)
	return nil
}

// UnregisterRepository removes a model repository and its mappings, under
// explicit model control, with Triton's rules and words. Its loaded models
// stay loaded until they are unloaded.
func (s *Server) UnregisterRepository(path string) error {
	if !s.opts.ExplicitModelControl {
		return Errorf(CodeUnsupported, "repository unregistration is not allowed if model control mode is not EXPLICIT")
	}
	given := path
	if dir, err := s.localRepository(given); err == nil {
		path = dir
	}
	s.repos.mu.Lock()
	defer s.repos.mu.Unlock()
	i := slices.Index(s.repos.paths, path)
	if i < 0 {
		return Errorf(CodeInvalidArg, "failed to unregister '%s', repository not found", given)
	}
	s.repos.paths = slices.Delete(s.repos.paths, i, i+1)
	maps.DeleteFunc(s.repos.mapped, func(_ string, m mappedModel) bool { return m.repo == path })
	s.log.Infof("Model repository unregistered: %s", given)
	return nil
}
