package objstore

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// CredentialPathEnv names Triton's credential file: a JSON file that
// groups the credentials of every provider, each keyed by the start of the
// repository paths it serves (see Credentials).
const CredentialPathEnv = "TRITON_CLOUD_CREDENTIAL_PATH"

// maxCredentialFile bounds the credential file the server reads.
const maxCredentialFile = 1 << 20

// S3Credential is an "s3" entry of the credential file. Empty fields fall
// back on the AWS SDK's default chain (its environment variables,
// AWS_PROFILE, the shared config and credentials files, the instance's
// role).
type S3Credential struct {
	SecretKey    string `json:"secret_key"`
	KeyID        string `json:"key_id"`
	Region       string `json:"region"`
	SessionToken string `json:"session_token"`
	Profile      string `json:"profile"`
}

// AzureCredential is an "as" entry of the credential file.
type AzureCredential struct {
	Account string `json:"account_str"`
	Key     string `json:"account_key"`
}

// Credentials is Triton's credential file, as TRITON_CLOUD_CREDENTIAL_PATH
// names it:
//
//	{
//	  "gs": {"": "/path/to/service-account.json", "gs://other-bucket": "/path/2.json"},
//	  "s3": {"": {"key_id": "...", "secret_key": "...", "region": "...", "session_token": "", "profile": ""}},
//	  "as": {"": {"account_str": "...", "account_key": "..."}}
//	}
//
// A repository path takes the entry of its provider whose name is the
// longest start of the path ("" matches every path).
type Credentials struct {
	GCS   map[string]string          `json:"gs"`
	S3    map[string]S3Credential    `json:"s3"`
	Azure map[string]AzureCredential `json:"as"`
	// Path is the file they were read from ("" when none).
	Path string `json:"-"`
}

// LoadCredentials reads the file TRITON_CLOUD_CREDENTIAL_PATH names; with
// the variable unset it returns empty credentials, and each provider
// takes its own environment variables and default chain.
func LoadCredentials() (*Credentials, error) {
	path := os.Getenv(CredentialPathEnv)
	if path == "" {
		return &Credentials{}, nil
	}
	return ReadCredentials(path)
}

// ReadCredentials reads a credential file of Triton's shape.
func ReadCredentials(path string) (*Credentials, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read cloud credentials (%s): %w", CredentialPathEnv, err)
	}
	defer f.Close()
	buf := make([]byte, maxCredentialFile+1)
	n, _ := readFull(f, buf)
	if n > maxCredentialFile {
		return nil, fmt.Errorf("read cloud credentials %s: larger than %d bytes", path, maxCredentialFile)
	}
	c := &Credentials{}
	if err := json.Unmarshal(buf[:n], c); err != nil {
		return nil, fmt.Errorf("read cloud credentials %s: %w", path, err)
	}
	c.Path = path
	return c, nil
}

func readFull(f *os.File, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		m, err := f.Read(buf[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// longestMatch returns the key of m that is the longest start of path,
// and whether one is.
func longestMatch[V any](m map[string]V, path string) (string, bool) {
	best, found := "", false
	for k := range m {
		if strings.HasPrefix(path, k) && (!found || len(k) > len(best)) {
			best, found = k, true
		}
	}
	return best, found
}

// ForS3 returns the "s3" entry for path, if the file has one.
func (c *Credentials) ForS3(path string) (S3Credential, bool) {
	if c == nil {
		return S3Credential{}, false
	}
	k, ok := longestMatch(c.S3, path)
	return c.S3[k], ok
}

// ForGCS returns the service-account file of the "gs" entry for path, if
// the file has one.
func (c *Credentials) ForGCS(path string) (string, bool) {
	if c == nil {
		return "", false
	}
	k, ok := longestMatch(c.GCS, path)
	return c.GCS[k], ok
}

// ForAzure returns the "as" entry for path, if the file has one.
func (c *Credentials) ForAzure(path string) (AzureCredential, bool) {
	if c == nil {
		return AzureCredential{}, false
	}
	k, ok := longestMatch(c.Azure, path)
	return c.Azure[k], ok
}
