package loader

import (
	"os"
	"path/filepath"
	"strings"

	"tritonhost/core"
)

// LibraryFile returns the file name of a model's backend library: the
// configuration's runtime if set, else libtriton_<backend>.so.
func LibraryFile(backend, runtime string) string {
	if runtime != "" {
		return runtime
	}
	return "libtriton_" + backend + ".so"
}

// findLibrary applies Triton's search order for m's backend library and
// returns its absolute path and the backend's name.
func findLibrary(m *core.Model, backendDir string) (path, backend string, err error) {
	cfg := m.Config()
	backend = cfg.GetBackend()
	if backend == "" {
		return "", "", core.Errorf(core.CodeInvalidArg, "model %q: the configuration names no backend (platform %q models are not supported)", m.Name(), cfg.GetPlatform())
	}
	file := LibraryFile(backend, cfg.GetRuntime())
	if strings.ContainsRune(file, '/') {
		return "", "", core.Errorf(core.CodeInvalidArg, "model %q: runtime %q must be a file name, not a path", m.Name(), file)
	}
	candidates := []string{
		filepath.Join(m.VersionPath(), file),
		filepath.Join(m.Path(), file),
	}
	if backendDir != "" {
		candidates = append(candidates, filepath.Join(backendDir, backend, file))
	}
	for _, c := range candidates {
		if st, err := os.Stat(c); err == nil && !st.IsDir() {
			abs, err := filepath.Abs(c)
			if err != nil {
				return "", "", core.Errorf(core.CodeInternal, "model %q: %w", m.Name(), err)
			}
			return abs, backend, nil
		}
	}
	return "", "", core.Errorf(core.CodeNotFound, "model %q: backend %q: %s not found in %s", m.Name(), backend, file, strings.Join(candidates, ", "))
}
