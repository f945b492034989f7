package core_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/coretest"
)

// taggedConfig is a vector model whose responses carry tag: its single
// OUTPUT0 value (see answerTag), so that a test tells apart models of the
// same name in different repositories.
func taggedConfig(tag int) string {
	return coretest.VectorConfig(`parameters { key: "tag" value: { string_value: "` + strconv.Itoa(tag) + `" } }`)
}

// answerTag answers a request of a taggedConfig model with its tag.
func answerTag() coretest.Behaviour {
	return coretest.Answering(coretest.Reply(func(r *core.Request) *core.Response {
		tag, _ := strconv.Atoi(r.Model().Config().GetParameters()["tag"].GetStringValue())
		return &core.Response{Outputs: []core.Output{{Name: "OUTPUT0", DataType: core.TypeInt32, Shape: []int64{1},
			Data: coretest.Int32Input("x", []int64{1}, int32(tag)).Buffers[0]}}}
	}))
}

// twoRepositories serves repository a (models "m", tag 1, and "only_a",
// tag 3) and repository b (models "m", tag 2, and "only_b", tag 4) with
// opts, and returns the server and the two repositories' paths.
func twoRepositories(t *testing.T, opts core.Options) (srv *core.Server, a, b string) {
	t.Helper()
	p := coretest.NewProvider().Set("m", answerTag()).Set("only_a", answerTag()).Set("only_b", answerTag())
	a = coretest.WriteRepository(t, coretest.ModelDir{Name: "m", Config: taggedConfig(1)}, coretest.ModelDir{Name: "only_a", Config: taggedConfig(3)})
	opts.Backends = p
	opts.ModelRepositories = []string{a}
	srv = coretest.Serve(t, opts, // it adds repository b, which it writes, after a
		coretest.ModelDir{Name: "m", Config: taggedConfig(2)}, coretest.ModelDir{Name: "only_b", Config: taggedConfig(4)})
	return srv, a, srv.Repositories()[1]
}

// tagOf runs a request of model name and returns the tag that answered.
func tagOf(t *testing.T, srv *core.Server, name string) int32 {
	t.Helper()
	resp := coretest.Infer(t, srv, coretest.Request(name, "1", coretest.Int32Input("INPUT0", []int64{1}, 0))).Single(t)
	if resp.Err != nil {
		t.Fatalf("model %q: %v", name, resp.Err)
	}
	o, ok := coretest.OutputOf(resp, "OUTPUT0")
	if !ok {
		t.Fatalf("model %q: no OUTPUT0", name)
	}
	return coretest.Int32s(o.Data)[0]
}

const ambiguousM = "There are 2 identifiers of model 'm' in global map, model namespace must be provided to resolve ambiguity."

func TestNamespacingResolvesNames(t *testing.T) {
	srv, a, b := twoRepositories(t, core.Options{ModelNamespacing: true})
	if !srv.Ready() {
		t.Fatalf("not ready: %+v", srv.RepositoryIndex())
	}
	for _, tc := range []struct {
		name    string
		tag     int32
		code    core.Code
		wantErr string
	}{
		{name: "only_a", tag: 3},
		{name: "only_b", tag: 4},
		{name: "m", code: core.CodeInvalidArg, wantErr: ambiguousM},
		{name: "none", code: core.CodeInvalidArg, wantErr: "Request for unknown model: 'none' is not found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.wantErr == "" {
				if got := tagOf(t, srv, tc.name); got != tc.tag {
					t.Errorf("answered by tag %d, want %d", got, tc.tag)
				}
				if _, err := srv.Statistics(tc.name, 0); err != nil {
					t.Errorf("Statistics: %v", err)
				}
				return
			}
			_, err := srv.Model(tc.name, 0)
			wantExactError(t, "Model", err, tc.code, tc.wantErr)
			err = srv.Infer(context.Background(), coretest.Request(tc.name, "1", coretest.Int32Input("INPUT0", []int64{1}, 0)), coretest.NewCollector().Receive)
			wantExactError(t, "Infer", err, tc.code, tc.wantErr)
			_, err = srv.Statistics(tc.name, 0)
			wantExactError(t, "Statistics", err, tc.code, tc.wantErr)
			if v := srv.Versions(tc.name); v != nil {
				t.Errorf("Versions = %v, want none", v)
			}
		})
	}
	// Each repository's "m" is reachable by its namespace.
	for ns, tag := range map[string]int32{a: 1, b: 2} {
		m, err := srv.ModelIn(ns, "m", 0)
		if err != nil {
			t.Fatalf("ModelIn(%s, m): %v", ns, err)
		}
		if got := m.Config().GetParameters()["tag"].GetStringValue(); got != strconv.Itoa(int(tag)) {
			t.Errorf("ModelIn(%s, m) is the model tagged %s, want %d", ns, got, tag)
		}
		if m.Name() != "m" {
			t.Errorf("ModelIn(%s, m).Name() = %q, want m", ns, m.Name())
		}
	}
}

// indexLines renders the repository index as "name version readiness" lines.
func indexLines(srv *core.Server) []string {
	var out []string
	for _, st := range srv.RepositoryIndex() {
		out = append(out, st.Name+" "+st.Version+" "+st.Readiness.String())
	}
	return out
}

func TestNamespacingIndexAndDuplicates(t *testing.T) {
	for _, tc := range []struct {
		name        string
		namespacing bool
		ready       bool
		index       []string
		stats       int // statistics of every model
	}{
		{name: "namespacing", namespacing: true, ready: true,
			index: []string{"m 1 READY", "m 1 READY", "only_a 1 READY", "only_b 1 READY"}, stats: 4},
		{name: "no namespacing", namespacing: false, ready: false,
			index: []string{"m  UNAVAILABLE", "only_a 1 READY", "only_b 1 READY"}, stats: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, _, _ := twoRepositories(t, core.Options{ModelNamespacing: tc.namespacing})
			if srv.Ready() != tc.ready {
				t.Errorf("Ready() = %v, want %v", srv.Ready(), tc.ready)
			}
			if got := indexLines(srv); strings.Join(got, "\n") != strings.Join(tc.index, "\n") {
				t.Errorf("index:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.index, "\n"))
			}
			stats, err := srv.Statistics("", 0)
			if err != nil || len(stats) != tc.stats {
				t.Errorf("Statistics(\"\") = %d entries, %v; want %d", len(stats), err, tc.stats)
			}
			if !tc.namespacing {
				_, err := srv.Model("m", 0)
				if core.CodeOf(err) != core.CodeNotFound || !strings.Contains(err.Error(), "is in two repositories") {
					t.Errorf("Model(m) = %v (%v), want a NOT_FOUND naming the two repositories", err, core.CodeOf(err))
				}
			}
		})
	}
}

func TestNamespacingLoadUnloadByName(t *testing.T) {
	srv, a, b := twoRepositories(t, core.Options{ModelNamespacing: true, ExplicitModelControl: true})
	_, err := srv.Model("m", 0)
	wantExactError(t, "Model before the load", err, core.CodeInvalidArg, "Request for unknown model: 'm' is not found")

	if err := srv.LoadModel("m"); err != nil {
		t.Fatalf("LoadModel(m): %v", err)
	}
	for _, ns := range []string{a, b} {
		if _, err := srv.ModelIn(ns, "m", 0); err != nil {
			t.Errorf("after LoadModel(m), the model of %s: %v", ns, err)
		}
	}
	_, err = srv.Model("m", 0)
	wantExactError(t, "Model after the load", err, core.CodeInvalidArg, ambiguousM)

	if err := srv.UnloadModel(context.Background(), "m"); err != nil {
		t.Fatalf("UnloadModel(m): %v", err)
	}
	for _, ns := range []string{a, b} {
		if _, err := srv.ModelIn(ns, "m", 0); err == nil {
			t.Errorf("after UnloadModel(m), the model of %s is still loaded", ns)
		}
	}
	_, err = srv.Model("m", 0)
	wantExactError(t, "Model after the unload", err, core.CodeInvalidArg, "Request for unknown model: 'm' is not found")

	if err := srv.LoadModel("only_b"); err != nil {
		t.Fatalf("LoadModel(only_b): %v", err)
	}
	if got := tagOf(t, srv, "only_b"); got != 4 {
		t.Errorf("only_b answered with tag %d, want 4", got)
	}
	err = srv.LoadModel("none")
	if core.CodeOf(err) != core.CodeInternal || !strings.HasPrefix(err.Error(), "failed to load 'none', failed to poll from model repository") {
		t.Errorf("LoadModel(none) = %v, want Triton's poll failure", err)
	}
}

func TestNamespacingPoll(t *testing.T) {
	p := coretest.NewProvider().Set("m", answerTag())
	a := coretest.WriteRepository(t, coretest.ModelDir{Name: "m", Config: taggedConfig(1)})
	srv := coretest.Serve(t, core.Options{Backends: p, ModelRepositories: []string{a}, PollModelControl: true,
		RepositoryPollInterval: time.Hour, ModelNamespacing: true})
	b := srv.Repositories()[1]
	for _, step := range []struct {
		what   string
		change func()
		tag    int32 // 0: the name is ambiguous
	}{
		{what: "at start, m is a's", change: func() {}, tag: 1},
		{what: "with m in b too, m is ambiguous", change: func() { coretest.WriteModel(t, b, coretest.ModelDir{Name: "m", Config: taggedConfig(2)}) }},
		{what: "with m gone from a, m is b's", change: func() {
			if err := os.RemoveAll(filepath.Join(a, "m")); err != nil {
				t.Fatal(err)
			}
		}, tag: 2},
	} {
		step.change()
		if err := srv.Poll(); err != nil {
			t.Fatalf("%s: Poll: %v", step.what, err)
		}
		if step.tag == 0 {
			_, err := srv.Model("m", 0)
			wantExactError(t, step.what, err, core.CodeInvalidArg, ambiguousM)
			continue
		}
		if got := tagOf(t, srv, "m"); got != step.tag {
			t.Errorf("%s: answered by tag %d, want %d", step.what, got, step.tag)
		}
	}
}
