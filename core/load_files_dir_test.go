package core_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/coretest"
	"github.com/tritonhost/tritonhost/core/scheduling"
)

// TestLoadFilesGoUnderTheServersOwnDirectory: under explicit control a
// server makes a directory of its own under LoadFiles.Directory, where the
// files of load requests go; at start it removes what servers that are
// gone left there, never a running server's; Stop removes its own.
func TestLoadFilesGoUnderTheServersOwnDirectory(t *testing.T) {
	t.Parallel()
	parent := filepath.Join(t.TempDir(), "uploads")
	// What a killed server left: its directory, and its lock file, which
	// no one holds.
	stale := filepath.Join(parent, "server-1-dead")
	if err := os.MkdirAll(filepath.Join(stale, "model-1", "1"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(stale+".lock", nil, 0o600); err != nil {
		t.Fatal(err)
	}
	opts := core.Options{Backends: coretest.NewProvider(), ExplicitModelControl: true, LoadFiles: core.LoadFilesLimits{Directory: parent}}
	first := coretest.Serve(t, opts)
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("%s, left by a server that is gone, is still there (%v)", stale, err)
	}
	upload := core.LoadOptions{Config: []byte(`{"backend":"go","input":[{"name":"INPUT0","data_type":"TYPE_INT32","dims":[-1]}],
		"output":[{"name":"OUTPUT0","data_type":"TYPE_INT32","dims":[-1]}]}`), Files: map[string][]byte{"1/weights.bin": []byte("w")}}
	if err := loadWith(t, first, "sent", upload); err != nil {
		t.Fatal(err)
	}
	m, err := first.Model("sent", 0)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(m.Path(), parent+string(filepath.Separator)+"server-") {
		t.Errorf("the files are in %s, not under a directory of the server's own in %s", m.Path(), parent)
	}
	// A second server over the same directory leaves the first's alone.
	second, err := core.NewServer(core.Options{Backends: coretest.NewProvider(), ExplicitModelControl: true, LoadFiles: core.LoadFilesLimits{Directory: parent},
		Schedulers: scheduling.New, ModelRepositories: []string{t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(filepath.Join(m.VersionPath(), "weights.bin")); err != nil || string(data) != "w" {
		t.Errorf("the first server's files after a second started: %q %v", data, err)
	}
	if err := second.Stop(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := first.UnloadModel(t.Context(), "sent"); err != nil {
		t.Fatal(err)
	}
	if err := first.Stop(t.Context()); err != nil {
		t.Fatal(err)
	}
	if left, _ := filepath.Glob(filepath.Join(parent, "*")); len(left) != 0 {
		t.Errorf("after both servers stopped: %v", left)
	}
}
