package server

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/tritonhost/tritonhost/core/serverlog"
	"github.com/tritonhost/tritonhost/internal/objstore"
	"github.com/tritonhost/tritonhost/internal/objstore/providers"
	"github.com/tritonhost/tritonhost/internal/objstore/repocache"
)

func (f *ObjectStorageConfig) validate(repos []string) error {
	for _, r := range repos {
		if objstore.IsRemote(r) {
			if _, err := objstore.ParseLocation(r); err != nil {
				return fmt.Errorf("--model-repository: %w", err)
			}
		}
	}
	for _, b := range []struct {
		name string
		v    int64
	}{{"--repository-cache-max-size", f.CacheMaxSize}, {"--repository-download-max-size", f.DownloadMaxSize},
		{"--repository-download-timeout-secs", int64(f.DownloadSecs)}, {"--repository-download-stall-secs", int64(f.StallSecs)},
		{"--repository-download-concurrency", int64(f.Concurrency)}} {
		if b.v <= 0 {
			return fmt.Errorf("%s must be positive, not %d", b.name, b.v)
		}
	}
	if f.CacheDirectory != "" {
		if st, err := os.Stat(f.CacheDirectory); err == nil && !st.IsDir() {
			return fmt.Errorf("--repository-cache-directory %q is not a directory", f.CacheDirectory)
		}
	}
	return nil
}

// remoteRepositories reports whether the server may read repositories in
// object storage: one of repos is, or repositories may be registered
// (explicit model control).
func remoteRepositories(repos []string, mode string) bool {
	if mode == "explicit" {
		return true
	}
	for _, r := range repos {
		if objstore.IsRemote(r) {
			return true
		}
	}
	return false
}

// open makes the repository cache when the server may read remote
// repositories, with the credentials of TRITON_CLOUD_CREDENTIAL_PATH or
// the providers' environment (nil when it may not); Close removes it.
func (f *ObjectStorageConfig) open(repos []string, mode string, log *serverlog.Logger) (*repocache.Cache, error) {
	if !remoteRepositories(repos, mode) {
		return nil, nil
	}
	creds, err := objstore.LoadCredentials()
	if err != nil {
		return nil, err
	}
	if creds.Path != "" {
		log.Infof("cloud credentials are read from %s (%s)", creds.Path, objstore.CredentialPathEnv)
	}
	dir, private := f.CacheDirectory, false
	if dir == "" {
		dir, private = filepath.Join(os.TempDir(), fmt.Sprintf("tritonhost-repocache-%d", os.Getuid())), true
	}
	cache, err := repocache.New(repocache.Options{
		Directory: dir, Private: private,
		Providers:       providers.Settings{Credentials: creds, AzureEndpoint: f.AzureEndpoint},
		MaxModelBytes:   f.DownloadMaxSize,
		DownloadTimeout: time.Duration(f.DownloadSecs) * time.Second,
		StallTimeout:    time.Duration(f.StallSecs) * time.Second,
		MaxConcurrent:   f.Concurrency,
		MaxCacheBytes:   f.CacheMaxSize,
		Settings: repocache.SettingNames{MaxModelBytes: "--repository-download-max-size", DownloadTimeout: "--repository-download-timeout-secs",
			StallTimeout: "--repository-download-stall-secs", MaxCacheBytes: "--repository-cache-max-size"},
		Logger: log,
	})
	if err != nil {
		return nil, fmt.Errorf("--repository-cache-directory: %w", err)
	}
	return cache, nil
}
