package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tritonhost/tritonhost/core"
)

// TestRepositoryFlagsBecomeTheServerOptions: the flags set the server's
// bounds, naming themselves in its messages; each refuses a value out of
// range with a message naming it.
func TestRepositoryFlagsBecomeTheServerOptions(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c := flagConfig(t, "--model-config-max-size=4096", "--repository-read-timeout=250", "--model-max-count=7", "--model-files-directory="+dir,
		"--model-config-name=h100", "--model-load-thread-count=0", "--model-load-retry-count=3")
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	var opts core.Options
	c.Repository.apply(&opts, &c.Models)
	want := core.RepositoryFileLimits{MaxConfigBytes: 4096, MaxConfigBytesSetting: "--model-config-max-size",
		ReadTimeout: 250 * time.Millisecond, ReadTimeoutSetting: "--repository-read-timeout"}
	if opts.RepositoryFiles != want || opts.MaxModels != 7 || opts.MaxModelsSetting != "--model-max-count" || opts.LoadFiles.Directory != dir {
		t.Errorf("options %+v %d %q %q", opts.RepositoryFiles, opts.MaxModels, opts.MaxModelsSetting, opts.LoadFiles.Directory)
	}
	// Triton's model options, with Triton's readings (a load thread count
	// of 0 is 1).
	if opts.ModelConfigName != "h100" || opts.LoadConcurrency != 1 || opts.LoadRetries != 3 {
		t.Errorf("core options: config name %q, load concurrency %d, retries %d", opts.ModelConfigName, opts.LoadConcurrency, opts.LoadRetries)
	}

	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		arg  string
		want string
	}{
		{"--model-config-max-size=0", "--model-config-max-size must be positive"},
		{"--repository-read-timeout=-1", "--repository-read-timeout must be positive"},
		{"--model-max-count=0", "--model-max-count must be positive"},
		{"--model-files-directory=" + file, "is not a directory"},
	} {
		c := flagConfig(t, tt.arg)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want an error saying %q", tt.arg, err, tt.want)
		}
	}
}
