package objstore

import (
	"os"
	"path/filepath"
	"testing"
)

// TestCredentialsMatchTheLongestName reads Triton's credential file and
// picks, for each path, the entry whose name is the longest start of it.
func TestCredentialsMatchTheLongestName(t *testing.T) {
	c, err := ReadCredentials(filepath.Join("testdata", "cloud_credential.json"))
	if err != nil {
		t.Fatal(err)
	}
	if s3, ok := c.ForS3("s3://s3-bucket-002/models"); !ok || s3.KeyID != "key-2" || s3.SessionToken != "token-2" || s3.Profile != "profile-2" || s3.Region != "eu-west-1" {
		t.Errorf("s3-bucket-002: %+v, %v", s3, ok)
	}
	if s3, ok := c.ForS3("s3://other/models"); !ok || s3.KeyID != "key-1" || s3.SecretKey != "secret-1" {
		t.Errorf("another bucket: %+v, %v", s3, ok)
	}
	if f, ok := c.ForGCS("gs://gcs-bucket-002/models"); !ok || f != "/keys/bucket-002.json" {
		t.Errorf("gcs-bucket-002: %q, %v", f, ok)
	}
	if f, ok := c.ForGCS("gs://any"); !ok || f != "/keys/default.json" {
		t.Errorf("another gcs bucket: %q, %v", f, ok)
	}
	if a, ok := c.ForAzure("as://account2/container/models"); !ok || a.Account != "account2" {
		t.Errorf("account2: %+v, %v", a, ok)
	}
	if a, ok := c.ForAzure("as://account1/c"); !ok || a.Account != "account1" || a.Key != "a2V5LTE=" {
		t.Errorf("account1: %+v, %v", a, ok)
	}
}

// TestCredentialFileErrors: a missing or malformed file is an error that
// names the variable or the file; an unset variable is no file at all.
func TestCredentialFileErrors(t *testing.T) {
	t.Setenv(CredentialPathEnv, "")
	if c, err := LoadCredentials(); err != nil || c.Path != "" {
		t.Errorf("unset %s: %+v, %v", CredentialPathEnv, c, err)
	}
	if _, ok := (&Credentials{}).ForS3("s3://b"); ok {
		t.Errorf("an empty file matched a path")
	}
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"s3": [`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{filepath.Join(dir, "missing.json"), bad} {
		t.Setenv(CredentialPathEnv, p)
		if _, err := LoadCredentials(); err == nil {
			t.Errorf("credential file %s: no error", p)
		}
	}
}
