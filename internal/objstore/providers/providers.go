// Package providers opens the object-store bucket a repository path
// names, with the provider its scheme picks (s3://, gs://, as://).
package providers

import (
	"context"
	"fmt"

	"github.com/tritonhost/tritonhost/internal/objstore"
	"github.com/tritonhost/tritonhost/internal/objstore/azstore"
	"github.com/tritonhost/tritonhost/internal/objstore/gcsstore"
	"github.com/tritonhost/tritonhost/internal/objstore/s3store"
)

// Settings are what the providers take besides the path.
type Settings struct {
	// Credentials is Triton's credential file (nil or empty: each
	// provider's environment variables and default chain).
	Credentials *objstore.Credentials
	// AzureEndpoint is the blob service URL for as:// paths, "{account}"
	// standing for the path's account ("": Azure's public cloud).
	AzureEndpoint string
}

// Open makes a client for the bucket of loc.
func Open(ctx context.Context, loc objstore.Location, s Settings) (objstore.Bucket, error) {
	switch loc.Scheme {
	case objstore.S3:
		cred, ok := s.Credentials.ForS3(loc.URL)
		return s3store.Open(ctx, loc, cred, ok)
	case objstore.GCS:
		file, _ := s.Credentials.ForGCS(loc.URL)
		return gcsstore.Open(ctx, loc, file)
	case objstore.Azure:
		cred, ok := s.Credentials.ForAzure(loc.URL)
		return azstore.Open(loc, s.AzureEndpoint, cred, ok)
	}
	return nil, fmt.Errorf("repository %s: unknown scheme %q", loc, loc.Scheme)
}
