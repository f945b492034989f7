package main

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/pflag"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/serverlog"
	"github.com/tritonhost/tritonhost/internal/objstore"
	"github.com/tritonhost/tritonhost/internal/objstore/providers"
	"github.com/tritonhost/tritonhost/internal/objstore/repocache"
)

// objstoreFlags set how the server reads model repositories in object
// storage (--model-repository=s3://..., gs://..., as://...): where their
// local copies go, and the bounds of the downloads that make them.
type objstoreFlags struct {
	CacheDirectory  string
	CacheMaxSize    int64
	DownloadMaxSize int64
	DownloadSecs    int
	StallSecs       int
	Concurrency     int
	AzureEndpoint   string

	cache *repocache.Cache // open while the server runs (open)
}

func (f *objstoreFlags) bind(fs *pflag.FlagSet) {
	fs.StringVar(&f.CacheDirectory, "repository-cache-directory", "",
		"directory under which the local copies of s3://, gs:// and as:// model repositories are kept, in a directory of each server's own, removed at exit; those of servers that are gone are removed at start (default: tritonhost-repocache-<uid> under $TMPDIR or /tmp)")
	fs.Int64Var(&f.CacheMaxSize, "repository-cache-max-size", repocache.DefaultMaxCacheBytes,
		"bytes the local copies of remote model repositories may take on disk, downloads in progress included; a download past it fails its model's load")
	fs.Int64Var(&f.DownloadMaxSize, "repository-download-max-size", repocache.DefaultMaxModelBytes,
		"largest model, in bytes, downloaded from a remote model repository; a larger one fails to load")
	fs.IntVar(&f.DownloadSecs, "repository-download-timeout-secs", int(repocache.DefaultDownloadTimeout/time.Second),
		"seconds the download of one model from a remote model repository may take; then its load fails and the version serving stays")
	fs.IntVar(&f.StallSecs, "repository-download-stall-secs", int(repocache.DefaultStallTimeout/time.Second),
		"seconds a download from a remote model repository may receive nothing before it is given up")
	fs.IntVar(&f.Concurrency, "repository-download-concurrency", repocache.DefaultMaxConcurrent,
		"models downloaded from remote model repositories at once")
	fs.StringVar(&f.AzureEndpoint, "azure-storage-endpoint", "",
		`blob service URL for as:// repositories, "{account}" standing for the path's account, for an emulator or another cloud (default https://{account}.blob.core.windows.net/)`)
}

func (f *objstoreFlags) validate(repos []string) error {
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
// the providers' environment; the function it returns removes it.
func (f *objstoreFlags) open(repos []string, mode string, log *serverlog.Logger) (func(), error) {
	if !remoteRepositories(repos, mode) {
		return func() {}, nil
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
	f.cache = cache
	return func() {
		if err := cache.Close(); err != nil {
			log.Errorf("%v", err)
		}
	}, nil
}

// apply gives the server the repository cache, if there is one.
func (f *objstoreFlags) apply(opts *core.Options) {
	if f.cache != nil {
		opts.RemoteRepositories = f.cache
	}
}

// collector returns the download metrics for /metrics (nil without a
// repository cache).
func (f *objstoreFlags) collector() prometheus.Collector {
	if f.cache == nil {
		return nil
	}
	return f.cache.Collector()
}
