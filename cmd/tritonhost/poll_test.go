package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tritonhost/tritonhost/client"
	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// indexLine returns a model version's line of the repository index.
func indexLine(t *testing.T, s *serverProcess, model, version string) *pb.RepositoryIndexResponse_ModelIndex {
	t.Helper()
	idx, err := s.Client.RepositoryIndex(ctxFor(t), &pb.RepositoryIndexRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range idx.GetModels() {
		if m.GetName() == model && m.GetVersion() == version {
			return m
		}
	}
	return nil
}

// configParameter returns a parameter of a model's configuration as the
// server has it.
func configParameter(t *testing.T, s *serverProcess, model, key string) string {
	t.Helper()
	resp, err := s.Client.ModelConfig(ctxFor(t), &pb.ModelConfigRequest{Name: model})
	if err != nil {
		return ""
	}
	return resp.GetConfig().GetParameters()[key].GetStringValue()
}

// TestPollModelControlFollowsTheRepository serves a repository under
// --model-control-mode=poll and rewrites it while a stream is open: a
// changed model loads beside the version serving, which finishes the
// request it is streaming while the stream's next request goes to the new
// one, none failing; a change the backend refuses leaves the version
// serving, with the reason in the index; a new model loads, a new version
// replaces the old, a removed model unloads.
func TestPollModelControlFollowsTheRepository(t *testing.T) {
	t.Parallel()
	repeatCfg := testenv.ExampleConfig(t, "repeat_int32")
	repo := testenv.Repository(t, testenv.Model{Name: "repeat_int32", Config: repeatCfg})
	cfgPath := filepath.Join(repo, "repeat_int32", "config.pbtxt")
	s := startServer(t, repo, "--model-control-mode=poll", "--repository-poll-secs=1")

	st, err := client.OpenStream(ctxFor(t), s.Client)
	if err != nil {
		t.Fatal(err)
	}
	long := client.Request{Model: "repeat_int32", ID: "long", Inputs: []client.Tensor{
		client.Int32s("IN", []int64{5}, 1, 2, 3, 4, 5),
		client.Uint32s("DELAY", []int64{5}, 0, 1000, 1000, 1000, 1000),
		client.Uint32s("WAIT", []int64{1}, 0),
	}}
	if err := st.Send(long); err != nil {
		t.Fatal(err)
	}
	var got []result
	first, err := st.Recv()
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, decode(t, first))

	// A changed configuration: loaded beside the version serving.
	writeFile(t, cfgPath, repeatCfg+`parameters [ { key: "generation" value: { string_value: "2" } } ]`+"\n")
	testenv.WaitUntil(t, "the changed configuration to serve", func() bool { return configParameter(t, s, "repeat_int32", "generation") == "2" })
	if err := st.Send(client.Request{Model: "repeat_int32", ID: "next", Inputs: []client.Tensor{
		client.Int32s("IN", []int64{1}, 9), client.Uint32s("DELAY", []int64{1}, 0), client.Uint32s("WAIT", []int64{1}, 0)}}); err != nil {
		t.Fatal(err)
	}
	st.CloseSend()
	got = append(got, collect(t, st)...)
	var longOut, nextOut []int64
	lastLong, nextAt := -1, -1
	for i, r := range got {
		if r.id == "long" {
			lastLong = i
		} else if nextAt < 0 {
			nextAt = i
		}
		if r.err != "" {
			t.Errorf("request %s failed across the reload: %s", r.id, r.err)
		}
		switch r.id {
		case "long":
			longOut = append(longOut, r.outs["OUT"]...)
		case "next":
			nextOut = append(nextOut, r.outs["OUT"]...)
		}
	}
	if fmt.Sprint(longOut) != "[1 2 3 4 5]" || fmt.Sprint(nextOut) != "[9]" {
		t.Errorf("responses: long %v, next %v; want every response of each", longOut, nextOut)
	}
	if nextAt > lastLong {
		t.Errorf("the request sent after the switch was answered after the long one ended: the two did not overlap")
	}
	testenv.WaitUntil(t, "the replaced version to unload", func() bool {
		return strings.Count(s.Log(), "successfully unloaded 'repeat_int32' version 1") == 1
	})

	// A change the backend refuses: the version serving stays.
	writeFile(t, cfgPath, strings.Replace(repeatCfg, "max_batch_size: 0", "max_batch_size: 4", 1))
	testenv.WaitUntil(t, "the failed reload in the index", func() bool {
		l := indexLine(t, s, "repeat_int32", "1")
		return l != nil && strings.Contains(l.GetReason(), "expected max_batch_size 0")
	})
	if l := indexLine(t, s, "repeat_int32", "1"); l.GetState() != "READY" {
		t.Errorf("index line after a refused change: %v, want READY", l)
	}
	rs, err := client.OpenStream(ctxFor(t), s.Client)
	if err != nil {
		t.Fatal(err)
	}
	if err := rs.Send(client.Request{Model: "repeat_int32", ID: "kept", Inputs: []client.Tensor{
		client.Int32s("IN", []int64{1}, 4), client.Uint32s("DELAY", []int64{1}, 0), client.Uint32s("WAIT", []int64{1}, 0)}}); err != nil {
		t.Fatal(err)
	}
	rs.CloseSend()
	if kept := collect(t, rs); len(kept) != 1 || kept[0].err != "" || configParameter(t, s, "repeat_int32", "generation") != "2" {
		t.Errorf("the version serving before the refused change: %+v", kept)
	}

	// A new model, then a new version of it, then its removal.
	idCfg := strings.Replace(testenv.ExampleConfig(t, "identity_int32"), `name: "identity_int32"`, `name: "added"`, 1)
	writeFile(t, filepath.Join(repo, "added", "1", ".keep"), "")
	writeFile(t, filepath.Join(repo, "added", "config.pbtxt"), idCfg)
	testenv.WaitUntil(t, "the new model to load", func() bool {
		l := indexLine(t, s, "added", "1")
		return l != nil && l.GetState() == "READY"
	})
	if status, _, body := s.httpCall(t, "POST", "/v2/models/added/infer", []byte(`{"inputs":[{"name":"INPUT0","datatype":"INT32","shape":[2],"data":[3,4]}]}`)); status != 200 {
		t.Errorf("infer on the new model: %d %s", status, body)
	}
	writeFile(t, filepath.Join(repo, "added", "2", ".keep"), "")
	testenv.WaitUntil(t, "version 2 to replace version 1", func() bool {
		l := indexLine(t, s, "added", "2")
		status, _, _ := s.httpCall(t, "GET", "/v2/models/added/versions/1/ready", nil)
		return l != nil && l.GetState() == "READY" && status != 200
	})
	if err := os.RemoveAll(filepath.Join(repo, "added")); err != nil {
		t.Fatal(err)
	}
	testenv.WaitUntil(t, "the removed model to unload", func() bool {
		status, _, _ := s.httpCall(t, "GET", "/v2/models/added", nil)
		return status == 404
	})
}
