package core

import (
	"sort"
	"strconv"
)

// Model returns a loaded model version; version <= 0 picks the newest
// ready one. Its errors are Triton's (core
// src/model_repository_manager/model_lifecycle.cc, ModelLifeCycle::GetModel,
// prefixed by ModelRepositoryManager::GetModel), with the reason a model
// failed to load after Triton's text:
//
//   - CodeNotFound "Request for unknown model: '<name>' is not found" for a
//     model the server never loaded;
//   - CodeNotFound "Request for unknown model: '<name>' version <v> is not
//     found" for a version it has no record of;
//   - CodeNotFound "Request for unknown model: '<name>' has no available
//     versions" when no version is ready;
//   - CodeUnavailable "Request for unknown model: '<name>' version <v> is
//     not at ready state" for a version that failed to load or was
//     unloaded.
//
// With Options.ModelNamespacing, the name must first be that of a model in
// exactly one repository (see resolveModel for the errors when it is not).
func (s *Server) Model(name string, version int64) (*Model, error) {
	key, err := s.resolveModel(name)
	if err != nil {
		return nil, err
	}
	return s.modelByKey(key, version)
}

// modelByKey is Model for the model whose key (namespace.go) is name.
func (s *Server) modelByKey(name string, version int64) (*Model, error) {
	s.mu.RLock()
	e := s.models[name]
	s.mu.RUnlock()
	if e == nil || (len(e.versions) == 0 && len(e.status) == 0) {
		return nil, Errorf(CodeNotFound, "Request for unknown model: '%s' is not found", name)
	}
	if version > 0 {
		if m := e.versions[version]; m != nil {
			return m, nil
		}
		if st, ok := e.versionStatus(version); ok {
			return nil, Errorf(CodeUnavailable, "Request for unknown model: '%s' version %d is not at ready state (%s: %s)", name, version, st.Readiness, st.Reason)
		}
		return nil, VersionNotFound(name, version)
	}
	var best *Model
	for _, m := range e.versions {
		if m.Readiness() == ModelReady && (best == nil || m.version > best.version) {
			best = m
		}
	}
	if best == nil {
		reason := "no version is loaded"
		if e.err != nil {
			reason = e.err.Error()
		}
		return nil, Errorf(CodeNotFound, "Request for unknown model: '%s' has no available versions (%s)", name, reason)
	}
	return best, nil
}

// VersionNotFound is the error for a version of model name that the server
// has no record of (Triton's, as Model returns it). A frontend whose
// protocol can name version 0, which Model takes for "the newest", refuses
// it with this error.
func VersionNotFound(name string, version int64) error {
	return Errorf(CodeNotFound, "Request for unknown model: '%s' version %d is not found", name, version)
}

// versionStatus returns the last recorded outcome of a version.
func (e *modelEntry) versionStatus(version int64) (VersionStatus, bool) {
	v := strconv.FormatInt(version, 10)
	for _, st := range e.status {
		if st.Version == v {
			return st, true
		}
	}
	return VersionStatus{}, false
}

// Versions returns the loaded versions of a model, ascending; nil if the
// model is unknown, ambiguous (Options.ModelNamespacing) or has none
// loaded.
func (s *Server) Versions(name string) []int64 {
	name, err := s.resolveModel(name)
	if err != nil {
		return nil
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	e := s.models[name]
	if e == nil {
		return nil
	}
	var out []int64
	for v, m := range e.versions {
		if m.Readiness() == ModelReady {
			out = append(out, v)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}
