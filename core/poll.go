package core

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"sync"
	"time"
)

// Model control POLL (Options.PollModelControl): every model loads at
// start, and the repositories are scanned again at each Poll, which the
// server calls itself every Options.RepositoryPollInterval when it is set. A model whose
// directory appeared loads; one whose directory went away unloads (requests
// in flight finish first, new ones are refused); one whose directory
// changed (any file or directory under it: its configuration, a version
// added or removed, a model file) loads again beside the version serving,
// which keeps serving until the new one is ready and then unloads once its
// requests are done. A change that does not load leaves the version
// serving in place, its line in the repository index giving the reason.

// poller runs Server.Poll every interval (if positive) until Stop.
type poller struct {
	interval time.Duration
	mu       sync.Mutex // one poll at a time
	stop     chan struct{}
	done     chan struct{}
}

// startPolling makes the poller of a server under model control POLL, and
// starts polling when the server has a poll interval.
func (s *Server) startPolling() {
	p := &poller{interval: s.opts.RepositoryPollInterval, stop: make(chan struct{}), done: make(chan struct{})}
	s.poll = p
	if p.interval <= 0 {
		close(p.done)
		return
	}
	go func() {
		defer close(p.done)
		t := time.NewTicker(p.interval)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-t.C:
				if err := s.Poll(); err != nil && !s.stopping.Load() {
					s.log.Errorf("poll of the model repositories: %v", err)
				}
			}
		}
	}()
}

// stopPolling ends the poller and waits for a poll in progress, until ctx
// ends.
func (s *Server) stopPolling(ctx context.Context) {
	if s.poll == nil {
		return
	}
	close(s.poll.stop)
	select {
	case <-s.poll.done:
	case <-ctx.Done():
	}
}

// Poll scans the repositories once and loads, reloads and unloads models
// as they changed since they were loaded (see the package comment above
// startPolling). The poller calls it every RepositoryPollInterval; a call
// of its own (TRITONSERVER_ServerPollModelRepository, a test) polls at
// once. It fails with CodeUnavailable without PollModelControl (Triton's
// "polling is disabled") or once Stop began, and
// with the error of a repository that cannot be read; a model that fails
// to load does not fail the poll: it is in the index with its reason.
func (s *Server) Poll() error {
	if s.poll == nil {
		return Errorf(CodeUnavailable, "polling is disabled")
	}
	s.poll.mu.Lock()
	defer s.poll.mu.Unlock()
	if s.stopping.Load() {
		return errShuttingDown()
	}
	remoteErrs := s.refreshRemote(nil) // remote_repository.go
	dirs, dupes, err := s.scanRepositories()
	if err != nil {
		return Errorf(CodeInternal, "poll the model repositories: %w", err)
	}
	for name := range dupes {
		delete(dirs, name) // a model in two repositories stays as it is
	}
	for name := range remoteErrs {
		delete(dirs, name) // so does one whose copy could not be refreshed
	}
	added, changed, removed := s.repositoryChanges(dirs)
	removed = slices.DeleteFunc(removed, func(n string) bool { return remoteErrs[n] != nil })
	s.keepFailedRemote(remoteErrs)
	for _, name := range removed {
		s.pollUnload(name)
	}
	load := append(added, changed...)
	sort.Strings(load)
	if len(load) > 0 {
		s.pollLoad(load, dirs)
		for _, name := range changed {
			s.reloadDependents(name, dirs, map[string]bool{name: true})
		}
	}
	return nil
}

// repositoryChanges compares the repositories with what is loaded.
func (s *Server) repositoryChanges(dirs map[string]string) (added, changed, removed []string) {
	s.mu.RLock()
	entries := make(map[string]*modelEntry, len(s.models))
	for n, e := range s.models {
		entries[n] = e
	}
	s.mu.RUnlock()
	for name, dir := range dirs {
		e := entries[name]
		switch {
		case e == nil:
			added = append(added, name)
		case e.filesDir != "":
			// Loaded from a load request's files: not the repository's.
		case e.dir != dir || e.stamp != dirStamp(dir):
			changed = append(changed, name)
		}
	}
	for name, e := range entries {
		if _, ok := dirs[name]; !ok && e.filesDir == "" {
			removed = append(removed, name)
		}
	}
	sort.Strings(removed)
	return added, changed, removed
}

// pollLoad loads names in dependency order; a model that has versions
// serving keeps them if its new load has none.
func (s *Server) pollLoad(names []string, dirs map[string]string) {
	for _, name := range s.withSteps(names, dirs) {
		if !containsName(names, name) {
			continue
		}
		unlock, _ := s.lockModel(context.Background(), name)
		if !s.stopping.Load() {
			s.reloadKeepingServing(&modelEntry{name: name, dir: dirs[name]})
		}
		unlock()
	}
}

func containsName(names []string, n string) bool {
	for _, m := range names {
		if m == n {
			return true
		}
	}
	return false
}

// reloadKeepingServing loads e beside what serves the model now. If e
// loads no version while the model has versions serving, those stay, and
// their lines in the index give the failure as their reason; otherwise e
// replaces them (loadEntry), the old versions finishing their requests
// before they unload. The caller holds the model's lock.
func (s *Server) reloadKeepingServing(e *modelEntry) {
	s.mu.RLock()
	old := s.models[e.name]
	s.mu.RUnlock()
	if old == nil || len(old.versions) == 0 {
		_ = s.loadEntry(e)
		return
	}
	e.stamp = dirStamp(e.dir)
	e.versions = map[int64]*Model{}
	err := s.loadVersions(e)
	if len(e.versions) > 0 {
		s.install(e, old)
		return
	}
	if err == nil {
		err = errors.New("no version loaded")
	}
	s.log.Errorf("failed to load model %q: %v; the versions loaded before keep serving", e.name, err)
	s.mu.Lock()
	if s.models[e.name] == old {
		old.stamp = e.stamp // tried: wait for the next change
		if retryLoad(err) {
			old.stamp = "" // or try again at the next poll
		}
		old.status = keptStatus(old, err)
	}
	s.mu.Unlock()
}

// install puts e in place of old and retires old (loadEntry's second
// half, for a load done already).
func (s *Server) install(e, old *modelEntry) {
	s.mu.Lock()
	if s.stopping.Load() {
		s.models[e.name] = &modelEntry{name: e.name, dir: e.dir}
		s.mu.Unlock()
		s.retire(context.Background(), e)
		s.retire(context.Background(), old)
		return
	}
	s.models[e.name] = e
	s.mu.Unlock()
	s.retire(context.Background(), old)
}

// keptStatus is the index of a model whose reload failed: the versions
// still serving, ready, with the failure as their reason.
func keptStatus(old *modelEntry, err error) []VersionStatus {
	reason := fmt.Sprintf("the model's new files failed to load; the version loaded before keeps serving: %v", err)
	var out []VersionStatus
	for v := range old.versions {
		out = append(out, VersionStatus{Name: old.name, Version: strconv.FormatInt(v, 10), Readiness: ModelReady, Reason: reason})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	return out
}

// pollUnload unloads a model whose directory is gone, and the ensembles
// that run it.
func (s *Server) pollUnload(name string) {
	unlock, _ := s.lockModel(context.Background(), name)
	defer unlock()
	if s.stopping.Load() {
		return
	}
	s.mu.Lock()
	e := s.models[name]
	delete(s.models, name)
	s.mu.Unlock()
	if e == nil {
		return
	}
	s.log.Infof("model %q is no longer in the model repositories: unloading it", name)
	ctx := context.Background()
	errs := append(s.retire(ctx, e), s.orphanDependents(ctx, name, nil)...)
	for _, err := range errs {
		s.log.Errorf("unload model %q: %v", name, err)
	}
}

// dirStamp sums up the names, sizes, modes and modification times of
// everything under dir, so that a change to any of them shows; "" when dir
// cannot be read.
func dirStamp(dir string) string {
	h := fnv.New64a()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		fmt.Fprintf(h, "%s\x00%d\x00%d\x00%d\n", rel, info.Size(), info.Mode(), info.ModTime().UnixNano())
		return nil
	})
	if err != nil {
		return ""
	}
	return strconv.FormatUint(h.Sum64(), 16)
}

// successor returns the version that replaced m in a reload (the same
// version number, ready), or nil: a request that looked m up just before
// the reload switched goes there rather than to a version unloading.
func (s *Server) successor(m *Model) *Model {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if e := s.models[m.name]; e != nil {
		if n := e.versions[m.version]; n != nil && n != m && n.Readiness() == ModelReady {
			return n
		}
	}
	return nil
}
