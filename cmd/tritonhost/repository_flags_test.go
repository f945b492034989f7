package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/tritonhost/tritonhost/core"
)

// TestRepositoryFlagsBecomeTheServerOptions: the flags set the server's
// bounds, naming themselves in its messages; each refuses a value out of
// range with a message naming it.
func TestRepositoryFlagsBecomeTheServerOptions(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var r repositoryFlags
	f := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	r.bind(f)
	if err := f.Parse([]string{"--model-config-max-size=4096", "--repository-read-timeout=250", "--model-max-count=7", "--model-files-directory=" + dir}); err != nil {
		t.Fatal(err)
	}
	if err := r.validate(); err != nil {
		t.Fatal(err)
	}
	var opts core.Options
	r.apply(&opts)
	want := core.RepositoryFileLimits{MaxConfigBytes: 4096, MaxConfigBytesSetting: "--model-config-max-size",
		ReadTimeout: 250 * time.Millisecond, ReadTimeoutSetting: "--repository-read-timeout"}
	if opts.RepositoryFiles != want || opts.MaxModels != 7 || opts.MaxModelsSetting != "--model-max-count" || opts.LoadFiles.Directory != dir {
		t.Errorf("options %+v %d %q %q", opts.RepositoryFiles, opts.MaxModels, opts.MaxModelsSetting, opts.LoadFiles.Directory)
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
		var q repositoryFlags
		f := pflag.NewFlagSet("serve", pflag.ContinueOnError)
		q.bind(f)
		if err := f.Parse([]string{tt.arg}); err != nil {
			t.Fatal(err)
		}
		if err := q.validate(); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want an error saying %q", tt.arg, err, tt.want)
		}
	}
}
