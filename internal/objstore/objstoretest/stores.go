package objstoretest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"cloud.google.com/go/storage"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"google.golang.org/api/option"

	"github.com/tritonhost/tritonhost/internal/objstore"
)

// Store is a running server with a bucket, as a test uses it: it uploads
// and deletes objects, and tells tritonhost how to reach the server.
type Store struct {
	// Name is the provider: "s3", "gcs" or "azure".
	Name string
	// Bucket is the test's bucket (a container for Azure).
	Bucket string
	host   string // host:port tritonhost reaches the server at (the server's, or a proxy's)
	direct string // host:port of the server itself
	client uploader
}

// uploader is what a test does to a bucket, through the provider's SDK.
type uploader interface {
	makeBucket(ctx context.Context, name string) error
	put(ctx context.Context, bucket, key string, data []byte) error
	del(ctx context.Context, bucket, key string) error
}

// Credentials for the servers the tests start.
const (
	s3User, s3Secret = "tritonhost-test", "tritonhost-test-secret"
	// AzureAccount and azureKey are Azurite's well-known development
	// account.
	AzureAccount = "devstoreaccount1"
	azureKey     = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)

// StartMinIO runs a MinIO server on loopback with a bucket.
func StartMinIO(t testing.TB) *Store {
	t.Helper()
	bin := tool(t, "minio", "bin")
	port, console := freePort(t), freePort(t)
	startProcess(t, []string{"MINIO_ROOT_USER=" + s3User, "MINIO_ROOT_PASSWORD=" + s3Secret, "MINIO_BROWSER=off", "MINIO_UPDATE=off"},
		bin, "server", "--quiet", "--address", addr(port), "--console-address", addr(console), minioDrive(t))
	// The cluster check answers 200 once MinIO serves objects; its
	// liveness check answers before ("Server not initialized yet").
	waitOK(t, "minio", "http://"+addr(port)+"/minio/health/cluster")
	client := s3.New(s3.Options{Region: "us-east-1", BaseEndpoint: aws.String("http://" + addr(port)), UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider(s3User, s3Secret, "")})
	return newStore(t, "s3", addr(port), s3Uploader{client})
}

// StartFakeGCS runs fake-gcs-server on loopback with a bucket.
func StartFakeGCS(t testing.TB) *Store {
	t.Helper()
	bin := tool(t, "fake-gcs-server", "bin")
	port := freePort(t)
	startProcess(t, nil, bin, "-scheme", "http", "-host", "127.0.0.1", "-port", fmt.Sprint(port), "-backend", "memory",
		"-public-host", addr(port), "-log-level", "error")
	waitHTTP(t, "fake-gcs-server", "http://"+addr(port)+"/storage/v1/b")
	client, err := storage.NewClient(ctx(t), option.WithEndpoint("http://"+addr(port)+"/storage/v1/"), option.WithoutAuthentication())
	must(t, "gcs client", err)
	t.Cleanup(func() { client.Close() })
	return newStore(t, "gcs", addr(port), gcsUploader{client})
}

// StartAzurite runs Azurite's blob service on loopback with a container.
func StartAzurite(t testing.TB) *Store {
	t.Helper()
	bin := tool(t, "azurite-blob", "azurite", "node_modules", ".bin")
	port := freePort(t)
	startProcess(t, nil, bin, "--blobHost", "127.0.0.1", "--blobPort", fmt.Sprint(port), "--location", t.TempDir(),
		"--silent", "--skipApiVersionCheck", "--loose")
	waitHTTP(t, "azurite", "http://"+addr(port)+"/"+AzureAccount+"?comp=list")
	cred, err := azblob.NewSharedKeyCredential(AzureAccount, azureKey)
	must(t, "azure key", err)
	client, err := azblob.NewClientWithSharedKeyCredential("http://"+addr(port)+"/"+AzureAccount+"/", cred, nil)
	must(t, "azure client", err)
	return newStore(t, "azure", addr(port), azureUploader{client})
}

func newStore(t testing.TB, name, host string, u uploader) *Store {
	s := &Store{Name: name, Bucket: "models", host: host, direct: host, client: u}
	must(t, "make bucket", u.makeBucket(ctx(t), s.Bucket))
	return s
}

// URL is the repository path of prefix in the store's bucket, as
// tritonhost takes it.
func (s *Store) URL(prefix string) string { return s.urlIn(s.Bucket, prefix) }

// URLIn is URL in another bucket (one that may not exist).
func (s *Store) urlIn(bucket, prefix string) string {
	switch s.Name {
	case "s3":
		return "s3://" + s.host + "/" + bucket + "/" + prefix
	case "gcs":
		return "gs://" + bucket + "/" + prefix
	default:
		return "as://" + AzureAccount + "/" + bucket + "/" + prefix
	}
}

// MissingBucketURL is a repository path in a bucket that does not exist.
func (s *Store) MissingBucketURL() string { return s.urlIn("no-such-bucket", "models") }

// Env is the environment tritonhost needs to reach the store with good
// credentials, the environment variables each provider reads.
func (s *Store) Env() []string {
	switch s.Name {
	case "s3":
		return []string{"AWS_ACCESS_KEY_ID=" + s3User, "AWS_SECRET_ACCESS_KEY=" + s3Secret, "AWS_DEFAULT_REGION=us-east-1",
			"AWS_EC2_METADATA_DISABLED=true"}
	case "gcs":
		return []string{"STORAGE_EMULATOR_HOST=" + s.host}
	default:
		return []string{"AZURE_STORAGE_ACCOUNT=" + AzureAccount, "AZURE_STORAGE_KEY=" + azureKey}
	}
}

// Args are the tritonhost flags that reach the store (Azurite's
// endpoint).
func (s *Store) Args() []string {
	if s.Name == "azure" {
		return []string{"--azure-storage-endpoint=http://" + s.host + "/{account}"}
	}
	return nil
}

// CredentialFile writes a TRITON_CLOUD_CREDENTIAL_PATH file for the
// store, with a wrong secret when wrong is set, and returns its path. For
// GCS, whose emulator takes any caller, a wrong credential is a key file
// that does not exist.
func (s *Store) CredentialFile(t testing.TB, wrong bool) string {
	t.Helper()
	var body string
	switch s.Name {
	case "s3":
		secret := s3Secret
		if wrong {
			secret = "not-the-secret"
		}
		body = fmt.Sprintf(`{"s3": {"": {"key_id": %q, "secret_key": %q, "region": "us-east-1", "session_token": "", "profile": ""}}}`, s3User, secret)
	case "gcs":
		body = `{"gs": {}}`
		if wrong {
			body = fmt.Sprintf(`{"gs": {"": %q}}`, filepath.Join(t.TempDir(), "no-such-key.json"))
		}
	default:
		key := azureKey
		if wrong {
			key = "bm90LXRoZS1rZXk=" // base64, but not the account's
		}
		body = fmt.Sprintf(`{"as": {"": {"account_str": %q, "account_key": %q}}}`, AzureAccount, key)
	}
	p := filepath.Join(t.TempDir(), "cloud_credential.json")
	must(t, "write credential file", os.WriteFile(p, []byte(body), 0o600))
	return p
}

// Credentials are the credentials of the store for package providers,
// as a credential file would give them.
func (s *Store) Credentials(t testing.TB) *objstore.Credentials {
	t.Helper()
	c, err := objstore.ReadCredentials(s.CredentialFile(t, false))
	must(t, "read credentials", err)
	return c
}

// AzureEndpoint is the endpoint setting that reaches the store, for
// Azure ("" for the others).
func (s *Store) AzureEndpoint() string {
	if s.Name != "azure" {
		return ""
	}
	return "http://" + s.host + "/{account}"
}

// Via returns the store as reached through p, a proxy to its server.
func (s *Store) Via(p *Proxy) *Store {
	c := *s
	c.host = p.Addr()
	return &c
}

// Put uploads an object.
func (s *Store) Put(t testing.TB, key string, data []byte) {
	t.Helper()
	must(t, "upload "+key, s.client.put(ctx(t), s.Bucket, key, data))
}

// Delete removes an object.
func (s *Store) Delete(t testing.TB, key string) {
	t.Helper()
	must(t, "delete "+key, s.client.del(ctx(t), s.Bucket, key))
}

// UploadDir uploads the files under dir as objects under prefix; an
// empty directory gets a .keep object, since object stores have no
// directories.
func (s *Store) UploadDir(t testing.TB, dir, prefix string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		key := strings.TrimPrefix(prefix+"/"+filepath.ToSlash(rel), "/")
		if d.IsDir() {
			entries, err := os.ReadDir(path)
			if err == nil && len(entries) == 0 {
				s.Put(t, key+"/.keep", nil)
			}
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		s.Put(t, key, data)
		return nil
	})
	must(t, "upload "+dir, err)
}

type s3Uploader struct{ c *s3.Client }

func (u s3Uploader) makeBucket(ctx context.Context, name string) error {
	_, err := u.c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(name)})
	return err
}

func (u s3Uploader) put(ctx context.Context, bucket, key string, data []byte) error {
	_, err := u.c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader(data)})
	return err
}

func (u s3Uploader) del(ctx context.Context, bucket, key string) error {
	_, err := u.c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	return err
}

type gcsUploader struct{ c *storage.Client }

func (u gcsUploader) makeBucket(ctx context.Context, name string) error {
	return u.c.Bucket(name).Create(ctx, "tritonhost-test", nil)
}

func (u gcsUploader) put(ctx context.Context, bucket, key string, data []byte) error {
	w := u.c.Bucket(bucket).Object(key).NewWriter(ctx)
	if _, err := w.Write(data); err != nil {
		w.Close()
		return err
	}
	return w.Close()
}

func (u gcsUploader) del(ctx context.Context, bucket, key string) error {
	return u.c.Bucket(bucket).Object(key).Delete(ctx)
}

type azureUploader struct{ c *azblob.Client }

func (u azureUploader) makeBucket(ctx context.Context, name string) error {
	_, err := u.c.CreateContainer(ctx, name, nil)
	return err
}

func (u azureUploader) put(ctx context.Context, bucket, key string, data []byte) error {
	_, err := u.c.UploadBuffer(ctx, bucket, key, data, nil)
	return err
}

func (u azureUploader) del(ctx context.Context, bucket, key string) error {
	_, err := u.c.DeleteBlob(ctx, bucket, key, nil)
	return err
}
