package core

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"google.golang.org/protobuf/encoding/prototext"

	"tritonhost/core/configpb"
	"tritonhost/core/modelconfig"
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
	// The caller bounds how many files and bytes a request may send.
	Files map[string][]byte
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
// configuration as config.pbtxt, into a new temporary directory, which it
// returns. On any error nothing is left behind.
func writeModelFiles(name string, cfg *configpb.ModelConfig, files map[string][]byte) (string, error) {
	made, err := os.MkdirTemp("", "tritonhost-model-")
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
