package objstore

import (
	"strings"
	"testing"
)

// TestParseLocationTakesTritonsForms parses each repository path form
// Triton takes, and refuses paths it cannot read.
func TestParseLocationTakesTritonsForms(t *testing.T) {
	for _, tc := range []struct {
		path string
		want Location
		err  string
	}{
		{path: "s3://bucket/path/to/repo", want: Location{Scheme: S3, Bucket: "bucket", Prefix: "path/to/repo/"}},
		{path: "s3://bucket", want: Location{Scheme: S3, Bucket: "bucket"}},
		{path: "s3://bucket/", want: Location{Scheme: S3, Bucket: "bucket"}},
		{path: "s3://minio.local:9000/bucket/models", want: Location{Scheme: S3, Endpoint: "http://minio.local:9000", Bucket: "bucket", Prefix: "models/"}},
		{path: "s3://http://10.0.0.1:9000/bucket/models", want: Location{Scheme: S3, Endpoint: "http://10.0.0.1:9000", Bucket: "bucket", Prefix: "models/"}},
		{path: "s3://https://s3.example.com:443/bucket/a/b", want: Location{Scheme: S3, Endpoint: "https://s3.example.com:443", Bucket: "bucket", Prefix: "a/b/"}},
		{path: "gs://bucket/models", want: Location{Scheme: GCS, Bucket: "bucket", Prefix: "models/"}},
		{path: "as://account/container/models", want: Location{Scheme: Azure, Account: "account", Bucket: "container", Prefix: "models/"}},
		{path: "as://account/container", want: Location{Scheme: Azure, Account: "account", Bucket: "container"}},
		{path: "as://account", err: "names no bucket"},
		{path: "gs://", err: "names no bucket"},
		{path: "s3://https://host/bucket", err: "host:port"},
		{path: "gs://bucket/a/../b", err: `".."`},
		{path: "/models", err: "want s3://"},
		{path: "http://host/models", err: "want s3://"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			got, err := ParseLocation(tc.path)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("ParseLocation(%q) = %+v, %v; want an error with %q", tc.path, got, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.want.URL = tc.path
			if got != tc.want {
				t.Errorf("ParseLocation(%q) = %+v, want %+v", tc.path, got, tc.want)
			}
		})
	}
}

// TestIsRemote tells object-storage paths from local ones.
func TestIsRemote(t *testing.T) {
	for path, want := range map[string]bool{"s3://b": true, "gs://b/p": true, "as://a/c": true, "/models": false, "models": false, "s3:/b": false} {
		if got := IsRemote(path); got != want {
			t.Errorf("IsRemote(%q) = %v, want %v", path, got, want)
		}
	}
}
