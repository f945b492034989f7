package coretest

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/tritonhost/tritonhost/core"
)

// ModelDir is one model of a test repository.
type ModelDir struct {
	Name   string
	Config string // config.pbtxt; its name field may be left out
	// Versions are the version directories to create (default: 1).
	Versions []int64
	// Files are extra files, by path relative to the model directory.
	Files map[string][]byte
	// Symlinks are symbolic links to create, by path relative to the model
	// directory, each to its target as written (relative to the link's
	// directory, or absolute).
	Symlinks map[string]string
}

// VectorConfig is the configuration of a model on the Go backend from
// INPUT0 to OUTPUT0, INT32 vectors of any length (named after its
// directory), plus extra lines.
func VectorConfig(extra string) string {
	return `backend: "go"
input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ -1 ] } ]
` + extra
}

// Decoupled is the configuration line of a decoupled model.
const Decoupled = "model_transaction_policy { decoupled: true }"

// WriteRepository writes models as a Triton model repository in a new
// directory under t.TempDir and returns its path.
func WriteRepository(t testing.TB, models ...ModelDir) string {
	t.Helper()
	repo := t.TempDir()
	for _, m := range models {
		WriteModel(t, repo, m)
	}
	return repo
}

func mkdir(t testing.TB, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

// WriteModel writes one model directory into repository repo (a model
// added to a repository a server already serves, for a poll or a load to
// find).
func WriteModel(t testing.TB, repo string, m ModelDir) {
	t.Helper()
	dir := filepath.Join(repo, m.Name)
	files := map[string][]byte{core.ConfigFileName: []byte(m.Config)}
	for name, data := range m.Files {
		files[name] = data
	}
	versions := m.Versions
	if len(versions) == 0 {
		versions = []int64{1}
	}
	for _, v := range versions {
		mkdir(t, filepath.Join(dir, strconv.FormatInt(v, 10)))
	}
	for name, data := range files {
		path := filepath.Join(dir, name)
		mkdir(t, filepath.Dir(path))
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, target := range m.Symlinks {
		path := filepath.Join(dir, name)
		mkdir(t, filepath.Dir(path))
		if err := os.Symlink(target, path); err != nil {
			t.Fatal(err)
		}
	}
}
