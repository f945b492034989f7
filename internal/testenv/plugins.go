package testenv

import (
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

var (
	pluginsOnce sync.Once
	pluginsErr  error
)

// PluginDirs builds the project's response cache and repository agent
// with `make plugins` (once per test binary, under the lock BackendDir's
// build holds) and returns the cache and agent directories, laid out as
// <caches>/local/libtritoncache_local.so and
// <repoagents>/checksum/libtritonrepoagent_checksum.so.
func PluginDirs(t testing.TB) (caches, repoagents string) {
	t.Helper()
	root := RepoRoot(t)
	pluginsOnce.Do(func() { _, pluginsErr = makeLocked(root, "plugins") })
	if pluginsErr != nil {
		t.Fatalf("testenv: building the plugins failed: %v", pluginsErr)
	}
	return filepath.Join(root, "caches"), filepath.Join(root, "repoagents")
}

// CopyTree copies the directory tree src into dst (created), files and
// directories only.
func CopyTree(t testing.TB, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		t.Fatalf("testenv: copy %s to %s: %v", src, dst, err)
	}
}
