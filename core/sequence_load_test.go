package core_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tritonhost/core"
)

func TestSequenceModelWithMissingInitialStateFileDoesNotLoad(t *testing.T) {
	cfg := accConfig(0, `state [ { input_name: "STATE_IN" output_name: "STATE_OUT" data_type: TYPE_INT32 dims: [ 1 ]
  initial_state: { data_type: TYPE_INT32 dims: [ 1 ] data_file: "missing" name: "from file" } } ]`, "")
	repo := t.TempDir()
	dir := filepath.Join(repo, "acc")
	if err := os.MkdirAll(filepath.Join(dir, "1"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, core.ConfigFileName), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	srv, err := core.NewServer(core.Options{ModelRepositories: []string{repo}, Backends: &accBackend{}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop(context.Background())
	if srv.Ready() {
		t.Fatal("a sequence model whose initial_state file is missing loaded")
	}
	st := srv.RepositoryIndex()
	if len(st) != 1 || st[0].Readiness != core.ModelUnavailable || !strings.Contains(st[0].Reason, "missing") || !strings.Contains(st[0].Reason, `"acc"`) {
		t.Errorf("repository index %+v: want the model unavailable, naming it and the missing file", st)
	}
}
