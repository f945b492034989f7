package objstore

import (
	"fmt"
	"regexp"
	"strings"
)

// Scheme is the kind of object store a repository path names.
type Scheme string

// The schemes Triton reads repositories from.
const (
	S3    Scheme = "s3"
	GCS   Scheme = "gs"
	Azure Scheme = "as"
)

// Location is a repository path in object storage, taken apart.
type Location struct {
	// URL is the path as given.
	URL    string
	Scheme Scheme
	// Endpoint is an S3-compatible server's base URL
	// ("http://host:port" or "https://host:port"), "" for AWS itself.
	Endpoint string
	// Account is the Azure storage account ("" for other schemes).
	Account string
	// Bucket is the S3 or GCS bucket, or the Azure container.
	Bucket string
	// Prefix is the repository's key prefix inside the bucket, "" or
	// ending with "/".
	Prefix string
}

// IsRemote reports whether path names a repository in object storage
// rather than a local directory: it starts with s3://, gs:// or as://.
func IsRemote(path string) bool {
	for _, s := range []Scheme{S3, GCS, Azure} {
		if strings.HasPrefix(path, string(s)+"://") {
			return true
		}
	}
	return false
}

// s3Endpoint matches the start of an S3 path that names its server, as
// Triton reads it: an optional http:// or https://, then host:port.
var s3Endpoint = regexp.MustCompile(`^(https?://)?([0-9A-Za-z\-.]+|\[[0-9A-Fa-f:.]+\]):([0-9]+)/`)

// ParseLocation takes apart a repository path of one of Triton's forms
// (see the package comment). A bucket name is required; the path inside
// it may be empty (the bucket's top level).
func ParseLocation(path string) (Location, error) {
	scheme, rest, ok := strings.Cut(path, "://")
	if !ok || !IsRemote(path) {
		return Location{}, fmt.Errorf("repository path %q: want s3://, gs:// or as://", path)
	}
	loc := Location{URL: path, Scheme: Scheme(scheme)}
	switch loc.Scheme {
	case S3:
		if m := s3Endpoint.FindStringSubmatch(rest); m != nil {
			proto := m[1]
			if proto == "" {
				proto = "http://" // Triton's default for a server of one's own
			}
			loc.Endpoint = proto + m[2] + ":" + m[3]
			rest = rest[len(m[0]):]
		} else if strings.HasPrefix(rest, "http://") || strings.HasPrefix(rest, "https://") {
			return Location{}, fmt.Errorf("repository path %q: an S3 server is named as s3://[http[s]://]host:port/bucket/path", path)
		}
	case Azure:
		account, after, _ := strings.Cut(rest, "/")
		if account == "" {
			return Location{}, fmt.Errorf("repository path %q: want as://account/container/path", path)
		}
		loc.Account, rest = account, after
	}
	bucket, prefix, _ := strings.Cut(rest, "/")
	if bucket == "" {
		return Location{}, fmt.Errorf("repository path %q names no bucket or container", path)
	}
	loc.Bucket = bucket
	prefix = strings.Trim(prefix, "/")
	for _, seg := range strings.Split(prefix, "/") {
		if seg == "." || seg == ".." {
			return Location{}, fmt.Errorf("repository path %q: %q is not allowed in an object path", path, seg)
		}
	}
	if prefix != "" {
		prefix += "/"
	}
	loc.Prefix = prefix
	return loc, nil
}

// String is the location as given.
func (l Location) String() string { return l.URL }
