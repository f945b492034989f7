package core

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/tritonhost/tritonhost/core/configpb"
	"github.com/tritonhost/tritonhost/core/modelconfig"
)

// ConfigFileName is the model configuration file in a model directory.
const ConfigFileName = "config.pbtxt"

// scanRepositories lists the model directories of the repositories, by model
// key (namespace.go). Without namespacing the key is the model name, and a
// name found in two repositories is an error for that name; with it, each
// repository is a namespace, and names may repeat across them.
func scanRepositories(repos []string, namespacing bool) (map[string]string, map[string]error, error) {
	dirs := map[string]string{}
	dupes := map[string]error{}
	for _, repo := range repos {
		entries, err := os.ReadDir(repo)
		if err != nil {
			return nil, nil, fmt.Errorf("read model repository %q: %w", repo, err)
		}
		for _, e := range entries {
			name := e.Name()
			if strings.HasPrefix(name, ".") || !isDir(filepath.Join(repo, name)) {
				continue
			}
			key := name
			if namespacing {
				key = modelKey(repo, name)
			}
			if prev, ok := dirs[key]; ok {
				dupes[key] = Errorf(CodeAlreadyExists, "model %q is in two repositories: %s and %s", name, prev, filepath.Join(repo, name))
				continue
			}
			dirs[key] = filepath.Join(repo, name)
		}
	}
	return dirs, dupes, nil
}

func isDir(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}

// readModelConfig reads a model's configuration (config.pbtxt, or the
// alternative Options.ModelConfigName names), with the bounds of
// Options.RepositoryFiles, and returns it as written and normalized and
// validated.
func (s *Server) readModelConfig(name, dir string) (raw, cfg *configpb.ModelConfig, err error) {
	gpus := s.opts.GPUs
	raw, path, err := s.readDirConfig(dir) // config_name.go: config.pbtxt, or --model-config-name's
	switch {
	case errors.Is(err, fs.ErrNotExist) && !s.opts.DisableAutoCompleteConfig:
		// No configuration: as in Triton, the model starts from its name
		// and its model file, and its backend completes the rest
		// (TRITONBACKEND_ModelSetConfig).
		raw = &configpb.ModelConfig{Name: name}
		s.log.Infof("model %q has no %s: its configuration is completed from its files and its backend", name, ConfigFileName)
	case err != nil:
		return nil, nil, Errorf(readErrorCode(err), "model %q: %w", name, err)
	}
	if filepath.Base(dir) != name { // a registered repository's model served under a mapped name
		raw.Name = name
	}
	if !s.opts.DisableAutoCompleteConfig {
		fillFromModelFile(raw, dir)
	}
	cfg, err = normalizedConfig(raw, modelDefaults(name, gpus))
	if err != nil {
		return nil, nil, Errorf(CodeInvalidArg, "model %q: %s: %w", name, path, err)
	}
	return raw, cfg, nil
}

// modelFiles are the model files whose presence in a model's first version
// directory names its backend, in the order Triton's auto-complete looks
// for them (AutoCompleteBackendFields), and whether each is a directory.
var modelFiles = []struct {
	name string
	dir  bool
}{
	{"model.savedmodel", true},
	{"model.graphdef", false},
	{"model.plan", false},
	{"model.onnx", false},
	{"model.xml", false},
	{"model.pt", false},
	{"model.pt2", false},
	{"model.py", false},
}

// fillFromModelFile gives a configuration that names no backend, platform
// or model file the model file found in the model's first version
// directory (the first subdirectory by name, as Triton takes it), so that
// normalization derives its backend: model.py makes a python model,
// model.onnx an onnxruntime one, and so on.
func fillFromModelFile(cfg *configpb.ModelConfig, dir string) {
	if cfg.Backend != "" || cfg.Platform != "" || cfg.DefaultModelFilename != "" {
		return
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !isDir(filepath.Join(dir, e.Name())) {
			continue
		}
		version := filepath.Join(dir, e.Name())
		for _, f := range modelFiles {
			if st, err := os.Stat(filepath.Join(version, f.name)); err == nil && st.IsDir() == f.dir {
				cfg.DefaultModelFilename = f.name
				return
			}
		}
		return // only the first version directory counts
	}
}

// modelDefaults are the defaults the configuration of model name takes.
func modelDefaults(name string, gpus []int) modelconfig.Defaults {
	return modelconfig.Defaults{ModelName: name, GPUs: gpus}
}

// normalizedConfig returns a normalized, validated copy of raw.
func normalizedConfig(raw *configpb.ModelConfig, d modelconfig.Defaults) (*configpb.ModelConfig, error) {
	cfg := cloneConfig(raw)
	if err := modelconfig.Normalize(cfg, d); err != nil {
		return nil, err
	}
	if err := modelconfig.Validate(cfg); err != nil {
		return nil, err
	}
	return cfg, nil
}

// modelVersions returns the versions of a model to load: its numeric
// subdirectories, filtered by the version policy.
func modelVersions(name, dir string, cfg *configpb.ModelConfig) ([]int64, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, Errorf(CodeNotFound, "model %q: %w", name, err)
	}
	var found []int64
	for _, e := range entries {
		v, err := strconv.ParseInt(e.Name(), 10, 64)
		if err != nil || v < 0 || !isDir(filepath.Join(dir, e.Name())) {
			continue
		}
		found = append(found, v)
	}
	sort.Slice(found, func(i, j int) bool { return found[i] < found[j] })
	versions := modelconfig.SelectVersions(cfg.GetVersionPolicy(), found)
	if len(versions) == 0 {
		return nil, Errorf(CodeNotFound, "model %q: no version directory in %s satisfies its version policy (found %v)", name, dir, found)
	}
	return versions, nil
}

// modelFile returns the path of a file that a model's configuration names,
// <dir>/<sub>/<name> as Triton lays it out (an initial_state data_file is
// under <model>/initial_state/), after checking that it stays inside the
// model directory dir: name must be a relative path that does not climb
// out ("..") of <dir>/<sub>, and once every symbolic link of the path is
// resolved (filepath.EvalSymlinks), the file must still lie inside dir
// (itself resolved). Links within the model directory are fine; a link
// out of it is refused like "..", so a configuration cannot make the
// server read, and hand a backend, a file from elsewhere. It returns the
// resolved path, which the caller reads.
func modelFile(dir, sub, name string) (string, error) {
	under := filepath.Join(dir, sub)
	if !filepath.IsLocal(name) {
		return "", fmt.Errorf("%q must be a relative path inside %s", name, under)
	}
	path := filepath.Join(under, name)
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", err
	}
	resolved, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	if rel, err := filepath.Rel(root, resolved); err != nil || !filepath.IsLocal(rel) {
		return "", fmt.Errorf("%s resolves to %s, which is outside the model directory %s", path, resolved, root)
	}
	return resolved, nil
}

func cloneConfig(cfg *configpb.ModelConfig) *configpb.ModelConfig {
	return proto.Clone(cfg).(*configpb.ModelConfig)
}
