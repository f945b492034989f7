package repocache

import (
	"bytes"
	"context"
	"crypto/md5"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/tritonhost/tritonhost/internal/objstore"
)

// errChanged is the download of a model whose listing changed under it.
var errChanged = errors.New("it changed while it was downloaded (an upload in progress?); it is tried again at the next refresh")

// errVerify marks an object whose content does not match its listing.
var errVerify = errors.New("content does not match the listing")

// download makes a new copy of model m from its listing want, reusing
// the objects of cur (its copy in place, or nil) that did not change, and
// swaps it into place. It returns what the new copy holds.
func (r *repo) download(ctx context.Context, m string, want map[string]objstore.Object, cur *modelCopy) (*modelCopy, error) {
	o := r.c.opts
	var total, need int64
	reuse := map[string]bool{}
	for rel, obj := range want {
		total += obj.Size
		if cur != nil {
			if p, ok := cur.objects[rel]; ok && p.Size == obj.Size && p.Tag == obj.Tag {
				reuse[rel] = true
				continue
			}
		}
		need += obj.Size
	}
	if total > o.MaxModelBytes {
		r.c.metrics.failed(r.loc.URL)
		return nil, fmt.Errorf("the model is %d bytes, more than the %d bytes a model may download (%s)", total, o.MaxModelBytes, o.Settings.MaxModelBytes)
	}
	select {
	case r.c.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-r.c.sem }()
	if err := r.c.reserve(need); err != nil {
		r.c.metrics.failed(r.loc.URL)
		return nil, err
	}
	start := time.Now()
	r.c.log.Infof("downloading model %q from %s: %d objects, %d bytes to fetch", m, r.loc, len(want)-len(reuse), need)
	next, err := r.fetchModel(ctx, m, want, reuse)
	if err != nil {
		r.c.adjust(-need)
		r.c.metrics.failed(r.loc.URL)
		r.c.metrics.took(r.loc.URL, "failure", time.Since(start))
		return nil, err
	}
	old := int64(0)
	if cur != nil {
		old = cur.bytes
	}
	r.c.adjust(total - old - need)
	r.c.metrics.took(r.loc.URL, "success", time.Since(start))
	r.c.log.Infof("downloaded model %q from %s in %s: %d bytes fetched, %d objects kept from its copy",
		m, r.loc, time.Since(start).Round(time.Millisecond), need, len(reuse))
	return next, nil
}

// fetchModel builds the new copy in a staging directory, checks it and
// swaps it into place.
func (r *repo) fetchModel(ctx context.Context, m string, want map[string]objstore.Object, reuse map[string]bool) (*modelCopy, error) {
	o := r.c.opts
	timeout := fmt.Errorf("the download took longer than %s (%s)", o.DownloadTimeout, o.Settings.DownloadTimeout)
	dctx, cancel := context.WithTimeoutCause(ctx, o.DownloadTimeout, timeout)
	defer cancel()
	stage, err := os.MkdirTemp(r.staging, m+"-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(stage) // the new copy once swapped out, else the old one
	live := filepath.Join(r.models, m)
	rels := make([]string, 0, len(want))
	var total int64
	for rel, obj := range want {
		rels = append(rels, rel)
		total += obj.Size
	}
	sort.Strings(rels)
	for _, rel := range rels {
		obj := want[rel]
		dst := filepath.Join(stage, filepath.FromSlash(rel))
		if rel == "" || strings.HasSuffix(rel, "/") { // a folder marker
			if err := os.MkdirAll(dst, 0o755); err != nil {
				return nil, err
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return nil, fmt.Errorf("object %q: %w", obj.Key, err)
		}
		if reuse[rel] {
			err = linkOrCopy(filepath.Join(live, filepath.FromSlash(rel)), dst)
		} else {
			err = r.fetch(dctx, obj, dst)
		}
		if errors.Is(err, errVerify) && r.changed(dctx, m, want) {
			return nil, errChanged
		}
		if err != nil {
			if cause := context.Cause(dctx); cause != nil && ctx.Err() == nil {
				return nil, fmt.Errorf("object %q: %w", obj.Key, cause)
			}
			return nil, err
		}
	}
	if r.changed(dctx, m, want) {
		return nil, errChanged
	}
	if err := install(stage, live); err != nil {
		return nil, fmt.Errorf("put the new copy in place: %w", err)
	}
	return &modelCopy{objects: want, bytes: total}, nil
}

// changed lists the model again and reports whether the listing differs
// from want (or could not be made).
func (r *repo) changed(ctx context.Context, m string, want map[string]objstore.Object) bool {
	prefix := r.loc.Prefix + m + "/"
	objs, err := r.list(ctx, prefix)
	if err != nil {
		return true
	}
	return !sameObjects(want, listing(r.byModel(objs)[m], prefix))
}

// fetch downloads one object to dst and checks it against its listing:
// its size, and its MD5 where the listing gives one. A download that
// receives nothing for StallTimeout is given up.
func (r *repo) fetch(ctx context.Context, obj objstore.Object, dst string) error {
	o := r.c.opts
	stalled := fmt.Errorf("object %q sent no data for %s (%s)", obj.Key, o.StallTimeout, o.Settings.StallTimeout)
	sctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	watchdog := time.AfterFunc(o.StallTimeout, func() { cancel(stalled) })
	defer watchdog.Stop()
	fail := func(err error) error {
		if cause := context.Cause(sctx); cause == stalled {
			return cause
		}
		return fmt.Errorf("object %q: %w", obj.Key, err)
	}
	b, err := r.client(sctx)
	if err != nil {
		return fail(err)
	}
	body, err := b.Open(sctx, obj.Key)
	if err != nil {
		return fail(err)
	}
	defer body.Close()
	f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("object %q: %w", obj.Key, err)
	}
	sum := md5.New()
	in := &progress{r: io.LimitReader(body, obj.Size+1), watchdog: watchdog, every: o.StallTimeout,
		count: func(n int) { r.c.metrics.fetched(r.loc.URL, n) }}
	n, err := io.Copy(io.MultiWriter(f, sum), in)
	if cerr := f.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return fail(err)
	}
	if n != obj.Size {
		return fmt.Errorf("object %q: %w: %d bytes received, the listing says %d", obj.Key, errVerify, n, obj.Size)
	}
	if obj.MD5 != nil && !bytes.Equal(sum.Sum(nil), obj.MD5) {
		return fmt.Errorf("object %q: %w: its MD5 is %x, the listing says %x", obj.Key, errVerify, sum.Sum(nil), obj.MD5)
	}
	return nil
}

// progress counts what a download receives and puts its stall watchdog
// off while data comes.
type progress struct {
	r        io.Reader
	watchdog *time.Timer
	every    time.Duration
	count    func(int)
}

func (p *progress) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	if n > 0 {
		p.watchdog.Reset(p.every)
		p.count(n)
	}
	return n, err
}

// linkOrCopy puts at dst the file at src, unchanged in the bucket: a hard
// link (the copies' files are never written once made), else a copy.
func linkOrCopy(src, dst string) error {
	if err := os.Link(src, dst); err == nil {
		return nil
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// install puts the directory stage at live in one step: exchanged with
// the copy there (which is then at stage), or renamed when there is none.
func install(stage, live string) error {
	if _, err := os.Lstat(live); errors.Is(err, os.ErrNotExist) {
		return os.Rename(stage, live)
	}
	if err := exchange(stage, live); err == nil {
		return nil
	}
	// No atomic exchange here: move the old copy aside, then the new one
	// in (a scan in between misses the model for that moment).
	aside := stage + ".old"
	if err := os.Rename(live, aside); err != nil {
		return err
	}
	if err := os.Rename(stage, live); err != nil {
		_ = os.Rename(aside, live)
		return err
	}
	return os.Rename(aside, stage)
}
