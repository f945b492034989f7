package core

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"google.golang.org/protobuf/encoding/prototext"

	"github.com/tritonhost/tritonhost/core/configpb"
	"github.com/tritonhost/tritonhost/core/modelconfig"
)

// LoadOptions are what a load request may carry besides the model's name:
// Triton's RepositoryModelLoad parameters "config" and "file:<path>".
type LoadOptions struct {
	// Config, if not nil, is a model configuration in JSON (as Triton's
	// "config" parameter, and as the ModelConfig RPC returns it), used
	// instead of the configuration in the model's directory.
	Config []byte
	// Files are model files sent with the request, by their path in the
	// model directory ("1/model.onnx"; Triton's parameter "file:1/model.onnx").
	// When there are any, Config is required and the model loads from a
	// new temporary directory holding only these files (and Config written
	// as config.pbtxt), not from the repositories; the directory is removed
	// when the model is unloaded, reloaded or the server stops. A path must
	// stay inside the model directory once cleaned ("../x" is refused; a
	// leading "/" is taken as the model directory, as Triton takes it).
	// The caller bounds how many files and bytes a request may send; the
	// server bounds what they may be and the disk they take together
	// (Options.LoadFiles).
	Files map[string][]byte
}

// DefaultMaxLoadFilesBytes is LoadFilesLimits.MaxBytes unless told
// otherwise: 1 GiB.
const DefaultMaxLoadFilesBytes = 1 << 30

// LoadFilesLimits bound the model files that load requests send
// (LoadOptions.Files): what they may be, and how much disk they may take.
type LoadFilesLimits struct {
	// AllowLibraries lets a file be a shared library: an ELF object, a
	// name ending in ".so" (or ".so.<version>"), or the file the loader
	// would open as the model's backend library (the configuration's
	// runtime, else libtriton_<backend>.so, which it looks for in the
	// version and model directories before the backend directory). Off,
	// a load request that sends one is refused: the files of a request
	// are never run as code unless the operator says so.
	AllowLibraries bool
	// AllowLibrariesSetting names the setting that sets AllowLibraries,
	// for the refusal (default "LoadFilesLimits.AllowLibraries").
	AllowLibrariesSetting string
	// MaxBytes bounds the bytes of the files that the loaded models'
	// load requests sent, all models together, which stay in temporary
	// directories while their models are loaded (default
	// DefaultMaxLoadFilesBytes). A load request that would go past it is
	// refused (CodeUnavailable) until models loaded from files are
	// unloaded.
	MaxBytes int64
	// MaxBytesSetting names the setting that sets MaxBytes, for the
	// refusal (default "LoadFilesLimits.MaxBytes").
	MaxBytesSetting string
	// Directory is where the files are kept (default
	// DefaultLoadFilesDirectory()): under explicit model control the
	// server makes a directory of its own in it at start, locked while
	// the server runs, and removes those of servers that are gone (killed
	// before they could remove theirs). Each load request's files go in a
	// new directory under the server's own.
	Directory string
}

func (l *LoadFilesLimits) setDefaults() {
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultMaxLoadFilesBytes
	}
	if l.AllowLibrariesSetting == "" {
		l.AllowLibrariesSetting = "LoadFilesLimits.AllowLibraries"
	}
	if l.MaxBytesSetting == "" {
		l.MaxBytesSetting = "LoadFilesLimits.MaxBytes"
	}
}

// elfMagic starts every ELF object: shared libraries, executables.
var elfMagic = []byte("\x7fELF")

// checkNoLibraries refuses the files of a load request of model name,
// configured by cfg, when one is a shared library (see
// LoadFilesLimits.AllowLibraries).
func checkNoLibraries(name string, cfg *configpb.ModelConfig, files map[string][]byte, lim LoadFilesLimits) error {
	if lim.AllowLibraries {
		return nil
	}
	backendFile := cfg.GetRuntime()
	if backendFile == "" && cfg.GetBackend() != "" {
		backendFile = "libtriton_" + cfg.GetBackend() + ".so"
	}
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		base := filepath.Base(p)
		why := ""
		switch {
		case bytes.HasPrefix(files[p], elfMagic):
			why = "is an ELF object (a shared library or a program)"
		case base == backendFile:
			why = "is named as the model's backend library, which the server looks for in the model's directory first"
		case strings.HasSuffix(base, ".so") || strings.Contains(base, ".so."):
			why = "is named as a shared library"
		default:
			continue
		}
		return Errorf(CodeInvalidArg, "load model '%s': the file parameter 'file:%s' %s; files sent with a load request are never loaded as code unless the server runs with %s",
			name, p, why, lim.AllowLibrariesSetting)
	}
	return nil
}

// filesSize is what the files of a load request take on disk, in bytes.
func filesSize(files map[string][]byte) int64 {
	var n int64
	for _, data := range files {
		n += int64(len(data))
	}
	return n
}

// reserveFiles counts n more bytes of model files against
// LoadFilesLimits.MaxBytes, or refuses them.
func (s *Server) reserveFiles(name string, n int64) error {
	lim := s.opts.LoadFiles
	s.mu.Lock()
	defer s.mu.Unlock()
	if n > lim.MaxBytes-s.filesBytes {
		return Errorf(CodeUnavailable, "load model '%s': its files are %d bytes, and the models loaded from files already hold %d of the %d bytes the server keeps for them (%s); unload one first",
			name, n, s.filesBytes, lim.MaxBytes, lim.MaxBytesSetting)
	}
	s.filesBytes += n
	return nil
}

// releaseFiles gives back n bytes that reserveFiles counted.
func (s *Server) releaseFiles(n int64) {
	s.mu.Lock()
	s.filesBytes -= n
	s.mu.Unlock()
}

// parseConfigOverride parses the JSON configuration of a load request.
func parseConfigOverride(js []byte) (*configpb.ModelConfig, error) {
	cfg, err := modelconfig.FromJSON(js)
	if err != nil {
		return nil, fmt.Errorf("Invalid config override: %w", err)
	}
	return cfg, nil
}

// writeModelFiles writes the files of a load request, and its
// configuration as config.pbtxt, into a new directory under the server's
// own (LoadFilesLimits.Directory), which it returns. On any error nothing
// is left behind.
func (s *Server) writeModelFiles(name string, cfg *configpb.ModelConfig, files map[string][]byte) (string, error) {
	if s.uploads == nil {
		return "", errors.New("the server keeps no files of load requests without explicit model control")
	}
	made, err := os.MkdirTemp(s.uploads.Path, "model-")
	if err != nil {
		return "", fmt.Errorf("create a directory for the files of the load request: %w", err)
	}
	dir, err := fillModelDir(made, name, cfg, files)
	if err != nil {
		os.RemoveAll(made)
		return "", err
	}
	return dir, nil
}

// fillModelDir writes the files and the configuration into made, and
// returns its resolved path.
func fillModelDir(made, name string, cfg *configpb.ModelConfig, files map[string][]byte) (string, error) {
	// MkdirTemp may return a path through a symbolic link (a linked
	// TMPDIR): confine the files to the resolved directory.
	dir, err := filepath.EvalSymlinks(made)
	if err != nil {
		return "", err
	}
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		if err := writeModelFile(dir, p, files[p]); err != nil {
			return "", err
		}
	}
	text, err := prototext.MarshalOptions{Multiline: true}.Marshal(cfg)
	if err != nil {
		return "", fmt.Errorf("model %q: write the configuration of the load request: %w", name, err)
	}
	if err := os.WriteFile(filepath.Join(dir, ConfigFileName), text, 0o600); err != nil {
		return "", err
	}
	return dir, nil
}

// writeModelFile writes one file of a load request under dir. The path is
// cleaned and must name a file inside dir; directories on its way are
// created; nothing that exists is overwritten or followed.
func writeModelFile(dir, path string, data []byte) error {
	param := "file:" + path
	full := filepath.Join(dir, path)
	if full == dir || !strings.HasPrefix(full, dir+string(filepath.Separator)) {
		return fmt.Errorf("Invalid file parameter '%s' with normalized path '%s' must stay within model directory.", param, full)
	}
	if err := os.MkdirAll(filepath.Dir(full), 0o700); err != nil {
		if errors.Is(err, syscall.ENOTDIR) {
			return fmt.Errorf("Invalid file parameter '%s', directory has been created as a file", param)
		}
		return fmt.Errorf("Invalid file parameter '%s': %w", param, err)
	}
	f, err := os.OpenFile(full, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return fmt.Errorf("Invalid file parameter '%s': %w", param, err)
	}
	_, werr := f.Write(data)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return fmt.Errorf("write the file of parameter '%s': %w", param, werr)
	}
	return nil
}
