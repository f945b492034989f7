package core

import (
	"slices"
	"strings"

	"github.com/tritonhost/tritonhost/core/configpb"
)

// Model namespacing (Options.ModelNamespacing, Triton's
// --model-namespacing): each model repository is a namespace, named by the
// repository's path, so that models of the same name in different
// repositories are different models instead of duplicates. As in Triton's
// repository manager (ModelIdentifier, FindModelIdentifier,
// ConnectDependencyGraph):
//
//   - a request names a model by name only: a name that one namespace holds
//     is that model, and a name that several hold is refused as ambiguous;
//   - an ensemble's step runs the model of that name in the ensemble's own
//     namespace, or else the only model of that name anywhere;
//   - loading a model by name loads it in every repository that has it,
//     and unloading it unloads all of them;
//   - the repository index and the statistics list each model apart.
//
// Inside the server a model is known by its key: its name without
// namespacing, and "<namespace>::<name>" with it (Triton's
// ModelIdentifier::str()), which is also how logs and load errors name it.
// Without namespacing every key is the model's name, and nothing changes.

// modelKey is the key of model name in namespace ns ("": none).
func modelKey(ns, name string) string {
	if ns == "" {
		return name
	}
	return ns + "::" + name
}

// splitKey returns the namespace and the name of a model key. A model name
// holds no "/", so the namespace is whatever comes before the first "::"
// that follows the key's last "/" (a repository whose last path element
// holds "::" cannot be told apart).
func (s *Server) splitKey(key string) (ns, name string) {
	if !s.opts.ModelNamespacing {
		return "", key
	}
	slash := strings.LastIndexByte(key, '/') + 1
	i := strings.Index(key[slash:], "::")
	if i < 0 {
		return "", key
	}
	return key[:slash+i], key[slash+i+2:]
}

// modelName returns the name of the model whose key is key.
func (s *Server) modelName(key string) string {
	_, name := s.splitKey(key)
	return name
}

// inIndex reports whether e is a model a request can name: one with a
// loaded version or a failed load, as the models in Triton's dependency
// graph are (one never loaded or unloaded is not).
func (e *modelEntry) inIndex() bool {
	return len(e.versions) > 0 || e.err != nil || e.invalid || e.orphaned
}

// keysNamed returns the keys of the models named name that s.models holds
// and that a request can name (sorted). The caller holds s.mu.
func (s *Server) keysNamed(name string) []string {
	var keys []string
	for key, e := range s.models {
		if e.inIndex() && s.modelName(key) == name {
			keys = append(keys, key)
		}
	}
	slices.Sort(keys)
	return keys
}

// resolveModel returns the key of the model a request names. Without
// namespacing it is the name. With it, the name must be that of one model
// in one namespace; the errors are Triton's (FindModelIdentifier):
// CodeInvalidArg "Request for unknown model: '<name>' is not found" when
// none is, and CodeInvalidArg "There are <n> identifiers of model
// '<name>' in global map, model namespace must be provided to resolve
// ambiguity." when several are.
func (s *Server) resolveModel(name string) (string, error) {
	if !s.opts.ModelNamespacing {
		return name, nil
	}
	s.mu.RLock()
	keys := s.keysNamed(name)
	s.mu.RUnlock()
	switch len(keys) {
	case 0:
		return "", Errorf(CodeInvalidArg, "Request for unknown model: '%s' is not found", name)
	case 1:
		return keys[0], nil
	}
	return "", Errorf(CodeInvalidArg, "There are %d identifiers of model '%s' in global map, model namespace must be provided to resolve ambiguity.", len(keys), name)
}

// ModelIn returns a loaded version of the model name in namespace ns, as
// Model does, without resolving the name: ns is a model repository's path
// under Options.ModelNamespacing, and "" otherwise. An ensemble's steps
// are looked up with it, by the namespace their step names (the ensemble
// configuration's model_namespace, which the server sets when it loads the
// ensemble).
func (s *Server) ModelIn(ns, name string, version int64) (*Model, error) {
	if !s.opts.ModelNamespacing {
		ns = ""
	}
	return s.modelByKey(modelKey(ns, name), version)
}

// stepKey is the key of the model an ensemble step runs, once its
// namespace is set (setStepNamespaces).
func stepKey(st *configpb.ModelEnsembling_Step) string {
	return modelKey(st.GetModelNamespace(), st.GetModelName())
}

// stepTarget returns the key of the model that step name of the ensemble
// whose key is ensemble runs, among the models of the repositories (dirs,
// by key). With namespacing it is the model of that name in the ensemble's
// namespace, or else the only model of that name in the repositories, as
// Triton's FindNode with fuzzy matching picks it; when there is none, or
// more than one elsewhere, it is the name, which no key of dirs matches
// and the ensemble's load reports as not available or ambiguous.
func (s *Server) stepTarget(ensemble, name string, dirs map[string]string) string {
	if !s.opts.ModelNamespacing {
		return name
	}
	ns, _ := s.splitKey(ensemble)
	if key := modelKey(ns, name); ns != "" {
		if _, ok := dirs[key]; ok {
			return key
		}
	}
	var found []string
	for key := range dirs {
		if s.modelName(key) == name {
			found = append(found, key)
		}
	}
	if len(found) == 1 {
		return found[0]
	}
	return name
}

// setStepNamespaces sets the model_namespace of each step of an ensemble
// configuration to the namespace of the model it runs (stepTarget); the
// namespace a configuration gives is ignored, as in Triton, and without
// namespacing it is "".
func (s *Server) setStepNamespaces(ensemble string, cfg *configpb.ModelConfig, dirs map[string]string) {
	for _, st := range cfg.GetEnsembleScheduling().GetStep() {
		ns, _ := s.splitKey(s.stepTarget(ensemble, st.GetModelName(), dirs))
		st.ModelNamespace = ns
	}
}
