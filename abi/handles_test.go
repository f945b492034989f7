package abi_test

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// TestStaleAndForeignHandlesAreRefused runs a backend that uses handles
// after freeing them and 10,000 more, and pointers that never were handles:
// every such call must be refused with INVALID_ARG, never read memory.
func TestStaleAndForeignHandlesAreRefused(t *testing.T) {
	t.Parallel()
	repo := testenv.Repository(t, testenv.Model{
		Name:   "stale",
		Config: testBackendConfig("stale", "stale_handles", true),
		Files:  []string{fixture(t, "stale_handles", "stale_handles.c")},
	})
	srv := startServer(t, repo)
	events := infer(t, srv, &core.Submission{Model: "stale", Inputs: []core.Input{
		core.NewInput("IN", core.TypeInt32, []int64{1}, int32s(1))}})
	if len(events) != 1 || events[0].resp == nil || events[0].resp.Err != nil {
		t.Fatalf("events %+v, want one response with the results", events)
	}
	got := map[string]string{}
	for _, p := range events[0].resp.Parameters {
		got[p.Name] = p.String
	}
	want := map[string]string{"foreign.live_request": "OK"}
	for _, check := range []string{
		"stale_factory.delete", "stale_factory.response_new", "stale_factory.send_flags",
		"stale_response.send", "stale_response.delete", "stale_statistics.delete",
		"stale_request.id", "stale_request.release",
		"foreign.stack", "foreign.heap", "foreign.null", "foreign.other_kind",
	} {
		want[check] = "INVALID_ARG"
	}
	if !maps.Equal(got, want) {
		for _, k := range slices.Sorted(maps.Keys(want)) {
			if got[k] != want[k] {
				t.Errorf("%s: %q, want %q", k, got[k], want[k])
			}
		}
		t.Errorf("results %v", got)
	}
}

// TestTwoServersInOneProcessKeepTheirObjectsApart runs two servers with
// the same backends side by side: each host counts, logs and meters only
// its own backends' work.
func TestTwoServersInOneProcessKeepTheirObjectsApart(t *testing.T) {
	t.Parallel()
	repoA := exampleRepo(t, "repeat_int32")
	repoB := exampleRepo(t, "square_int32", "identity_int32")
	a := startServer(t, repoA)
	b := startServer(t, repoB)
	if a.host == b.host {
		t.Fatal("the servers share a host")
	}
	for range 3 {
		events := infer(t, a, &core.Submission{Model: "repeat_int32", Inputs: []core.Input{
			core.NewInput("IN", core.TypeInt32, []int64{2}, int32s(7, 8)),
			core.NewInput("DELAY", core.TypeUint32, []int64{2}, uint32s(0, 0)),
			core.NewInput("WAIT", core.TypeUint32, []int64{1}, uint32s(0)),
		}})
		if len(events) != 3 {
			t.Fatalf("repeat: %d events, want 2 responses and a final", len(events))
		}
		events = infer(t, b, &core.Submission{Model: "square_int32", Inputs: []core.Input{
			core.NewInput("IN", core.TypeInt32, []int64{1}, int32s(2))}})
		if len(events) != 3 {
			t.Fatalf("square: %d events, want 2 responses and a final", len(events))
		}
	}
	if _, err := a.Model("square_int32", 0); err == nil {
		t.Error("server a serves b's model")
	}
	for _, srv := range []*testServer{a, b} {
		if live := srv.host.Live(); live.GoModels == 0 || live.HostMessages == 0 {
			t.Errorf("host counts %v, want its models and their messages", live)
		}
	}
	// The backends' own log lines (ModelInitialize logs the model's name)
	// reach their server's log only.
	for _, tc := range []struct {
		srv        *testServer
		has, lacks string
	}{{a, "repeat_int32", "square_int32"}, {b, "square_int32", "repeat_int32"}} {
		log := tc.srv.log.String()
		if !strings.Contains(log, "TRITONBACKEND_ModelInitialize: "+tc.has) || strings.Contains(log, tc.lacks) {
			t.Errorf("log of the server of %s: want its backend's lines and none of %s:\n%s", tc.has, tc.lacks, log)
		}
	}
	if got := a.host.Live().GoModels; got != 1 {
		t.Errorf("server a's host has %d models, want 1", got)
	}
	if got := b.host.Live().GoModels; got != 2 {
		t.Errorf("server b's host has %d models, want 2", got)
	}
}
