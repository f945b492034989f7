package repocache

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/tritonhost/tritonhost/internal/objstore"
)

// configFile is the object whose presence makes a model complete.
const configFile = "config.pbtxt"

// repo is one remote repository and its local copy.
type repo struct {
	c       *Cache
	loc     objstore.Location
	models  string // the local repository: one directory per model copied
	staging string // downloads in progress

	mu     sync.Mutex
	bucket objstore.Bucket       // nil until a client could be made
	copies map[string]*modelCopy // by model name: what its local copy holds
	locks  map[string]chan struct{}
	noted  map[string]string // model -> the listing last logged as incomplete or unsettled
	// seen is, by model, its listing at the last full refresh that found
	// it changed; listed is set once a full refresh has listed the
	// repository.
	seen   map[string]string
	listed bool
}

// modelCopy is what a model's local copy was made from.
type modelCopy struct {
	objects map[string]objstore.Object // by path relative to the model directory
	bytes   int64
}

func newRepo(c *Cache, loc objstore.Location, root string) *repo {
	return &repo{c: c, loc: loc, models: filepath.Join(root, "models"), staging: filepath.Join(root, "staging"),
		copies: map[string]*modelCopy{}, locks: map[string]chan struct{}{}, noted: map[string]string{}, seen: map[string]string{}}
}

// refresh brings the copies of names (all models when nil) in line with
// the bucket; see Cache.Refresh for the errors. With names nil, a model
// not complete yet or changing under its download is skipped quietly (it
// is still being uploaded); named, it is an error.
func (r *repo) refresh(ctx context.Context, names []string) map[string]error {
	errs := map[string]error{}
	listings := map[string][]objstore.Object{}
	settle := false
	if names == nil {
		objs, err := r.list(ctx, r.loc.Prefix)
		if err != nil {
			return map[string]error{"": fmt.Errorf("read model repository %s: %w", r.loc, err)}
		}
		listings = r.byModel(objs)
		r.mu.Lock()
		settle = r.listed
		r.listed = true
		for m := range r.copies {
			if _, ok := listings[m]; !ok {
				listings[m] = nil // gone from the bucket
			}
		}
		r.mu.Unlock()
	} else {
		for _, m := range names {
			if !validModelName(m) {
				continue
			}
			objs, err := r.list(ctx, r.loc.Prefix+m+"/")
			if err != nil {
				errs[m] = fmt.Errorf("read model %q of repository %s: %w", m, r.loc, err)
				continue
			}
			listings[m] = r.byModel(objs)[m]
		}
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for m, objs := range listings {
		wg.Go(func() {
			if err := r.refreshModel(ctx, m, objs, names != nil, settle); err != nil {
				mu.Lock()
				errs[m] = err
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return errs
}

// list lists prefix, bounded by listTimeout.
func (r *repo) list(ctx context.Context, prefix string) ([]objstore.Object, error) {
	ctx, cancel := context.WithTimeout(ctx, listTimeout)
	defer cancel()
	b, err := r.client(ctx)
	if err != nil {
		return nil, err
	}
	return b.List(ctx, prefix)
}

// client returns the repository's bucket client, made at the first call
// that succeeds.
func (r *repo) client(ctx context.Context) (objstore.Bucket, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.bucket != nil {
		return r.bucket, nil
	}
	b, err := r.c.opts.OpenBucket(ctx, r.loc)
	if err != nil {
		return nil, err
	}
	r.bucket = b
	return b, nil
}

// close releases the client.
func (r *repo) close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.bucket == nil {
		return nil
	}
	return r.bucket.Close()
}

// byModel groups a listing by model: the first path segment under the
// repository's prefix. Objects at the top level, under hidden names or
// with paths that would climb out of a model's directory are left out.
func (r *repo) byModel(objs []objstore.Object) map[string][]objstore.Object {
	out := map[string][]objstore.Object{}
	for _, o := range objs {
		rel, ok := strings.CutPrefix(o.Key, r.loc.Prefix)
		if !ok {
			continue
		}
		m, rest, ok := strings.Cut(rel, "/")
		if !ok || !validModelName(m) {
			continue
		}
		if rest != "" && !validRelPath(strings.TrimSuffix(rest, "/")) {
			r.c.log.Warnf("repository %s: object %q is left out: its path is not one a model directory can hold", r.loc, o.Key)
			continue
		}
		out[m] = append(out[m], o)
	}
	return out
}

func validModelName(m string) bool {
	return m != "" && !strings.HasPrefix(m, ".") && filepath.IsLocal(m) && !strings.ContainsAny(m, `/\`)
}

func validRelPath(p string) bool {
	if p == "" || strings.Contains(p, "//") || !filepath.IsLocal(p) {
		return false
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == "." || seg == ".." {
			return false
		}
	}
	return true
}

// lock takes the model's lock: one refresh of a model at a time.
func (r *repo) lock(ctx context.Context, m string) (func(), error) {
	r.mu.Lock()
	ch := r.locks[m]
	if ch == nil {
		ch = make(chan struct{}, 1)
		r.locks[m] = ch
	}
	r.mu.Unlock()
	select {
	case ch <- struct{}{}:
		return func() { <-ch }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// refreshModel brings one model's copy in line with its listing objs
// (nil: the model is gone from the bucket). With settle, a change is
// downloaded only once a full refresh finds the same listing as the one
// before it: an upload in progress across a poll is not taken half-way.
func (r *repo) refreshModel(ctx context.Context, m string, objs []objstore.Object, named, settle bool) error {
	unlock, err := r.lock(ctx, m)
	if err != nil {
		return fmt.Errorf("model %q of repository %s: %w", m, r.loc, err)
	}
	defer unlock()
	r.mu.Lock()
	cur := r.copies[m]
	r.mu.Unlock()
	if len(objs) == 0 {
		if cur != nil {
			r.remove(m, cur)
		}
		return nil
	}
	want := listing(objs, r.loc.Prefix+m+"/")
	if cur != nil && sameObjects(cur.objects, want) {
		return nil
	}
	if _, ok := want[configFile]; !ok {
		err := fmt.Errorf("model %q in %s is not complete: it has no %s yet (a model counts as uploaded once its %s is there: upload it last)",
			m, r.loc, configFile, configFile)
		return r.unsettled(m, want, named, err)
	}
	if settle && !r.settled(m, want) {
		r.c.log.Infof("model %q in %s changed: it is downloaded once its listing holds still until the next poll", m, r.loc)
		return nil
	}
	next, err := r.download(ctx, m, want, cur)
	if errors.Is(err, errChanged) {
		return r.unsettled(m, want, named, fmt.Errorf("model %q in %s: %w", m, r.loc, err))
	}
	if err != nil {
		err = fmt.Errorf("download model %q from %s: %w", m, r.loc, err)
		r.c.log.Errorf("%v; its copy stays as it was", err)
		return err
	}
	r.mu.Lock()
	r.copies[m] = next
	delete(r.noted, m)
	r.mu.Unlock()
	return nil
}

// unsettled handles a model that is not (yet) complete or changed while
// it downloaded: an error when the model was named, else a log line (once
// per listing) and no error, the model being still uploaded.
func (r *repo) unsettled(m string, want map[string]objstore.Object, named bool, err error) error {
	if named {
		return err
	}
	stamp := listingStamp(want)
	r.mu.Lock()
	seen := r.noted[m] == stamp
	r.noted[m] = stamp
	r.mu.Unlock()
	if !seen {
		r.c.log.Infof("%v; its copy stays as it is until it is", err)
	}
	return nil
}

// settled records want as the model's listing at this full refresh and
// reports whether the one before found the same.
func (r *repo) settled(m string, want map[string]objstore.Object) bool {
	stamp := listingStamp(want)
	r.mu.Lock()
	defer r.mu.Unlock()
	prev := r.seen[m]
	r.seen[m] = stamp
	return prev == stamp
}

// remove deletes the copy of a model gone from the bucket.
func (r *repo) remove(m string, cur *modelCopy) {
	dir := filepath.Join(r.models, m)
	if err := os.RemoveAll(dir); err != nil {
		r.c.log.Errorf("repository %s: remove the copy of model %q, gone from the bucket: %v", r.loc, m, err)
		return
	}
	r.mu.Lock()
	delete(r.copies, m)
	r.mu.Unlock()
	r.c.adjust(-cur.bytes)
	r.c.log.Infof("model %q is gone from %s: its local copy is removed", m, r.loc)
}

// listing maps a model's objects by their path in the model directory.
func listing(objs []objstore.Object, prefix string) map[string]objstore.Object {
	out := make(map[string]objstore.Object, len(objs))
	for _, o := range objs {
		out[strings.TrimPrefix(o.Key, prefix)] = o
	}
	return out
}

// sameObjects reports whether two listings saw the same content: the same
// paths, each with the same size and tag.
func sameObjects(a, b map[string]objstore.Object) bool {
	if len(a) != len(b) {
		return false
	}
	for k, o := range a {
		p, ok := b[k]
		if !ok || p.Size != o.Size || p.Tag != o.Tag {
			return false
		}
	}
	return true
}

// listingStamp sums a listing up as a string.
func listingStamp(objs map[string]objstore.Object) string {
	keys := make([]string, 0, len(objs))
	for k := range objs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s\x00%d\x00%s\n", k, objs[k].Size, objs[k].Tag)
	}
	return b.String()
}
