package core

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"

	"github.com/tritonhost/tritonhost/core/configpb"
)

// modelEntry is everything the server knows of one model directory.
type modelEntry struct {
	name     string
	dir      string
	versions map[int64]*Model // loaded versions
	status   []VersionStatus  // last load outcome per version
	err      error            // why the model has no loaded version
	// override, if not nil, is the configuration a load request gave in
	// place of the directory's config.pbtxt.
	override *configpb.ModelConfig
	// filesDir is the temporary directory holding the model files a load
	// request sent (dir is then the same directory), removed when the
	// entry is replaced, unloaded or stopped; "" for a repository model.
	filesDir string
	// filesBytes is what the files in filesDir count against
	// Options.LoadFiles.MaxBytes, given back when they are removed.
	filesBytes int64
	steps      []string // an ensemble's step models (nil for other models)
	invalid    bool     // its configuration, or an ensemble's graph, was refused
	orphaned   bool     // an ensemble unloaded with a model it runs; it loads with it again
	stamp      string   // under model control POLL: the directory as it was when loaded (dirStamp)

	// agents are the repository agents of its loaded versions (nil: none),
	// told of their unload (repoagent_load.go).
	agents *agentChain
}

// loadEntry loads every selected version of the model e describes and
// installs the result, replacing (and then unloading) whatever was loaded
// before. The caller holds the model's lock. If Stop began meanwhile, the
// new versions are not installed: they, and the ones loaded before, are
// unloaded again.
func (s *Server) loadEntry(e *modelEntry) error {
	if s.opts.PollModelControl && e.filesDir == "" {
		e.stamp = dirStamp(e.dir)
	}
	e.versions = map[int64]*Model{}
	release, err := s.reserveModel(e.name)
	if err == nil {
		defer release() // once e is installed, and counts if it loaded
		err = s.loadVersions(e)
	} else {
		e.status = []VersionStatus{{Name: e.name, Readiness: ModelUnavailable, Reason: err.Error()}}
	}
	if err != nil {
		e.err = err
		s.log.Errorf("failed to load model %q: %v", e.name, err)
		if retryLoad(err) {
			e.stamp = "" // under POLL, the next poll tries again
		}
	}
	if len(e.versions) == 0 {
		s.removeFiles(e) // nothing loaded uses them
	}
	s.mu.Lock()
	old := s.models[e.name]
	if s.stopping.Load() {
		s.models[e.name] = &modelEntry{name: e.name, dir: e.dir}
		s.mu.Unlock()
		for _, ent := range []*modelEntry{e, old} {
			if ent != nil {
				s.retire(context.Background(), ent)
			}
		}
		return Errorf(CodeUnavailable, "model %q: the server began shutting down while the model loaded; it is unloaded again", e.name)
	}
	s.models[e.name] = e
	s.mu.Unlock()
	if old != nil {
		s.retire(context.Background(), old)
	}
	return err
}

func (s *Server) loadVersions(e *modelEntry) error {
	raw, cfg, err := s.entryConfig(e)
	if err != nil {
		e.invalid = true
		e.status = []VersionStatus{{Name: e.name, Readiness: ModelUnavailable, Reason: err.Error()}}
		return err
	}
	agents, dir, raw, cfg, err := s.startAgents(e, raw, cfg)
	if err != nil {
		e.status = []VersionStatus{{Name: e.name, Readiness: ModelUnavailable, Reason: err.Error()}}
		return err
	}
	defer s.settleAgents(e, agents)
	versions, err := modelVersions(e.name, dir, cfg)
	if err != nil {
		e.status = []VersionStatus{{Name: e.name, Readiness: ModelUnavailable, Reason: err.Error()}}
		return err
	}
	ensemble, err := s.prepareEnsemble(e, cfg)
	if err != nil {
		return err
	}
	var errs []error
	for _, v := range versions {
		st := VersionStatus{Name: e.name, Version: strconv.FormatInt(v, 10)}
		m, err := s.loadVersionRetrying(e, v, dir, raw, cfg, ensemble) // load_retry.go
		if err != nil {
			// Triton's line for a version that failed, which its tests
			// look for in the log.
			s.log.Errorf("failed to load '%s' version %d: %s: %v", e.name, v, CodeOf(err), err)
			err = fmt.Errorf("version %d: %w", v, err)
			errs = append(errs, err)
			st.Readiness, st.Reason = ModelUnavailable, err.Error()
		} else {
			e.versions[v] = m
			st.Readiness = ModelReady
			s.log.Infof("successfully loaded '%s' version %d", e.name, v)
			s.warnUnusedCache(m)
		}
		e.status = append(e.status, st)
	}
	if len(e.versions) == 0 {
		return errors.Join(errs...)
	}
	for _, err := range errs {
		s.log.Errorf("model %q: %v", e.name, err)
	}
	return nil
}

// entryConfig returns the model's configuration as given and normalized:
// the load request's override, or the directory's config.pbtxt.
func (s *Server) entryConfig(e *modelEntry) (raw, cfg *configpb.ModelConfig, err error) {
	name := s.modelName(e.name)
	if e.override == nil {
		return s.readModelConfig(name, e.dir)
	}
	raw = cloneConfig(e.override)
	cfg, err = normalizedConfig(raw, modelDefaults(name, s.opts.GPUs))
	if err != nil {
		return nil, nil, Errorf(CodeInvalidArg, "model %q: the configuration of the load request: %w", e.name, err)
	}
	return raw, cfg, nil
}

// unloadVersions unloads the versions of e, each with Model.unload, and
// logs the outcome.
func (s *Server) unloadVersions(ctx context.Context, e *modelEntry) []error {
	if c := e.agents; c != nil {
		e.agents = nil
		c.unloading()
		defer c.unloaded()
	}
	var errs []error
	for _, m := range e.versions {
		if err := m.unload(ctx); err != nil {
			errs = append(errs, err)
			s.log.Errorf("%v", err)
		} else {
			s.log.Infof("successfully unloaded '%s' version %d", m.name, m.version)
		}
	}
	return errs
}

// retire unloads the versions of an entry that is no longer installed and
// removes the files its load request sent.
func (s *Server) retire(ctx context.Context, e *modelEntry) []error {
	errs := s.unloadVersions(ctx, e)
	s.removeFiles(e)
	return errs
}

// LoadModel loads (or reloads) a model of the repositories by name under
// explicit model control; it is LoadModelWith without options.
func (s *Server) LoadModel(name string) error { return s.LoadModelWith(name, LoadOptions{}) }

// LoadModelWith loads (or reloads) a model by name under explicit model
// control, with the configuration and files of a load request (see
// LoadOptions). Loads and unloads of one model run one at a time, in the
// order they take its lock; those of different models do not wait for each
// other. Each call into the backend is bounded by BackendCallTimeout.
// Loading an ensemble first loads the models its steps run that have no
// loaded version; loading a model loads again the ensembles that run it.
//
// The errors are Triton's: without explicit model control, CodeUnavailable
// "explicit model load / unload is not allowed if polling is enabled"; for
// a model found in no repository, or options that cannot be used,
// CodeInternal "failed to load '<name>', failed to poll from model
// repository" (followed by the reason); for a model that fails to load,
// "load failed for model '<name>': " and the reason, with its code.
func (s *Server) LoadModelWith(name string, opts LoadOptions) error {
	if !s.opts.ExplicitModelControl {
		return Errorf(CodeUnavailable, "explicit model load / unload is not allowed if polling is enabled (the server does not run with explicit model control)")
	}
	if s.stopping.Load() {
		return errShuttingDown()
	}
	entries, err := s.loadSource(name, opts)
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		if err := s.loadWithDependencies(e); err != nil {
			errs = append(errs, Errorf(CodeOf(err), "load failed for model '%s': %w", e.name, err))
		}
	}
	return joinErrors(errs)
}

// loadSource finds what a load request loads: the request's files, or the
// model's directory in the repositories, with the request's configuration
// if it gives one. With Options.ModelNamespacing, a name that several
// repositories hold is the model in each of them, as Triton loads them
// all.
func (s *Server) loadSource(name string, opts LoadOptions) ([]*modelEntry, error) {
	e := &modelEntry{name: name}
	if opts.Config != nil {
		cfg, err := parseConfigOverride(opts.Config)
		if err != nil {
			return nil, pollFailure(name, err)
		}
		e.override = cfg
	}
	if len(opts.Files) > 0 {
		if e.override == nil {
			return nil, pollFailure(name, errors.New("Load parameter 'config' must be specified for model file override"))
		}
		if err := checkNoLibraries(name, e.override, opts.Files, s.opts.LoadFiles); err != nil {
			return nil, err
		}
		if err := s.checkModelRoom(name); err != nil {
			return nil, err
		}
		size := filesSize(opts.Files)
		if err := s.reserveFiles(name, size); err != nil {
			return nil, err
		}
		dir, err := s.writeModelFiles(name, e.override, opts.Files)
		if err != nil {
			s.releaseFiles(size)
			return nil, pollFailure(name, err)
		}
		s.log.Infof("model %q: the files of the load request are in %s until the model is unloaded", name, dir)
		e.dir, e.filesDir, e.filesBytes = dir, dir, size
		return []*modelEntry{e}, nil
	}
	if err := s.remoteErrorOf(s.refreshRemote([]string{name}), name); err != nil { // remote_repository.go
		return nil, pollFailure(name, err)
	}
	dirs, _, err := s.scanRepositories()
	if err != nil {
		return nil, pollFailure(name, err)
	}
	var entries []*modelEntry
	for _, key := range s.keysIn(dirs, name) {
		entries = append(entries, &modelEntry{name: key, dir: dirs[key], override: e.override})
	}
	if len(entries) == 0 {
		return nil, pollFailure(name, errors.New("no such model directory in the model repositories"))
	}
	return entries, nil
}

// keysIn returns the keys of dirs (the repositories' models by key) of the
// models named name, sorted: the name itself without namespacing, one key
// for each repository that holds the name with it.
func (s *Server) keysIn(dirs map[string]string, name string) []string {
	if !s.opts.ModelNamespacing {
		if _, ok := dirs[name]; ok {
			return []string{name}
		}
		return nil
	}
	var keys []string
	for key := range dirs {
		if s.modelName(key) == name {
			keys = append(keys, key)
		}
	}
	slices.Sort(keys)
	return keys
}

// pollFailure is Triton's error for a load that could not start, with why.
func pollFailure(name string, why error) error {
	return Errorf(CodeInternal, "failed to load '%s', failed to poll from model repository: %w", name, why)
}

// removeFiles removes the directory of the files e's load request sent.
func (s *Server) removeFiles(e *modelEntry) {
	if e.filesDir == "" {
		return
	}
	if err := os.RemoveAll(e.filesDir); err != nil {
		s.log.Errorf("model %q: remove the files of its load request: %v", e.name, err)
	} else {
		s.log.Infof("model %q: removed %s, the files of its load request", e.name, e.filesDir)
	}
	s.releaseFiles(e.filesBytes)
	e.filesDir, e.filesBytes = "", 0
}

// UnloadModel unloads every version of a model under explicit model
// control. Queued requests still run (until ctx ends); new ones are
// refused. It waits for a load or unload of the same model in progress
// (until ctx ends), and returns an error, the unload going on without it,
// when ctx ends or a Finalize call does not return within
// BackendCallTimeout. The files a load request sent for the model are
// removed once its versions are unloaded. The ensembles that run the model
// are unloaded with it (see orphanDependents). With
// Options.ModelNamespacing, a name that several repositories hold unloads
// the model in each of them, as in Triton.
func (s *Server) UnloadModel(ctx context.Context, name string) error {
	var errs []error
	for _, key := range s.unloadKeys(name) {
		if err := s.unloadModel(ctx, key, nil); err != nil {
			errs = append(errs, err)
		}
	}
	return joinErrors(errs)
}

// unloadKeys returns the keys of the models an unload of name unloads: the
// name without namespacing; with it, those of the models of that name
// (sorted), or the name when there is none, which the unload then reports.
func (s *Server) unloadKeys(name string) []string {
	if !s.opts.ModelNamespacing {
		return []string{name}
	}
	s.mu.RLock()
	var keys []string
	for key := range s.models {
		if s.modelName(key) == name {
			keys = append(keys, key)
		}
	}
	s.mu.RUnlock()
	if len(keys) == 0 {
		return []string{name}
	}
	slices.Sort(keys)
	return keys
}

// joinErrors is errs joined: nil for none, the error itself for one.
func joinErrors(errs []error) error {
	if len(errs) == 1 {
		return errs[0]
	}
	return errors.Join(errs...)
}

// unloadModel is UnloadModel; detached, if set, is called once the model
// takes no more requests, before its versions are unloaded.
func (s *Server) unloadModel(ctx context.Context, name string, detached func()) error {
	if !s.opts.ExplicitModelControl {
		return Errorf(CodeUnavailable, "explicit model load / unload is not allowed if polling is enabled (the server does not run with explicit model control)")
	}
	if s.stopping.Load() {
		return errShuttingDown()
	}
	unlock, err := s.lockModel(ctx, name)
	if err != nil {
		return Errorf(CodeUnavailable, "unload model %q: a load or unload of it is still in progress (%w)", name, err)
	}
	defer unlock()
	if s.stopping.Load() {
		return errShuttingDown()
	}
	s.mu.Lock()
	e := s.models[name]
	if e == nil {
		s.mu.Unlock()
		return Errorf(CodeNotFound, "unload model %q: no such model", name)
	}
	if e.filesDir != "" {
		delete(s.models, name) // a model no repository holds is forgotten
	} else {
		s.models[name] = &modelEntry{name: name, dir: e.dir, status: unloadedStatus(e)}
	}
	s.mu.Unlock()
	if detached != nil {
		detached()
	}
	errs := s.retire(ctx, e)
	return errors.Join(append(errs, s.orphanDependents(ctx, name, nil)...)...)
}

// unloadedStatus is the repository index of an unloaded model: each
// version it had loaded, UNAVAILABLE for the reason "unloaded", as Triton
// lists them.
func unloadedStatus(e *modelEntry) []VersionStatus {
	var out []VersionStatus
	for _, st := range e.status {
		if v, err := strconv.ParseInt(st.Version, 10, 64); err == nil && e.versions[v] != nil {
			out = append(out, VersionStatus{Name: e.name, Version: st.Version, Readiness: ModelUnavailable, Reason: "unloaded"})
		}
	}
	return out
}

func errShuttingDown() error { return Errorf(CodeUnavailable, "server is shutting down") }
