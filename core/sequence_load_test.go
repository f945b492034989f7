package core_test

import (
	"strings"
	"testing"

	"tritonhost/core"
	"tritonhost/core/coretest"
)

func TestSequenceModelWithMissingInitialStateFileDoesNotLoad(t *testing.T) {
	cfg := accConfig(0, `state [ { input_name: "STATE_IN" output_name: "STATE_OUT" data_type: TYPE_INT32 dims: [ 1 ]
  initial_state: { data_type: TYPE_INT32 dims: [ 1 ] data_file: "missing" name: "from file" } } ]`, "")
	srv := coretest.Serve(t, core.Options{Backends: newAccBackend()}, coretest.ModelDir{Name: "acc", Config: cfg})
	if srv.Ready() {
		t.Fatal("a sequence model whose initial_state file is missing loaded")
	}
	st := srv.RepositoryIndex()
	if len(st) != 1 || st[0].Readiness != core.ModelUnavailable || !strings.Contains(st[0].Reason, "missing") || !strings.Contains(st[0].Reason, `"acc"`) {
		t.Errorf("repository index %+v: want the model unavailable, naming it and the missing file", st)
	}
}
