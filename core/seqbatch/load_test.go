package seqbatch_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/coretest"
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

// TestInitialStateFilesStayInsideTheModel: an initial_state data_file is
// read from <model>/initial_state/ only: a name that climbs out with "..",
// an absolute one, or a symbolic link (of the file or of the directory)
// that leads out of the model directory fails the load with an error
// naming the model and the file, even though the file it points to holds
// a valid state; links within the model directory are followed.
func TestInitialStateFilesStayInsideTheModel(t *testing.T) {
	t.Parallel()
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret")
	if err := os.WriteFile(secret, int32Bytes(7), 0o644); err != nil {
		t.Fatal(err)
	}
	hundred := map[string][]byte{"1/hundred": int32Bytes(100)}
	for _, tc := range []struct {
		name     string
		dataFile string
		files    map[string][]byte
		links    map[string]string
		parts    []string // what the load error mentions; nil: the model loads and starts at 100
	}{
		{name: "a file in initial_state", dataFile: "hundred", files: map[string][]byte{"initial_state/hundred": int32Bytes(100)}},
		{name: "a link within the model", dataFile: "hundred", files: hundred, links: map[string]string{"initial_state/hundred": "../1/hundred"}},
		{name: "a linked directory within the model", dataFile: "hundred", files: hundred, links: map[string]string{"initial_state": "1"}},
		{name: "dot-dot out of the repository", dataFile: "../../../../../../../../../.." + secret, parts: []string{"must be a relative path inside"}},
		{name: "dot-dot to the model's own files", dataFile: "../1/hundred", files: hundred, parts: []string{`"../1/hundred"`, "must be a relative path inside"}},
		{name: "an absolute path", dataFile: secret, parts: []string{"must be a relative path inside"}},
		{name: "a link out of the model", dataFile: "secret", links: map[string]string{"initial_state/secret": secret},
			parts: []string{"initial_state/secret resolves to " + secret, "outside the model directory"}},
		{name: "a linked directory out of the model", dataFile: "secret", links: map[string]string{"initial_state": outside},
			parts: []string{"resolves to " + secret, "outside the model directory"}},
		{name: "a link to a link out of the model", dataFile: "hop", links: map[string]string{"initial_state/hop": "../1/hop", "1/hop": secret},
			parts: []string{"resolves to " + secret, "outside the model directory"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := newAccBackend()
			cfg := accConfig(0, fmt.Sprintf(`state [ { input_name: "STATE_IN" output_name: "STATE_OUT" data_type: TYPE_INT32 dims: [ 1 ]
  initial_state: { data_type: TYPE_INT32 dims: [ 1 ] data_file: %q name: "from file" } } ]`, tc.dataFile), "")
			srv := coretest.Serve(t, core.Options{Backends: b}, coretest.ModelDir{Name: "acc", Config: cfg, Files: tc.files, Symlinks: tc.links},
				coretest.ModelDir{Name: "m", Config: coretest.VectorConfig("")})
			if tc.parts == nil {
				if got := outputOf(t, send(t, srv, 0, seqReq{id: "a", corr: uintID(1), flags: startEnd(true, true), value: 1}).Single(t)); got != 101 {
					t.Errorf("output %d, want 101 (the state starts at 100)", got)
				}
				return
			}
			for _, st := range srv.RepositoryIndex() {
				if st.Name != "acc" {
					continue
				}
				if st.Readiness != core.ModelUnavailable {
					t.Errorf("acc is %v, want UNAVAILABLE", st.Readiness)
				}
				for _, part := range append([]string{`model "acc"`, "data_file"}, tc.parts...) {
					if !strings.Contains(st.Reason, part) {
						t.Errorf("reason %q does not mention %q", st.Reason, part)
					}
				}
			}
			coretest.Succeeded(t, coretest.Infer(t, srv, coretest.Request("m", "r", coretest.Int32Input("INPUT0", []int64{1}, 1))))
		})
	}
}
