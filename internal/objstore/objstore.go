// Package objstore names what the server needs of an object store that
// holds a model repository: listing the objects under a prefix, with their
// sizes and version tags (ETags, generations), and reading one. The
// providers (S3, Google Cloud Storage, Azure Blob) implement Bucket in
// packages of their own, each through its official SDK; package repocache
// keeps local copies of the repositories they hold.
//
// Repository paths take Triton's forms (see ParseLocation):
//
//	s3://bucket/path
//	s3://host:port/bucket/path            (an S3-compatible server, over HTTP)
//	s3://https://host:port/bucket/path    (the same over HTTPS)
//	gs://bucket/path
//	as://account/container/path
package objstore

import (
	"context"
	"errors"
	"io"
	"time"
)

// Object is one object of a listing.
type Object struct {
	// Key is the object's full name in its bucket.
	Key string
	// Size is its length in bytes.
	Size int64
	// Tag changes whenever the object's content is replaced: its ETag (S3,
	// Azure) or its generation (GCS). Two listings that give an object the
	// same Tag and Size saw the same content.
	Tag string
	// MD5 is the MD5 digest of the content when the store reports one
	// (S3's ETag of a single-part upload, GCS's md5Hash, Azure's
	// Content-MD5), else nil; a download is checked against it.
	MD5 []byte
	// Modified is when the object was last written, as the store says.
	Modified time.Time
}

// Bucket is a place in an object store: an S3 or GCS bucket, or an Azure
// container. Its methods are safe for concurrent use, and each honours
// its context's end.
type Bucket interface {
	// List returns every object whose key starts with prefix, in any
	// order.
	List(ctx context.Context, prefix string) ([]Object, error)
	// Open starts reading the object at key. The reader's reads fail
	// once ctx ends.
	Open(ctx context.Context, key string) (io.ReadCloser, error)
	// Close releases the client.
	Close() error
}

// ErrNotFound is what a provider wraps when a bucket, container or object
// does not exist.
var ErrNotFound = errors.New("not found")
