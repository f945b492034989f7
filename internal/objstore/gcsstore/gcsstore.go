// Package gcsstore reads model repositories from Google Cloud Storage
// through cloud.google.com/go/storage.
package gcsstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"

	"cloud.google.com/go/storage"
	"google.golang.org/api/iterator"
	"google.golang.org/api/option"

	"github.com/tritonhost/tritonhost/internal/objstore"
)

// Bucket is a GCS bucket.
type Bucket struct {
	client *storage.Client
	bucket *storage.BucketHandle
	where  string
}

var _ objstore.Bucket = (*Bucket)(nil)

// Open makes a client for the bucket loc names. With credFile (the
// credential file's "gs" entry for the path) it authenticates with that
// JSON key file; otherwise with Google's default chain
// (GOOGLE_APPLICATION_CREDENTIALS, gcloud's application default
// credentials, the metadata server). STORAGE_EMULATOR_HOST, the client
// library's emulator setting, sends every call to an emulator instead,
// unauthenticated.
func Open(ctx context.Context, loc objstore.Location, credFile string) (*Bucket, error) {
	// Reads through the JSON API, as listings: an emulator behind a proxy
	// serves them whatever the Host header says.
	opts := []option.ClientOption{storage.WithJSONReads()}
	if credFile != "" {
		kind, err := credentialType(credFile)
		if err != nil {
			return nil, fmt.Errorf("gcs repository %s: %w", loc, err)
		}
		opts = append(opts, option.WithAuthCredentialsFile(kind, credFile))
	}
	client, err := storage.NewClient(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("gcs repository %s: make a client: %w", loc, err)
	}
	return &Bucket{client: client, bucket: client.Bucket(loc.Bucket), where: "gs://" + loc.Bucket}, nil
}

// credentialType reads the "type" of a Google credential file
// (service_account, authorized_user, external_account, ...).
func credentialType(path string) (option.CredentialsType, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("read credential file: %w", err)
	}
	var f struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(b, &f); err != nil || f.Type == "" {
		return "", fmt.Errorf("credential file %s: not a Google credential JSON file with a \"type\"", path)
	}
	return option.CredentialsType(f.Type), nil
}

// List implements objstore.Bucket.
func (b *Bucket) List(ctx context.Context, prefix string) ([]objstore.Object, error) {
	q := &storage.Query{Prefix: prefix}
	if err := q.SetAttrSelection([]string{"Name", "Size", "Generation", "MD5", "Updated"}); err != nil {
		return nil, err
	}
	it := b.bucket.Objects(ctx, q)
	var out []objstore.Object
	for {
		a, err := it.Next()
		if errors.Is(err, iterator.Done) {
			return out, nil
		}
		if err != nil {
			return nil, b.wrap("list "+prefix, err)
		}
		out = append(out, objstore.Object{Key: a.Name, Size: a.Size, Tag: strconv.FormatInt(a.Generation, 10),
			MD5: a.MD5, Modified: a.Updated})
	}
}

// Open implements objstore.Bucket.
func (b *Bucket) Open(ctx context.Context, key string) (io.ReadCloser, error) {
	r, err := b.bucket.Object(key).NewReader(ctx)
	if err != nil {
		return nil, b.wrap("get "+key, err)
	}
	return r, nil
}

// Close implements objstore.Bucket.
func (b *Bucket) Close() error { return b.client.Close() }

func (b *Bucket) wrap(op string, err error) error {
	if errors.Is(err, storage.ErrBucketNotExist) || errors.Is(err, storage.ErrObjectNotExist) {
		return fmt.Errorf("%s: %s: %w (%w)", b.where, op, objstore.ErrNotFound, err)
	}
	return fmt.Errorf("%s: %s: %w", b.where, op, err)
}
