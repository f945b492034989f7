// Package azstore reads model repositories from Azure Blob Storage
// through azure-sdk-for-go's azblob.
package azstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"

	"github.com/tritonhost/tritonhost/internal/objstore"
)

// Environment variables Triton reads for Azure Storage.
const (
	AccountEnv = "AZURE_STORAGE_ACCOUNT"
	KeyEnv     = "AZURE_STORAGE_KEY"
)

// DefaultEndpoint is the blob service of an account in Azure's public
// cloud; "{account}" stands for the account's name.
const DefaultEndpoint = "https://{account}.blob.core.windows.net/"

// Container is an Azure blob container.
type Container struct {
	client    *azblob.Client
	container string
	where     string
}

var _ objstore.Bucket = (*Container)(nil)

// Open makes a client for the container loc names, at endpoint (a blob
// service URL in which "{account}" is replaced by the path's account;
// DefaultEndpoint when ""). The key is the credential file's "as" entry
// for the path when it has one (its account_str, if set, must be the
// path's account), else AZURE_STORAGE_KEY; with no key the container is
// read anonymously (a public container).
func Open(loc objstore.Location, endpoint string, cred objstore.AzureCredential, hasCred bool) (*Container, error) {
	if endpoint == "" {
		endpoint = DefaultEndpoint
	}
	url := strings.ReplaceAll(endpoint, "{account}", loc.Account)
	if !strings.HasSuffix(url, "/") {
		url += "/"
	}
	account, key := os.Getenv(AccountEnv), os.Getenv(KeyEnv)
	if hasCred {
		account, key = cred.Account, cred.Key
	}
	if account != "" && account != loc.Account {
		return nil, fmt.Errorf("azure repository %s: the credentials are for account %q, not %q", loc, account, loc.Account)
	}
	where := "as://" + loc.Account + "/" + loc.Bucket
	var client *azblob.Client
	var err error
	if key != "" {
		var sk *azblob.SharedKeyCredential
		if sk, err = azblob.NewSharedKeyCredential(loc.Account, key); err != nil {
			return nil, fmt.Errorf("azure repository %s: account key: %w", loc, err)
		}
		client, err = azblob.NewClientWithSharedKeyCredential(url, sk, nil)
	} else {
		client, err = azblob.NewClientWithNoCredential(url, nil)
	}
	if err != nil {
		return nil, fmt.Errorf("azure repository %s: make a client: %w", loc, err)
	}
	return &Container{client: client, container: loc.Bucket, where: where}, nil
}

// List implements objstore.Bucket.
func (c *Container) List(ctx context.Context, prefix string) ([]objstore.Object, error) {
	pager := c.client.NewListBlobsFlatPager(c.container, &azblob.ListBlobsFlatOptions{Prefix: to.Ptr(prefix)})
	var out []objstore.Object
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return nil, c.wrap("list "+prefix, err)
		}
		for _, b := range page.Segment.BlobItems {
			if b == nil || b.Name == nil || b.Properties == nil {
				continue
			}
			p := b.Properties
			obj := objstore.Object{Key: *b.Name, MD5: p.ContentMD5}
			if p.ContentLength != nil {
				obj.Size = *p.ContentLength
			}
			if p.ETag != nil {
				obj.Tag = strings.Trim(string(*p.ETag), `"`)
			}
			if p.LastModified != nil {
				obj.Modified = *p.LastModified
			}
			out = append(out, obj)
		}
	}
	return out, nil
}

// Open implements objstore.Bucket.
func (c *Container) Open(ctx context.Context, key string) (io.ReadCloser, error) {
	resp, err := c.client.DownloadStream(ctx, c.container, key, nil)
	if err != nil {
		return nil, c.wrap("get "+key, err)
	}
	return resp.Body, nil
}

// Close implements objstore.Bucket.
func (c *Container) Close() error { return nil }

// wrap names the container and the operation, puts the service's answer
// on one line (its status and error code, not the whole response), and
// marks a missing container or blob with objstore.ErrNotFound.
func (c *Container) wrap(op string, err error) error {
	notFound := bloberror.HasCode(err, bloberror.ContainerNotFound, bloberror.BlobNotFound, bloberror.ResourceNotFound)
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		err = fmt.Errorf("HTTP %d %s", re.StatusCode, re.ErrorCode)
	}
	if notFound {
		return fmt.Errorf("%s: %s: %w (%w)", c.where, op, objstore.ErrNotFound, err)
	}
	return fmt.Errorf("%s: %s: %w", c.where, op, err)
}
