package core_test

import (
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/coretest"
	"github.com/tritonhost/tritonhost/core/scheduling"
)

// TestNewServerRequiresBackendsAndSchedulers: a server is refused without
// a backend provider or a scheduler factory, with an error naming the
// option.
func TestNewServerRequiresBackendsAndSchedulers(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts core.Options
		want string
	}{
		{"no backends", core.Options{Schedulers: scheduling.New}, "Options.Backends is required"},
		{"no schedulers", core.Options{Backends: coretest.NewProvider()}, "Options.Schedulers is required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, err := core.NewServer(tc.opts)
			if err == nil {
				_ = srv.Stop(t.Context())
				t.Fatal("NewServer accepted the options")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not say %q", err, tc.want)
			}
		})
	}
}

// TestSchedulersMakeEveryVersionsScheduler: Options.Schedulers makes the
// scheduler of every version as it loads, an ensemble's too, and an error
// it returns fails that version's load with it while the others serve.
func TestSchedulersMakeEveryVersionsScheduler(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var asked []string
	factory := func(srv *core.Server, m *core.Model) (core.Scheduler, error) {
		mu.Lock()
		asked = append(asked, m.Name())
		mu.Unlock()
		if m.Name() == "refused" {
			return nil, core.Errorf(core.CodeInvalidArg, "model %q: no scheduler for it", m.Name())
		}
		return scheduling.New(srv, m)
	}
	pipe := `platform: "ensemble"
max_batch_size: 0
input [ { name: "IN" data_type: TYPE_INT32 dims: [ -1 ] } ]
output [ { name: "OUT" data_type: TYPE_INT32 dims: [ -1 ] } ]
ensemble_scheduling { step [ { model_name: "m" model_version: -1 input_map { key: "INPUT0" value: "IN" } output_map { key: "OUTPUT0" value: "OUT" } } ] }
`
	srv := coretest.Serve(t, core.Options{Backends: coretest.NewProvider(), Schedulers: factory},
		coretest.ModelDir{Name: "m", Config: vectorConfig()}, coretest.ModelDir{Name: "refused", Config: vectorConfig()},
		coretest.ModelDir{Name: "pipe", Config: pipe})
	mu.Lock()
	got := slices.Sorted(slices.Values(asked))
	mu.Unlock()
	if want := []string{"m", "pipe", "refused"}; !slices.Equal(got, want) {
		t.Errorf("the factory was asked for %v, want %v", got, want)
	}
	for _, st := range srv.RepositoryIndex() {
		switch {
		case st.Name == "refused" && (st.Readiness != core.ModelUnavailable || !strings.Contains(st.Reason, "no scheduler for it")):
			t.Errorf("refused: %s %q, want UNAVAILABLE with the factory's error", st.Readiness, st.Reason)
		case st.Name != "refused" && st.Readiness != core.ModelReady:
			t.Errorf("%s: %s %q, want READY", st.Name, st.Readiness, st.Reason)
		}
	}
	req := coretest.Request("pipe", "r", coretest.Int32Input("IN", []int64{2}, 4, 5))
	if resp := coretest.Infer(t, srv, req).Single(t); resp.Err != nil {
		t.Fatalf("ensemble over m: %v", resp.Err)
	}
}
