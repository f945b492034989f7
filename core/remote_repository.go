package core

import (
	"context"
	"errors"
	"maps"
	"path/filepath"
	"slices"
)

// Model repositories in object storage (s3://, gs://, as://), as Triton
// reads them: the server sees only local copies, which
// Options.RemoteRepositories keeps (package internal/objstore/repocache
// with the providers' SDKs). A remote repository path stands for the local
// directory its copy is in; before models are loaded (at start, at each
// poll, at an explicit load) the copies of the models concerned are
// refreshed, and a model whose copy could not be refreshed fails that
// load with the reason while its serving versions stay in place.

// RemoteRepositories keeps local copies of model repositories that are
// not local directories. Safe for concurrent use.
type RemoteRepositories interface {
	// Local returns the local directory that holds the copy of the
	// repository at path, ok false when path is not a remote repository
	// (a local directory).
	Local(path string) (dir string, ok bool, err error)
	// Refresh brings the copies of the named models (every model when
	// names is nil) of those repos it keeps in line with the object
	// storage, reading only what changed, and returns by model name why a
	// model's copy could not be refreshed (that copy stays as it was);
	// the key "" holds the errors of repositories that could not be read
	// at all.
	Refresh(ctx context.Context, repos []string, names []string) map[string]error
}

// localRepository returns the directory the server reads for the
// repository path: its local copy for a remote one, path itself
// otherwise.
func (s *Server) localRepository(path string) (string, error) {
	if s.opts.RemoteRepositories == nil {
		return path, nil
	}
	dir, ok, err := s.opts.RemoteRepositories.Local(path)
	if err != nil {
		return "", Errorf(CodeInvalidArg, "model repository %q: %w", path, err)
	}
	if !ok {
		return path, nil
	}
	return dir, nil
}

// refreshRemote refreshes the copies of the named models (all when
// names is nil) and of the models their ensembles run, and returns the
// errors by model key (see RemoteRepositories.Refresh): with namespacing
// a model's key names the repository whose copy of it failed, so that
// the failure is that model's and not a model of the same name in
// another repository. It records the repository-wide errors for Ready.
func (s *Server) refreshRemote(names []string) map[string]error {
	if s.opts.RemoteRepositories == nil {
		return nil
	}
	repos := s.Repositories()
	ctx := context.Background()
	refresh := func(names []string) map[string]error {
		if !s.opts.ModelNamespacing {
			return s.opts.RemoteRepositories.Refresh(ctx, repos, names)
		}
		errs := map[string]error{}
		for _, repo := range repos {
			for name, err := range s.opts.RemoteRepositories.Refresh(ctx, []string{repo}, names) {
				key := name
				if name != "" {
					key = modelKey(repo, name)
				}
				errs[key] = errors.Join(errs[key], err)
			}
		}
		return errs
	}
	if names == nil {
		errs := refresh(nil)
		s.noteRemoteError(errs[""])
		delete(errs, "")
		return errs
	}
	errs := map[string]error{}
	done := map[string]bool{}
	for len(names) > 0 {
		query := s.withMappedDirs(names)
		for key, err := range refresh(query) {
			errs[key] = errors.Join(errs[key], err)
		}
		for _, n := range names {
			done[n] = true
		}
		// The models the ensembles among them run, now that their
		// configurations are here.
		dirs, _, _ := s.scanRepositories()
		var next []string
		for _, n := range names {
			for _, key := range s.keysIn(dirs, n) { // with namespacing, the model in each repository
				for _, st := range s.configuredSteps(key, dirs[key], dirs) {
					if st = s.modelName(st); !done[st] && !slices.Contains(next, st) {
						next = append(next, st)
					}
				}
			}
		}
		names = next
	}
	if err := errs[""]; err != nil {
		s.log.Errorf("model repository: %v", err)
	}
	delete(errs, "")
	return errs
}

// remoteErrorOf joins the errors of refreshRemote's result errs of the
// models named name: the model itself, or with namespacing the model of
// that name in each repository.
func (s *Server) remoteErrorOf(errs map[string]error, name string) error {
	if !s.opts.ModelNamespacing {
		return errs[name]
	}
	var all []error
	for _, key := range slices.Sorted(maps.Keys(errs)) {
		if key != "" && s.modelName(key) == name {
			all = append(all, errs[key])
		}
	}
	return errors.Join(all...)
}

// withMappedDirs adds to names the subdirectories that registered
// mappings serve under them.
func (s *Server) withMappedDirs(names []string) []string {
	s.repos.mu.RLock()
	defer s.repos.mu.RUnlock()
	out := slices.Clone(names)
	for _, n := range names {
		if m, ok := s.repos.mapped[n]; ok {
			out = append(out, filepath.Base(m.dir))
		}
	}
	return out
}

// noteRemoteError keeps the error of a full refresh for Ready: a remote
// repository that could not be read leaves the server not ready until a
// full refresh (a poll) reads it.
func (s *Server) noteRemoteError(err error) {
	s.mu.Lock()
	s.remoteErr = err
	s.mu.Unlock()
	if err != nil {
		s.log.Errorf("model repository: %v", err)
	}
}

// keepFailedRemote records, after a poll's refresh, why the copies of
// models could not be refreshed: a model with versions serving keeps them,
// the reason on their lines of the index; one without gets an entry that
// gives the reason.
func (s *Server) keepFailedRemote(errs map[string]error) {
	for name, err := range errs {
		unlock, _ := s.lockModel(context.Background(), name)
		s.mu.Lock()
		if e := s.models[name]; e != nil && len(e.versions) > 0 {
			e.status = keptStatus(e, err)
		} else {
			s.models[name] = remoteFailure(name, err)
		}
		s.mu.Unlock()
		unlock()
	}
}

// remoteFailure is the index entry of a model whose copy could not be
// refreshed, when it has no version serving.
func remoteFailure(name string, err error) *modelEntry {
	err = Errorf(CodeUnavailable, "model %q: %w", name, err)
	return &modelEntry{name: name, err: err, status: []VersionStatus{{Name: name, Readiness: ModelUnavailable, Reason: err.Error()}}}
}

// localRepositories puts, in place of each remote repository path of
// Options.ModelRepositories, the directory of its local copy.
func (s *Server) localRepositories() error {
	for i, p := range s.repos.paths {
		dir, err := s.localRepository(p)
		if err != nil {
			return err
		}
		s.repos.paths[i] = dir
	}
	return nil
}

// scanRepositoriesAfter is scanRepositories unless err, a failure of the
// step before it, is set.
func (s *Server) scanRepositoriesAfter(err error) (map[string]string, map[string]error, error) {
	if err != nil {
		return nil, nil, err
	}
	return s.scanRepositories()
}

// startupNames are the models whose copies NewServer refreshes: every
// model (nil), or under explicit control those StartupModels names.
func (s *Server) startupNames() []string {
	if !s.opts.ExplicitModelControl || slices.Contains(s.opts.StartupModels, "*") {
		return nil
	}
	return append([]string{}, s.opts.StartupModels...)
}
