package loader

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/tritonhost/tritonhost/core"
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
	// The backend names a directory of the backend directory and, with the
	// runtime, a file of the model's directories: neither may be a path, so
	// a configuration cannot make the server open a library from elsewhere.
	// (A library file that is a symbolic link is followed: linking a backend
	// into a model directory is a common way to deploy one.)
	if !isFileName(backend) {
		return "", "", core.Errorf(core.CodeInvalidArg, "model %q: backend %q must be a name, not a path", m.Name(), backend)
	}
	file := LibraryFile(backend, cfg.GetRuntime())
	if !isFileName(file) {
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

// isFileName reports whether name is one path element: not empty, no
// separator, not "." or "..".
func isFileName(name string) bool {
	return name != "" && name != "." && name != ".." && !strings.ContainsRune(name, '/')
}
