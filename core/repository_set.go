package core

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"sync"
	"time"
)

// The model repositories a server serves can change while it runs: under
// explicit model control, repositories are registered and unregistered
// (Triton's TRITONSERVER_ServerRegisterModelRepository), and under poll
// model control, PollRepository brings the loaded models in line with what
// the repositories hold.

// repositorySet is the server's model repositories and the models of
// registered ones served under another name. Safe for concurrent use.
type repositorySet struct {
	mu    sync.RWMutex
	paths []string
	// mapped: model name -> directory, for the subdirectories of
	// registered repositories served under a name of the mapping's.
	mapped map[string]mappedModel
}

type mappedModel struct{ repo, dir string }

// scan lists the model directories of the repositories by model name, as
// scanRepositories does, with the registered mappings applied: a mapped
// subdirectory is the model its mapping names, and only that.
func (r *repositorySet) scan() (map[string]string, map[string]error, error) {
	r.mu.RLock()
	paths := slices.Clone(r.paths)
	mapped := maps.Clone(r.mapped)
	r.mu.RUnlock()
	dirs, dupes, err := scanRepositories(paths)
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
		if prev, ok := dirs[name]; ok {
			dupes[name] = Errorf(CodeAlreadyExists, "model %q is in two repositories: %s and %s", name, prev, m.dir)
			continue
		}
		dirs[name] = m.dir
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
	if !isDir(path) {
		return Errorf(CodeInvalidArg, "failed to register '%s', repository not found", path)
	}
	s.repos.mu.Lock()
	defer s.repos.mu.Unlock()
	if slices.Contains(s.repos.paths, path) {
		return Errorf(CodeAlreadyExists, "model repository '%s' has already been registered", path)
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
	s.log.Infof("Model repository registered: %s", path)
	return nil
}

// UnregisterRepository removes a model repository and its mappings, under
// explicit model control, with Triton's rules and words. Its loaded models
// stay loaded until they are unloaded.
func (s *Server) UnregisterRepository(path string) error {
	if !s.opts.ExplicitModelControl {
		return Errorf(CodeUnsupported, "repository unregistration is not allowed if model control mode is not EXPLICIT")
	}
	s.repos.mu.Lock()
	defer s.repos.mu.Unlock()
	i := slices.Index(s.repos.paths, path)
	if i < 0 {
		return Errorf(CodeInvalidArg, "failed to unregister '%s', repository not found", path)
	}
	s.repos.paths = slices.Delete(s.repos.paths, i, i+1)
	maps.DeleteFunc(s.repos.mapped, func(_ string, m mappedModel) bool { return m.repo == path })
	s.log.Infof("Model repository unregistered: %s", path)
	return nil
}

// modTime is the newest modification time of a model directory and
// everything in it: a model changed when it is newer than at its last load.
func modTime(dir string) time.Time {
	var newest time.Time
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if info, err := d.Info(); err == nil && info.ModTime().After(newest) {
			newest = info.ModTime()
		}
		return nil
	})
	return newest
}

// pollState is what PollRepository remembers between polls.
type pollState struct {
	mu     sync.Mutex           // one poll at a time
	stamps map[string]time.Time // model -> modTime of its directory when it last loaded
}

// stampAll records the modification times of dirs (at start).
func (p *pollState) stampAll(dirs map[string]string) {
	p.stamps = make(map[string]time.Time, len(dirs))
	for name, dir := range dirs {
		p.stamps[name] = modTime(dir)
	}
}

// PollRepository brings the models in line with the repositories, under
// poll model control (PollModelControl), as Triton's
// TRITONSERVER_ServerPollModelRepository does: a model whose directory is
// new loads, one whose directory changed since it loaded (any file in it
// newer) loads again, and one whose directory is gone unloads and leaves
// the repository index. Loads that fail are recorded in the index, as at
// start. Polls run one at a time. Without poll control it fails with
// Triton's CodeUnavailable "polling is disabled".
func (s *Server) PollRepository(ctx context.Context) error {
	if !s.opts.PollModelControl {
		return Errorf(CodeUnavailable, "polling is disabled")
	}
	if s.stopping.Load() {
		return errShuttingDown()
	}
	s.poll.mu.Lock()
	defer s.poll.mu.Unlock()
	dirs, dupes, err := s.scanRepositories()
	if err != nil {
		return Errorf(CodeInternal, "poll the model repositories: %w", err)
	}
	var errs []error
	s.mu.RLock()
	var gone []string
	for name := range s.models {
		if _, ok := dirs[name]; !ok {
			gone = append(gone, name)
		}
	}
	s.mu.RUnlock()
	for _, name := range gone {
		delete(s.poll.stamps, name)
		errs = append(errs, s.forget(ctx, name)...)
	}
	var changed []string
	for name, dir := range dirs {
		stamp := modTime(dir)
		if old, ok := s.poll.stamps[name]; !ok || stamp.After(old) {
			changed = append(changed, name)
			s.poll.stamps[name] = stamp
		}
	}
	for name, err := range dupes {
		s.mu.Lock()
		s.models[name] = &modelEntry{name: name, err: err, status: []VersionStatus{{Name: name, Readiness: ModelUnavailable, Reason: err.Error()}}}
		s.mu.Unlock()
	}
	slices.Sort(changed)
	if len(changed) > 0 {
		s.log.Infof("poll: loading %v", changed)
		s.loadInOrder(changed, dirs)
		seen := map[string]bool{}
		for _, name := range changed {
			seen[name] = true
		}
		for _, name := range changed {
			s.reloadDependents(name, dirs, seen)
		}
	}
	return errors.Join(errs...)
}

// forget unloads a model whose directory is gone from the repositories and
// removes it from the index; the ensembles that run it become unavailable.
func (s *Server) forget(ctx context.Context, name string) []error {
	unlock, err := s.lockModel(ctx, name)
	if err != nil {
		return []error{fmt.Errorf("unload model %q, gone from the repositories: %w", name, err)}
	}
	defer unlock()
	s.mu.Lock()
	e := s.models[name]
	delete(s.models, name)
	s.mu.Unlock()
	if e == nil {
		return nil
	}
	s.log.Infof("poll: %q is gone from the repositories; unloading it", name)
	errs := s.retire(ctx, e)
	return append(errs, s.orphanDependents(ctx, name, nil)...)
}
