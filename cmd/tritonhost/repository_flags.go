package main

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/tritonhost/tritonhost/core"
)

// repositoryFlags bound what the server takes from its model repositories
// and from load requests: the size of a config.pbtxt, how long a read of
// a repository file may wait for its filesystem, how many models may be
// loaded at once, and where the files of load requests are kept.
type repositoryFlags struct {
	ConfigMaxSize  int64
	ReadTimeoutMs  int
	ModelMaxCount  int
	FilesDirectory string

	// Triton's other repository options (triton_flags.go).
	ConfigName      string
	LoadThreadCount int
	LoadRetryCount  int
	Namespacing     bool
}

func (r *repositoryFlags) bind(f *pflag.FlagSet) {
	f.Int64Var(&r.ConfigMaxSize, "model-config-max-size", core.DefaultMaxConfigBytes,
		"largest config.pbtxt the server reads, in bytes; a larger one fails its model's load")
	f.IntVar(&r.ReadTimeoutMs, "repository-read-timeout", int(core.DefaultRepositoryReadTimeout/time.Millisecond),
		"ms a read of a model repository's file may wait for its filesystem (a hung network mount); then the model fails to load")
	f.IntVar(&r.ModelMaxCount, "model-max-count", core.DefaultMaxModels,
		"models loaded at once; past it a load is refused until one is unloaded")
	f.StringVar(&r.FilesDirectory, "model-files-directory", "",
		"directory under which the model files that load requests send are kept, in a directory of each server's own; those of servers that are gone are removed at start (default: tritonhost-uploads-<uid> under $TMPDIR or /tmp)")
	r.bindTriton(f) // triton_flags.go
}

func (r *repositoryFlags) validate() error {
	if r.ConfigMaxSize <= 0 {
		return fmt.Errorf("--model-config-max-size must be positive, not %d", r.ConfigMaxSize)
	}
	if r.ReadTimeoutMs <= 0 {
		return fmt.Errorf("--repository-read-timeout must be positive, not %d", r.ReadTimeoutMs)
	}
	if r.ModelMaxCount <= 0 {
		return fmt.Errorf("--model-max-count must be positive, not %d", r.ModelMaxCount)
	}
	if r.FilesDirectory != "" {
		if st, err := os.Stat(r.FilesDirectory); err == nil && !st.IsDir() {
			return fmt.Errorf("--model-files-directory %q is not a directory", r.FilesDirectory)
		}
	}
	return r.validateTriton() // triton_flags.go
}

// apply sets the server's options from the flags.
func (r *repositoryFlags) apply(opts *core.Options) {
	opts.RepositoryFiles = core.RepositoryFileLimits{
		MaxConfigBytes: r.ConfigMaxSize, MaxConfigBytesSetting: "--model-config-max-size",
		ReadTimeout: time.Duration(r.ReadTimeoutMs) * time.Millisecond, ReadTimeoutSetting: "--repository-read-timeout",
	}
	opts.MaxModels, opts.MaxModelsSetting = r.ModelMaxCount, "--model-max-count"
	opts.LoadFiles.Directory = r.FilesDirectory
	r.applyTriton(opts) // triton_flags.go
}
