package server

import (
	"strings"
	"testing"

	"github.com/tritonhost/tritonhost/core/serverlog"
)

// TestObjstoreFlagsValidate refuses remote repository paths Triton does
// not take and bounds that are not positive.
func TestObjstoreFlagsValidate(t *testing.T) {
	for _, tc := range []struct {
		name  string
		args  []string
		repos []string
		want  string
	}{
		{name: "defaults", repos: []string{"s3://bucket/models", "gs://b/m", "as://acct/c/m", "/models"}},
		{name: "no bucket", repos: []string{"gs://"}, want: "names no bucket"},
		{name: "https without port", repos: []string{"s3://https://host/bucket"}, want: "host:port"},
		{name: "cache size", args: []string{"--repository-cache-max-size=0"}, want: "--repository-cache-max-size must be positive"},
		{name: "model size", args: []string{"--repository-download-max-size=-1"}, want: "--repository-download-max-size must be positive"},
		{name: "timeout", args: []string{"--repository-download-timeout-secs=0"}, want: "--repository-download-timeout-secs"},
		{name: "stall", args: []string{"--repository-download-stall-secs=0"}, want: "--repository-download-stall-secs"},
		{name: "concurrency", args: []string{"--repository-download-concurrency=0"}, want: "--repository-download-concurrency"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := flagConfig(t, tc.args...)
			err := c.ObjectStorage.validate(tc.repos)
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("validate: %v; want %q", err, tc.want)
			}
		})
	}
}

// TestObjstoreFlagsOpen makes the repository cache only when a remote
// repository may be read, with its metrics, and removes it on Close.
func TestObjstoreFlagsOpen(t *testing.T) {
	log := serverlog.Discard()
	t.Setenv("TRITON_CLOUD_CREDENTIAL_PATH", "")
	var local ObjectStorageConfig
	cache, err := local.open([]string{t.TempDir()}, "none", log)
	if err != nil || cache != nil {
		t.Errorf("a server of local repositories got a repository cache: %v, %v", cache, err)
	}

	remote := ObjectStorageConfig{CacheDirectory: t.TempDir(), CacheMaxSize: 1 << 20, DownloadMaxSize: 1 << 20, DownloadSecs: 1, StallSecs: 1, Concurrency: 1}
	cache, err = remote.open([]string{"s3://bucket/models"}, "poll", log)
	if err != nil {
		t.Fatal(err)
	}
	if cache == nil || cache.Collector() == nil {
		t.Fatalf("a server of a remote repository has no repository cache or metrics")
	}
	if err := cache.Close(); err != nil {
		t.Errorf("close the repository cache: %v", err)
	}
}
