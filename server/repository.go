package server

import (
	"fmt"
	"os"
	"time"

	"github.com/tritonhost/tritonhost/core"
)

func (r *RepositoryConfig) validate() error {
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
	return nil
}

// apply sets the server's options of the repository bounds and of
// Triton's model options (m).
func (r *RepositoryConfig) apply(opts *core.Options, m *ModelsConfig) {
	opts.RepositoryFiles = core.RepositoryFileLimits{
		MaxConfigBytes: r.ConfigMaxSize, MaxConfigBytesSetting: "--model-config-max-size",
		ReadTimeout: time.Duration(r.ReadTimeoutMs) * time.Millisecond, ReadTimeoutSetting: "--repository-read-timeout",
	}
	opts.MaxModels, opts.MaxModelsSetting = r.ModelMaxCount, "--model-max-count"
	opts.LoadFiles.Directory = r.FilesDirectory
	opts.ModelConfigName = m.ConfigName
	opts.LoadConcurrency = max(1, m.LoadThreadCount) // Triton's std::max(1u, ...)
	opts.LoadRetries = m.LoadRetryCount
	opts.ModelNamespacing = m.Namespacing
}
