// Package s3store reads model repositories from Amazon S3 and
// S3-compatible servers through aws-sdk-go-v2.
package s3store

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"

	"github.com/tritonhost/tritonhost/internal/objstore"
)

// defaultRegion is the region of a client whose configuration names none
// (an S3-compatible server usually takes any).
const defaultRegion = "us-east-1"

// Bucket is an S3 bucket.
type Bucket struct {
	client *s3.Client
	name   string
	where  string // for messages: s3://[endpoint/]bucket
}

var _ objstore.Bucket = (*Bucket)(nil)

// Open makes a client for the bucket loc names. Credentials come from
// cred when the credential file has an entry for the path, else from the
// SDK's default chain (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
// AWS_SESSION_TOKEN, AWS_PROFILE, the shared config files, the instance
// role); the region from the entry, AWS_REGION or AWS_DEFAULT_REGION, the
// profile, else us-east-1. A location with an endpoint is addressed
// path-style, as S3-compatible servers expect.
func Open(ctx context.Context, loc objstore.Location, cred objstore.S3Credential, hasCred bool) (*Bucket, error) {
	var opts []func(*config.LoadOptions) error
	if hasCred {
		if cred.Profile != "" {
			opts = append(opts, config.WithSharedConfigProfile(cred.Profile))
		}
		if cred.Region != "" {
			opts = append(opts, config.WithRegion(cred.Region))
		}
		if cred.KeyID != "" || cred.SecretKey != "" {
			opts = append(opts, config.WithCredentialsProvider(
				credentials.NewStaticCredentialsProvider(cred.KeyID, cred.SecretKey, cred.SessionToken)))
		}
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("s3 repository %s: load the AWS configuration: %w", loc, err)
	}
	if cfg.Region == "" {
		cfg.Region = defaultRegion
	}
	client := s3.NewFromConfig(cfg, func(o *s3.Options) {
		if loc.Endpoint != "" {
			o.BaseEndpoint = aws.String(loc.Endpoint)
			o.UsePathStyle = true
		}
		// Checksums only where an operation requires them: S3-compatible
		// servers differ in what they accept.
		o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
		o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
	})
	where := "s3://" + loc.Bucket
	if loc.Endpoint != "" {
		where = "s3://" + loc.Endpoint + "/" + loc.Bucket
	}
	return &Bucket{client: client, name: loc.Bucket, where: where}, nil
}

// List implements objstore.Bucket.
func (b *Bucket) List(ctx context.Context, prefix string) ([]objstore.Object, error) {
	var out []objstore.Object
	p := s3.NewListObjectsV2Paginator(b.client, &s3.ListObjectsV2Input{Bucket: aws.String(b.name), Prefix: aws.String(prefix)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, b.wrap("list "+prefix, err)
		}
		for _, o := range page.Contents {
			out = append(out, object(o))
		}
	}
	return out, nil
}

func object(o types.Object) objstore.Object {
	tag := strings.Trim(aws.ToString(o.ETag), `"`)
	obj := objstore.Object{Key: aws.ToString(o.Key), Size: aws.ToInt64(o.Size), Tag: tag, Modified: aws.ToTime(o.LastModified)}
	// A single-part upload's ETag is the MD5 of its content; a multipart
	// one's has a "-<parts>" suffix and is not.
	if len(tag) == 32 && !strings.Contains(tag, "-") {
		if sum, err := hex.DecodeString(tag); err == nil {
			obj.MD5 = sum
		}
	}
	return obj
}

// Open implements objstore.Bucket.
func (b *Bucket) Open(ctx context.Context, key string) (io.ReadCloser, error) {
	out, err := b.client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(b.name), Key: aws.String(key)})
	if err != nil {
		return nil, b.wrap("get "+key, err)
	}
	return out.Body, nil
}

// Close implements objstore.Bucket.
func (b *Bucket) Close() error { return nil }

// wrap names the bucket and the operation, and marks a missing bucket or
// key with objstore.ErrNotFound.
func (b *Bucket) wrap(op string, err error) error {
	var api smithy.APIError
	if errors.As(err, &api) {
		switch api.ErrorCode() {
		case "NoSuchBucket", "NoSuchKey", "NotFound":
			return fmt.Errorf("%s: %s: %w (%w)", b.where, op, objstore.ErrNotFound, err)
		}
	}
	return fmt.Errorf("%s: %s: %w", b.where, op, err)
}
