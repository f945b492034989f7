package core

import (
	"slices"
	"strings"

	"github.com/tritonhost/tritonhost/core/configpb"
)

// An ensemble depends on the models its steps run: it loads after them,
// and only if each has a loaded version, as in Triton's dependency graph
// (ModelRepositoryManager: ConnectDependencyGraph, CircularDependencyCheck,
// CheckNode), whose messages these are.

// stepModels returns the distinct models the steps of an ensemble
// configuration run, by key, in step order (nil for a model that is no
// ensemble). The steps' namespaces must have been set (setStepNamespaces).
func stepModels(cfg *configpb.ModelConfig) []string {
	var names []string
	for _, st := range cfg.GetEnsembleScheduling().GetStep() {
		if n := stepKey(st); st.GetModelName() != "" && !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	return names
}

// configuredSteps reads the configuration in dir, the directory of the
// model whose key is key, with the bounds of Options.RepositoryFiles, and
// returns the models its steps run, by key, among the repositories' models
// (dirs); nil when it cannot be read (loading the model reports why) or
// the model is no ensemble.
func (s *Server) configuredSteps(key, dir string, dirs map[string]string) []string {
	if dir == "" {
		return nil
	}
	cfg, _, err := s.readDirConfig(dir)
	if err != nil {
		return nil
	}
	s.setStepNamespaces(key, cfg, dirs)
	return stepModels(cfg)
}

// checkDependencies checks what ensemble name needs of the repository
// before it loads: every step model is in the repository once, no chain of
// ensembles leads back to it, and every step model has a loaded version
// (and the version a step names, when it names one). dirs are the
// repository's models, dupes those found twice.
func (s *Server) checkDependencies(name string, cfg *configpb.ModelConfig, dirs map[string]string, dupes map[string]error) error {
	steps := stepModels(cfg)
	var missing []string
	for _, st := range steps {
		if _, found := dirs[st]; !found || dupes[st] != nil {
			missing = append(missing, st)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return Errorf(CodeInvalidArg, "ensemble %s contains models that are not available or ambiguous: %s", name, strings.Join(missing, ", "))
	}
	if err := s.circularCheck(name, name, steps, dirs, map[string]bool{name: true}); err != nil {
		return err
	}
	for _, st := range cfg.GetEnsembleScheduling().GetStep() {
		if err := s.checkUpstream(name, stepKey(st), st.GetModelVersion()); err != nil {
			return err
		}
	}
	return nil
}

// circularCheck follows the step models of current (steps) towards the
// models they run, and fails when one is start.
func (s *Server) circularCheck(start, current string, steps []string, dirs map[string]string, seen map[string]bool) error {
	for _, up := range steps {
		if up == start {
			return Errorf(CodeInvalidArg, "circular dependency between ensembles: %s -> ... -> %s -> %s", start, current, start)
		}
		if seen[up] {
			continue
		}
		seen[up] = true
		if err := s.circularCheck(start, up, s.configuredSteps(up, dirs[up], dirs), dirs, seen); err != nil {
			return err
		}
	}
	return nil
}

// checkUpstream requires the step model upstream of ensemble name to be
// valid and loaded (in version, when positive).
func (s *Server) checkUpstream(name, upstream string, version int64) error {
	s.mu.RLock()
	e := s.models[upstream]
	s.mu.RUnlock()
	switch {
	case e != nil && e.invalid:
		return Errorf(CodeInvalidArg, "ensemble '%s' depends on '%s' which is not valid. Model '%s' failed with error: %v", name, upstream, upstream, e.err)
	case e == nil || len(e.versions) == 0:
		if e != nil && e.err != nil {
			return Errorf(CodeInvalidArg, "ensemble '%s' depends on '%s' which has no loaded version. Model '%s' loading failed with error: %v", name, upstream, upstream, e.err)
		}
		return Errorf(CodeInvalidArg, "ensemble '%s' depends on '%s' which has no loaded version.", name, upstream)
	case version > 0 && e.versions[version] == nil:
		return Errorf(CodeInvalidArg, "ensemble '%s' depends on '%s' whose required version %d is not loaded.", name, upstream, version)
	}
	return nil
}

// prepareEnsemble readies an ensemble configuration to load: it records
// the models e's steps run, checks the dependencies and the graph against
// the steps' configurations, and sets model_transaction_policy.decoupled
// to whether a decoupled step feeds the ensemble, as Triton does whatever
// the configuration says. It reports whether the model is an ensemble.
// An error marks e invalid, as a configuration error would.
func (s *Server) prepareEnsemble(e *modelEntry, cfg *configpb.ModelConfig) (bool, error) {
	if cfg.GetEnsembleScheduling() == nil {
		return false, nil
	}
	dirs, dupes, err := s.scanRepositories()
	s.setStepNamespaces(e.name, cfg, dirs) // without dirs (err), each step's bare name
	e.steps = stepModels(cfg)
	if err != nil {
		err = Errorf(CodeInternal, "ensemble %s: %w", cfg.GetName(), err)
	} else {
		err = s.checkEnsemble(e.name, cfg, dirs, dupes)
	}
	if err != nil {
		e.invalid = true
		e.status = []VersionStatus{{Name: e.name, Readiness: ModelUnavailable, Reason: err.Error()}}
		return true, err
	}
	return true, nil
}

// checkEnsemble checks the configuration of the ensemble whose key is key,
// its steps' namespaces set, against the repositories' models (dirs, and
// dupes, those found twice) and the configurations of its steps' loaded
// models. With namespacing the errors name the ensemble by its key, as
// Triton's name it by its identifier.
func (s *Server) checkEnsemble(key string, cfg *configpb.ModelConfig, dirs map[string]string, dupes map[string]error) error {
	name := cfg.GetName()
	if s.opts.ModelNamespacing {
		name = key
	}
	if err := s.checkDependencies(name, cfg, dirs, dupes); err != nil {
		return err
	}
	steps := cfg.GetEnsembleScheduling().GetStep()
	configs := make([]*configpb.ModelConfig, len(steps))
	for i, st := range steps {
		m, err := s.modelByKey(stepKey(st), st.GetModelVersion())
		if err != nil {
			return Errorf(CodeInvalidArg, "ensemble '%s' depends on '%s' which has no loaded version. %v", cfg.GetName(), st.GetModelName(), err)
		}
		configs[i] = m.Config()
	}
	decoupled, err := checkEnsembleGraph(cfg, func(i int) *configpb.ModelConfig { return configs[i] })
	if err != nil {
		return err
	}
	if err := checkEnsembleCache(cfg, decoupled); err != nil {
		return err
	}
	if declared := cfg.GetModelTransactionPolicy().GetDecoupled(); declared != decoupled {
		s.log.Infof("ensemble %q: model_transaction_policy.decoupled is %v (%s), whatever the configuration says", cfg.GetName(), decoupled, decoupledReason(decoupled))
	}
	cfg.ModelTransactionPolicy = &configpb.ModelTransactionPolicy{Decoupled: decoupled}
	return nil
}

func decoupledReason(decoupled bool) string {
	if decoupled {
		return "a decoupled step's responses reach its outputs"
	}
	return "none of its steps is decoupled"
}

// loadVersion loads one version of a model: in its backend, or, for an
// ensemble, by giving it its scheduler (Options.Schedulers), which runs
// its steps.
func (s *Server) loadVersion(m *Model, ensemble bool) error {
	if !ensemble {
		return m.load(s.opts.Backends)
	}
	m.freezeConfig()
	sched, err := s.opts.Schedulers(s, m)
	if err != nil {
		return err
	}
	m.sched = sched
	m.sched.Start()
	m.readiness.Store(int32(ModelReady))
	return nil
}
