package core_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/coretest"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// TestInstancesRunConcurrentlyOneExecutionEach: three active instances
// execute three requests at once, never two on one instance, and the
// passive instance is created but gets nothing.
func TestInstancesRunConcurrentlyOneExecutionEach(t *testing.T) {
	t.Parallel()
	p := coretest.NewProvider()
	srv := coretest.Start(t, p, coretest.ModelDir{Name: "m", Config: vectorConfig() + `
instance_group [ { name: "active" count: 3 kind: KIND_CPU }, { name: "standby" count: 1 kind: KIND_CPU passive: true } ]`})
	gate := coretest.NewGate(t)
	p.Set("m", coretest.Gated(gate, coretest.Echo()))
	first := []*coretest.Collector{
		coretest.Infer(t, srv, vector("r0", 0)), coretest.Infer(t, srv, vector("r1", 1)), coretest.Infer(t, srv, vector("r2", 2)),
	}
	p.Reached(t, "r0", "r1", "r2") // all three wait at the gate at once
	var used []string
	for _, e := range p.Executions("m") {
		used = append(used, e.Instance)
	}
	slices.Sort(used)
	if want := []string{"active_0", "active_1", "active_2"}; !slices.Equal(used, want) {
		t.Errorf("the three waiting executions ran on %v, want %v", used, want)
	}
	gate.Open()
	coretest.Succeeded(t, first...)

	p.Set("m", coretest.Delayed(time.Millisecond, coretest.Echo()))
	var more []*coretest.Collector
	for i := range 30 {
		more = append(more, coretest.Infer(t, srv, vector(fmt.Sprintf("m%d", i), int32(i))))
	}
	coretest.Succeeded(t, more...)
	if o := p.Overlaps(); len(o) > 0 {
		t.Errorf("instances %v ran two executions at once", o)
	}
	for _, e := range p.Executions("m") {
		if strings.HasPrefix(e.Instance, "standby") {
			t.Errorf("passive instance %s executed %v", e.Instance, e.IDs)
		}
	}
	if !slices.Contains(p.Events(), "instance m/standby_0") {
		t.Errorf("the passive instance was not created: %v", p.Events())
	}
}

// queuedBehindBusy serves model "m" with its only instance kept busy by
// request "busy" at a gate, and q0, q1 queued behind it.
func queuedBehindBusy(t *testing.T) (srv *core.Server, p *coretest.Provider, gate *coretest.Gate, busy *coretest.Collector, queued []*coretest.Collector) {
	t.Helper()
	srv, p, gate = coretest.StartGated(t, "m", batchingConfig)
	busy = coretest.Infer(t, srv, rows("busy", 4))
	p.Reached(t, "busy")
	queued = []*coretest.Collector{coretest.Infer(t, srv, rows("q0", 1)), coretest.Infer(t, srv, rows("q1", 1))}
	return srv, p, gate, busy, queued
}

// TestStopDrainsInFlightWork: Stop refuses new requests at once, lets the
// running and the queued ones finish, then finalizes the instances, the
// model and the backends, in that order.
func TestStopDrainsInFlightWork(t *testing.T) {
	t.Parallel()
	srv, p, gate, busy, queued := queuedBehindBusy(t)
	stopped := make(chan error, 1)
	go func() { stopped <- srv.Stop(context.Background()) }()
	testenv.WaitUntil(t, "Stop to begin", func() bool { return !srv.Live() })
	coretest.WantError(t, "Infer during Stop", srv.Infer(t.Context(), rows("late", 1), coretest.NewCollector().Receive), core.CodeUnavailable, "shutting down")
	select {
	case err := <-stopped:
		t.Fatalf("Stop returned (%v) while a request was running", err)
	default:
	}
	gate.Open()
	coretest.Succeeded(t, append(queued, busy)...)
	if err := <-stopped; err != nil {
		t.Errorf("Stop: %v", err)
	}
	events := p.Events()
	if want := []string{"finalize instance m/m_0_0", "finalize model m", "close"}; !slices.Equal(events[len(events)-3:], want) {
		t.Errorf("events %v, want them to end with %v", events, want)
	}
}

// TestStopGivesUpOnRunningExecutionsWhenItsContextEnds: when Stop's
// context has ended, Stop returns at once with an error naming the model
// and the instance still executing, and leaves the backends open; queued
// requests fail with UNAVAILABLE without running. The running execution
// completes later, and only then are the instance and the model finalized.
func TestStopGivesUpOnRunningExecutionsWhenItsContextEnds(t *testing.T) {
	t.Parallel()
	srv, p, gate, busy, queued := queuedBehindBusy(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	coretest.WantError(t, "Stop", srv.Stop(ctx), core.CodeUnavailable, "stop gave up", "context canceled", "left the backends open",
		"still in flight", `model "m" version 1 (backend "go"): unload not finished`, `running execution(s) of instance(s) "m_0_0"`)
	for i, c := range queued {
		coretest.WantError(t, fmt.Sprintf("q%d", i), c.Err(t), core.CodeUnavailable, fmt.Sprintf(`request "q%d"`, i), "unloaded before")
		if p.Executed(fmt.Sprintf("q%d", i)) {
			t.Errorf("q%d ran", i)
		}
	}
	if slices.Contains(p.Events(), "finalize instance m/m_0_0") {
		t.Error("the instance was finalized while it executed")
	}
	gate.Open()
	coretest.Succeeded(t, busy)
	p.WaitEvent(t, "finalize model m")
	events := p.Events()
	if want := []string{"finalize instance m/m_0_0", "finalize model m"}; !slices.Equal(events[len(events)-2:], want) {
		t.Errorf("events %v, want them to end with %v (and no close)", events, want)
	}
	testenv.WaitUntil(t, "no request to be live", func() bool { return srv.LiveRequests() == 0 })
}

// TestExplicitModelControl: only LoadModel loads, UnloadModel unloads (its
// instances and model are finalized), a reload replaces the running
// version, and both refuse unknown models and servers without explicit
// control.
func TestExplicitModelControl(t *testing.T) {
	t.Parallel()
	p := coretest.NewProvider()
	srv := coretest.Serve(t, core.Options{Backends: p, ExplicitModelControl: true}, coretest.ModelDir{Name: "m", Config: vectorConfig()})
	infer := func() error {
		c := coretest.NewCollector()
		if err := srv.Infer(t.Context(), vector("r", 1), c.Receive); err != nil {
			return err
		}
		return c.Err(t)
	}
	step := func(what string, err error, code core.Code, events ...string) {
		t.Helper()
		if code == core.CodeUnknown && err != nil || code != core.CodeUnknown && core.CodeOf(err) != code {
			t.Errorf("%s: %v, want code %v (Unknown: success)", what, err, code)
		}
		if got := p.Events(); !slices.Equal(got, events) {
			t.Errorf("%s: events %v, want %v", what, got, events)
		}
	}
	load := func() (err error) {
		coretest.Track(t, func() { err = srv.LoadModel("m") })
		return err
	}
	loaded := []string{"load m", "instance m/m_0"}
	unloaded := []string{"finalize instance m/m_0", "finalize model m"}
	wantExactError(t, "infer before any load", infer(), core.CodeNotFound, "Request for unknown model: 'm' is not found")
	step("infer before any load", nil, core.CodeUnknown)
	if st := srv.RepositoryIndex(); len(st) != 1 || st[0].Readiness != core.ModelUnavailable {
		t.Errorf("index before load: %+v", st)
	}
	step("load", load(), core.CodeUnknown, loaded...)
	step("infer after load", infer(), core.CodeUnknown, loaded...)
	step("reload", load(), core.CodeUnknown, slices.Concat(loaded, loaded, unloaded)...)
	step("unload", srv.UnloadModel(t.Context(), "m"), core.CodeUnknown, slices.Concat(loaded, loaded, unloaded, unloaded)...)
	coretest.WantError(t, "infer after unload", infer(), core.CodeNotFound, "Request for unknown model: 'm' has no available versions")
	if st := srv.RepositoryIndex(); len(st) != 1 || st[0].Readiness != core.ModelUnavailable || st[0].Version != "1" || st[0].Reason != "unloaded" {
		t.Errorf("index after unload: %+v, want version 1 UNAVAILABLE, unloaded", st)
	}
	coretest.WantError(t, "load an unknown model", srv.LoadModel("nope"), core.CodeInternal, "failed to load 'nope', failed to poll from model repository")
	step("load an unknown model", nil, core.CodeUnknown, slices.Concat(loaded, loaded, unloaded, unloaded)...)
	step("unload an unknown model", srv.UnloadModel(t.Context(), "nope"), core.CodeNotFound, slices.Concat(loaded, loaded, unloaded, unloaded)...)

	fixed, _ := serveModel(t, vectorConfig(), coretest.Echo())
	coretest.WantError(t, "LoadModel without explicit control", fixed.LoadModel("m"), core.CodeUnavailable, "explicit model load / unload is not allowed if polling is enabled", "explicit model control")
	coretest.WantError(t, "UnloadModel without explicit control", fixed.UnloadModel(t.Context(), "m"), core.CodeUnavailable, "explicit model load / unload is not allowed if polling is enabled", "explicit model control")
}

// TestFailedModelLoadLeavesOthersServing: when a model's backend refuses it,
// or one of its instances fails to initialize, what was created is
// finalized, the model is unavailable with the reason, and the other model
// serves.
func TestFailedModelLoadLeavesOthersServing(t *testing.T) {
	broken := errors.New("no such device")
	for _, tc := range []struct {
		name   string
		setup  func(p *coretest.Provider)
		events []string
		reason string
	}{
		{"an instance fails", func(p *coretest.Provider) { p.FailInstance("bad", "bad_0_1", broken) },
			[]string{"load bad", "instance bad/bad_0_0", "instance bad/bad_0_1 failed", "finalize instance bad/bad_0_0", "finalize model bad"},
			`instance "bad_0_1": no such device`},
		{"the backend refuses the model", func(p *coretest.Provider) { p.FailLoad("bad", broken) },
			[]string{"load bad failed"}, "no such device"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := coretest.NewProvider()
			tc.setup(p)
			srv := coretest.Serve(t, core.Options{Backends: p},
				coretest.ModelDir{Name: "bad", Config: vectorConfig(`instance_group [ { count: 3 kind: KIND_CPU } ]`)},
				coretest.ModelDir{Name: "m", Config: vectorConfig()})
			if srv.Ready() {
				t.Error("the server is ready with a model that failed to load")
			}
			var events []string
			for _, e := range p.Events() {
				if strings.Contains(e, "bad") {
					events = append(events, e)
				}
			}
			if !slices.Equal(events, tc.events) {
				t.Errorf("events %v, want %v", events, tc.events)
			}
			for _, st := range srv.RepositoryIndex() {
				if st.Name == "bad" && (st.Readiness != core.ModelUnavailable || !strings.Contains(st.Reason, tc.reason)) {
					t.Errorf("index entry %+v, want UNAVAILABLE because %s", st, tc.reason)
				}
			}
			coretest.WantError(t, "Infer on the failed model", srv.Infer(t.Context(), coretest.Request("bad", "x"), coretest.NewCollector().Receive),
				core.CodeNotFound, "Request for unknown model: 'bad' has no available versions", tc.reason)
			coretest.Succeeded(t, coretest.Infer(t, srv, vector("r", 1)))
		})
	}
}
