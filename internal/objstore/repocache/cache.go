// Package repocache keeps local copies of model repositories held in
// object storage, which the server reads in their place
// (core.RemoteRepositories).
//
// # Layout
//
// The cache is a directory of the server's own under Options.Directory
// (package procdir: made at start, removed at exit, and what a server
// that is gone left there is removed at the next start). Each remote
// repository has a directory in it, <n>-<bucket>/, holding models/, the
// local repository the server scans, and staging/, where downloads are
// made.
//
// # A model's copy
//
// A model is copied whole: every object under <prefix><model>/ (its
// configuration and all its versions) is downloaded into a staging
// directory, each object checked against the listing (its size, and its
// MD5 where the store gives one), and the model listed again: only when
// that second listing matches the first (the same keys, sizes and
// ETags/generations) is the staging directory swapped into models/ in one
// rename. A model with no config.pbtxt is not complete, and is not
// copied: upload config.pbtxt last. Under a full refresh (a poll), a
// model that changed is downloaded only once a refresh finds the same
// listing as the refresh before it (it held still for a poll interval);
// the first full refresh, at start, takes what is complete. So a model
// being uploaded is never loaded half-way: it is not there yet, or not
// holding still, or changing under the download, which is then discarded
// and tried again at the next refresh. A refresh that names a model (an
// explicit load) takes the model as it is, with the config.pbtxt and
// download checks.
//
// A refresh reads only what changed: a model whose listing matches its
// copy's is not touched, and in a model that changed only the objects
// whose ETag or size changed are downloaded, the others linked from the
// copy in place.
//
// # Bounds
//
// A model may download at most Options.MaxModelBytes, within
// Options.DownloadTimeout, and an object that sends no data for
// Options.StallTimeout fails its model's download; at most
// Options.MaxConcurrent models download at once; the copies and the
// downloads in progress together stay within Options.MaxCacheBytes. A
// download that fails leaves the model's copy as it was, and the
// server's serving versions with it.
package repocache

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"time"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/serverlog"
	"github.com/tritonhost/tritonhost/internal/objstore"
	"github.com/tritonhost/tritonhost/internal/objstore/providers"
	"github.com/tritonhost/tritonhost/internal/procdir"
)

// Defaults of Options.
const (
	DefaultMaxModelBytes   int64 = 64 << 30
	DefaultMaxCacheBytes   int64 = 256 << 30
	DefaultDownloadTimeout       = 30 * time.Minute
	DefaultStallTimeout          = 60 * time.Second
	DefaultMaxConcurrent         = 4
	// listTimeout bounds one listing of a repository or a model.
	listTimeout = 2 * time.Minute
)

// Options configure a Cache.
type Options struct {
	// Directory is where the cache goes: a directory of the server's own
	// is made under it. Required.
	Directory string
	// Private: Directory is in a place others may write to (the default
	// under the system's temporary directory), and must be this user's
	// own (see procdir.Open).
	Private bool
	// Providers are the providers' settings (credentials, the Azure
	// endpoint).
	Providers providers.Settings
	// OpenBucket opens the bucket of a location (default: providers.Open
	// with Providers).
	OpenBucket func(ctx context.Context, loc objstore.Location) (objstore.Bucket, error)
	// MaxModelBytes bounds the bytes of one model (default
	// DefaultMaxModelBytes).
	MaxModelBytes int64
	// DownloadTimeout bounds the download of one model (default
	// DefaultDownloadTimeout).
	DownloadTimeout time.Duration
	// StallTimeout bounds how long an object's download may go without
	// receiving data (default DefaultStallTimeout).
	StallTimeout time.Duration
	// MaxConcurrent bounds the models downloading at once (default
	// DefaultMaxConcurrent).
	MaxConcurrent int
	// MaxCacheBytes bounds the bytes of all copies and downloads in
	// progress (default DefaultMaxCacheBytes).
	MaxCacheBytes int64
	// Settings names the settings above in messages (default: the
	// option's own name).
	Settings SettingNames
	// Logger receives the cache's log (default: discarded).
	Logger *serverlog.Logger
}

// SettingNames are the names of the settings that set the bounds, for
// the messages of downloads refused or stopped by one.
type SettingNames struct {
	MaxModelBytes, DownloadTimeout, StallTimeout, MaxCacheBytes string
}

// Cache keeps the local copies of remote repositories. Safe for
// concurrent use.
type Cache struct {
	opts    Options
	log     *serverlog.Logger
	dir     *procdir.Dir
	sem     chan struct{} // a slot per download running
	metrics *metrics

	ctx    context.Context // ends at Close, ending the downloads in progress
	cancel context.CancelFunc
	wg     sync.WaitGroup // Refresh calls running

	mu      sync.Mutex
	repos   map[string]*repo // by path as given
	byLocal map[string]*repo // by the local directory
	used    int64            // bytes of the copies and of downloads reserved
	closed  bool
}

var _ core.RemoteRepositories = (*Cache)(nil)

// New makes the cache's directory under opts.Directory, removing what
// servers that are gone left there.
func New(opts Options) (*Cache, error) {
	if opts.Directory == "" {
		return nil, errors.New("repocache: Options.Directory is required")
	}
	setDefaults(&opts)
	dir, removed, err := procdir.Open(opts.Directory, opts.Private)
	if err != nil && dir == nil {
		return nil, fmt.Errorf("repository cache in %s: %w", opts.Directory, err)
	}
	if err != nil {
		opts.Logger.Warnf("repository cache: %v", err)
	}
	for _, r := range removed {
		opts.Logger.Infof("repository cache: removed %s, left by a server that is gone", r)
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Cache{opts: opts, log: opts.Logger, dir: dir, sem: make(chan struct{}, opts.MaxConcurrent),
		metrics: newMetrics(), ctx: ctx, cancel: cancel, repos: map[string]*repo{}, byLocal: map[string]*repo{}}, nil
}

func setDefaults(o *Options) {
	if o.Logger == nil {
		o.Logger = serverlog.Discard()
	}
	if o.OpenBucket == nil {
		settings := o.Providers
		o.OpenBucket = func(ctx context.Context, loc objstore.Location) (objstore.Bucket, error) {
			return providers.Open(ctx, loc, settings)
		}
	}
	if o.MaxModelBytes <= 0 {
		o.MaxModelBytes = DefaultMaxModelBytes
	}
	if o.DownloadTimeout <= 0 {
		o.DownloadTimeout = DefaultDownloadTimeout
	}
	if o.StallTimeout <= 0 {
		o.StallTimeout = DefaultStallTimeout
	}
	if o.MaxConcurrent <= 0 {
		o.MaxConcurrent = DefaultMaxConcurrent
	}
	if o.MaxCacheBytes <= 0 {
		o.MaxCacheBytes = DefaultMaxCacheBytes
	}
	s := &o.Settings
	for _, f := range []struct {
		p    *string
		name string
	}{{&s.MaxModelBytes, "MaxModelBytes"}, {&s.DownloadTimeout, "DownloadTimeout"}, {&s.StallTimeout, "StallTimeout"}, {&s.MaxCacheBytes, "MaxCacheBytes"}} {
		if *f.p == "" {
			*f.p = f.name
		}
	}
}

// Path is the cache's directory.
func (c *Cache) Path() string { return c.dir.Path }

// unsafeName matches what a bucket name may hold that a directory name
// should not.
var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// Local implements core.RemoteRepositories: the first call for a remote
// path makes its directories and its client. A client that cannot be made
// (credentials that cannot be read) is not an error here: each refresh
// tries again and gives the reason, so that the server starts and serves
// its other repositories.
func (c *Cache) Local(path string) (string, bool, error) {
	if !objstore.IsRemote(path) {
		return "", false, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return "", true, errors.New("the repository cache is closed")
	}
	if r := c.repos[path]; r != nil {
		return r.models, true, nil
	}
	loc, err := objstore.ParseLocation(path)
	if err != nil {
		return "", true, err
	}
	root := filepath.Join(c.dir.Path, fmt.Sprintf("%d-%s", len(c.repos)+1, unsafeName.ReplaceAllString(loc.Bucket, "_")))
	r := newRepo(c, loc, root)
	for _, d := range []string{r.models, r.staging} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return "", true, fmt.Errorf("repository %s: make its local copy: %w", path, err)
		}
	}
	if _, err := r.client(c.ctx); err != nil {
		c.log.Errorf("model repository %s: %v", path, err)
	}
	c.repos[path] = r
	c.byLocal[r.models] = r
	c.log.Infof("model repository %s is read through its local copy in %s", path, r.models)
	return r.models, true, nil
}

// Refresh implements core.RemoteRepositories.
func (c *Cache) Refresh(ctx context.Context, repos []string, names []string) map[string]error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return map[string]error{"": errors.New("the repository cache is closed")}
	}
	c.wg.Add(1)
	var todo []*repo
	for _, p := range repos {
		if r := c.byLocal[p]; r != nil {
			todo = append(todo, r)
		}
	}
	c.mu.Unlock()
	defer c.wg.Done()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(c.ctx, cancel)
	defer stop()
	errs := map[string]error{}
	for _, r := range todo {
		for name, err := range r.refresh(ctx, names) {
			errs[name] = errors.Join(errs[name], err)
		}
	}
	return errs
}

// Close ends the downloads in progress, waits for the refreshes, and
// removes the cache's directory.
func (c *Cache) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	c.mu.Unlock()
	c.cancel()
	c.wg.Wait()
	var errs []error
	for _, r := range c.repos {
		if err := r.close(); err != nil {
			errs = append(errs, err)
		}
	}
	if err := c.dir.Close(); err != nil {
		errs = append(errs, fmt.Errorf("remove the repository cache %s: %w", c.dir.Path, err))
	}
	return errors.Join(errs...)
}

// reserve counts n more bytes against MaxCacheBytes, or fails.
func (c *Cache) reserve(n int64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.used+n > c.opts.MaxCacheBytes {
		return fmt.Errorf("the repository cache holds %d bytes and this download needs %d more, past its bound of %d (%s)",
			c.used, n, c.opts.MaxCacheBytes, c.opts.Settings.MaxCacheBytes)
	}
	c.used += n
	c.metrics.cacheBytes.Set(float64(c.used))
	return nil
}

// adjust changes the bytes counted by n (negative: released).
func (c *Cache) adjust(n int64) {
	c.mu.Lock()
	c.used += n
	c.metrics.cacheBytes.Set(float64(c.used))
	c.mu.Unlock()
}

// Used returns the bytes the copies and the downloads in progress count
// against MaxCacheBytes.
func (c *Cache) Used() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.used
}
