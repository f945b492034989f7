package repocache

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/tritonhost/tritonhost/internal/objstore"
	"github.com/tritonhost/tritonhost/internal/objstore/objstoretest"
	"github.com/tritonhost/tritonhost/internal/objstore/providers"
)

// newCache makes a cache in a test directory that reads store (through
// its credentials, as a credential file gives them), with opts' bounds.
func newCache(t *testing.T, store *objstoretest.Store, opts Options) *Cache {
	t.Helper()
	opts.Directory = t.TempDir()
	opts.Providers = providers.Settings{Credentials: store.Credentials(t), AzureEndpoint: store.AzureEndpoint()}
	c, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Error(err)
		}
		if _, err := os.Stat(c.Path()); !os.IsNotExist(err) {
			t.Errorf("the cache's directory is still there after Close: %v", err)
		}
	})
	return c
}

func local(t *testing.T, c *Cache, url string) string {
	t.Helper()
	dir, ok, err := c.Local(url)
	if err != nil || !ok {
		t.Fatalf("Local(%s) = %q, %v, %v", url, dir, ok, err)
	}
	return dir
}

func refresh(c *Cache, dir string, names ...string) map[string]error {
	return c.Refresh(context.Background(), []string{dir}, names)
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestCopiesAModelOnceComplete uploads a model's version before its
// config.pbtxt: a full refresh skips it quietly, a refresh that names it
// says why, and once config.pbtxt is there the copy is made whole, by the
// second full refresh that finds the model unchanged.
func TestCopiesAModelOnceComplete(t *testing.T) {
	t.Parallel()
	store := objstoretest.StartMinIO(t)
	c := newCache(t, store, Options{})
	dir := local(t, c, store.URL("repo"))
	store.Put(t, "repo/m/1/model.bin", []byte("weights"))

	if errs := refresh(c, dir); len(errs) != 0 {
		t.Fatalf("full refresh of a model without config.pbtxt: %v", errs)
	}
	if _, err := os.Stat(filepath.Join(dir, "m")); !os.IsNotExist(err) {
		t.Fatalf("a model without config.pbtxt was copied: %v", err)
	}
	if err := refresh(c, dir, "m")["m"]; err == nil || !strings.Contains(err.Error(), "no config.pbtxt") {
		t.Fatalf("named refresh of a model without config.pbtxt: %v", err)
	}

	store.Put(t, "repo/m/config.pbtxt", []byte(`name: "m"`))
	if errs := refresh(c, dir); len(errs) != 0 {
		t.Fatal(errs)
	}
	if _, err := os.Stat(filepath.Join(dir, "m")); !os.IsNotExist(err) {
		t.Fatalf("a model was copied before its listing held still for a refresh: %v", err)
	}
	if errs := refresh(c, dir); len(errs) != 0 {
		t.Fatal(errs)
	}
	if got := readFile(t, filepath.Join(dir, "m", "1", "model.bin")); got != "weights" {
		t.Errorf("copied model file: %q", got)
	}
	if got, want := c.Used(), int64(len("weights")+len(`name: "m"`)); got != want {
		t.Errorf("cache bytes %d, want %d", got, want)
	}
}

// TestRefreshReadsOnlyWhatChanged refreshes a copied model: unchanged, it
// downloads nothing; with one object replaced, it downloads that object
// alone and links the others from the copy in place; a model gone from
// the bucket loses its copy.
func TestRefreshReadsOnlyWhatChanged(t *testing.T) {
	t.Parallel()
	store := objstoretest.StartMinIO(t)
	c := newCache(t, store, Options{})
	dir := local(t, c, store.URL("repo"))
	big := bytes.Repeat([]byte("x"), 4096)
	store.Put(t, "repo/m/config.pbtxt", []byte(`name: "m"`))
	store.Put(t, "repo/m/1/big.bin", big)
	store.Put(t, "repo/m/2/small.bin", []byte("v2"))
	if errs := refresh(c, dir); len(errs) != 0 {
		t.Fatal(errs)
	}
	downloaded := func() float64 { return testutil.ToFloat64(c.metrics.bytes.WithLabelValues(store.URL("repo"))) }
	before := downloaded()
	inode := func(p string) uint64 {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		return st.Sys().(*syscall.Stat_t).Ino
	}
	bigPath := filepath.Join(dir, "m", "1", "big.bin")
	bigInode := inode(bigPath)

	if errs := refresh(c, dir); len(errs) != 0 {
		t.Fatal(errs)
	}
	if got := downloaded(); got != before {
		t.Errorf("an unchanged model downloaded %v bytes", got-before)
	}

	store.Put(t, "repo/m/2/small.bin", []byte("v2 again"))
	if errs := refresh(c, dir, "m"); len(errs) != 0 {
		t.Fatal(errs)
	}
	if got := downloaded() - before; got != float64(len("v2 again")) {
		t.Errorf("a change of one object downloaded %v bytes, want %d", got, len("v2 again"))
	}
	if got := readFile(t, filepath.Join(dir, "m", "2", "small.bin")); got != "v2 again" {
		t.Errorf("changed object in the copy: %q", got)
	}
	if inode(bigPath) != bigInode {
		t.Errorf("the unchanged object was not linked from the copy in place")
	}

	for _, k := range []string{"repo/m/config.pbtxt", "repo/m/1/big.bin", "repo/m/2/small.bin"} {
		store.Delete(t, k)
	}
	if errs := refresh(c, dir); len(errs) != 0 {
		t.Fatal(errs)
	}
	if _, err := os.Stat(filepath.Join(dir, "m")); !os.IsNotExist(err) {
		t.Errorf("the copy of a model gone from the bucket is still there: %v", err)
	}
	if c.Used() != 0 {
		t.Errorf("cache bytes %d with no copy left", c.Used())
	}
}

// TestDownloadBounds makes a model's new version break each bound in
// turn: the download fails with an error naming the bound, the copy in
// place stays as it was, and the failure is counted.
func TestDownloadBounds(t *testing.T) {
	t.Parallel()
	store := objstoretest.StartMinIO(t)
	proxy := objstoretest.StartProxy(t, store)
	large := bytes.Repeat([]byte("y"), 1<<20)
	for _, tc := range []struct {
		name  string
		opts  Options
		stall bool
		want  string
	}{
		{name: "model size", opts: Options{MaxModelBytes: 1 << 19, Settings: SettingNames{MaxModelBytes: "--max-model"}}, want: "--max-model"},
		{name: "cache size", opts: Options{MaxCacheBytes: 1 << 19, Settings: SettingNames{MaxCacheBytes: "--max-cache"}}, want: "--max-cache"},
		{name: "stall", opts: Options{StallTimeout: time.Second, Settings: SettingNames{StallTimeout: "--stall"}}, stall: true, want: "sent no data for 1s (--stall)"},
		{name: "download time", opts: Options{DownloadTimeout: 2 * time.Second, StallTimeout: time.Minute,
			Settings: SettingNames{DownloadTimeout: "--timeout"}}, stall: true, want: "longer than 2s (--timeout)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			via := store.Via(proxy)
			c := newCache(t, via, tc.opts)
			prefix := "bounds-" + strings.ReplaceAll(tc.name, " ", "-")
			dir := local(t, c, via.URL(prefix))
			store.Put(t, prefix+"/m/config.pbtxt", []byte(`name: "m"`))
			store.Put(t, prefix+"/m/1/a.bin", []byte("v1"))
			if errs := refresh(c, dir); len(errs) != 0 {
				t.Fatal(errs)
			}
			store.Put(t, prefix+"/m/2/large.bin", large)
			if tc.stall {
				proxy.Stall()
			}
			err := refresh(c, dir, "m")["m"]
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), `download model "m"`) {
				t.Fatalf("download past the bound: %v; want an error with %q", err, tc.want)
			}
			if _, err := os.Stat(filepath.Join(dir, "m", "2")); !os.IsNotExist(err) {
				t.Errorf("the failed version is in the copy: %v", err)
			}
			if got := readFile(t, filepath.Join(dir, "m", "1", "a.bin")); got != "v1" {
				t.Errorf("the copy in place changed: %q", got)
			}
			if n := testutil.ToFloat64(c.metrics.failures.WithLabelValues(via.URL(prefix))); n != 1 {
				t.Errorf("failures counted: %v, want 1", n)
			}
		})
	}
}

// TestUnreadableRepositories reads a bucket that does not exist and one
// with wrong credentials: a full refresh gives the repository's error, a
// named one the model's, each naming the repository.
func TestUnreadableRepositories(t *testing.T) {
	t.Parallel()
	store := objstoretest.StartMinIO(t)
	wrong, err := objstore.ReadCredentials(store.CredentialFile(t, true))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		url   string
		creds *objstore.Credentials
		want  string
	}{
		{"missing bucket", store.MissingBucketURL(), store.Credentials(t), "NoSuchBucket"},
		{"wrong credentials", store.URL("repo"), wrong, "SignatureDoesNotMatch"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := New(Options{Directory: t.TempDir(), Providers: providers.Settings{Credentials: tc.creds}})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			dir := local(t, c, tc.url)
			if err := refresh(c, dir)[""]; err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.url) {
				t.Errorf("full refresh: %v; want %q naming %s", err, tc.want, tc.url)
			}
			if err := refresh(c, dir, "m")["m"]; err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("named refresh: %v; want %q", err, tc.want)
			}
		})
	}
}

// TestLocalLeavesLocalPaths: a local directory is not the cache's.
func TestLocalLeavesLocalPaths(t *testing.T) {
	t.Parallel()
	c, err := New(Options{Directory: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, ok, err := c.Local("/models"); ok || err != nil {
		t.Errorf("Local(/models) = %v, %v; want not remote", ok, err)
	}
	if _, _, err := c.Local("s3://"); err == nil {
		t.Errorf("Local(s3://) took a path without a bucket")
	}
}
