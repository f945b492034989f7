package abi_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/internal/testenv"
	"github.com/tritonhost/tritonhost/loader"
)

// The conformance backend (backends_c/conformance) calls every host function
// the ABI headers declare for backends, with good and bad arguments, and
// reports each call as a line "<function> <case> <result>" in its BYTES
// output CHECKS, where <result> is OK, NULL (a pointer-returning function
// returned NULL) or the name of the TRITONSERVER_Error_Code without its
// TRITONSERVER_ERROR_ prefix. What the calls handed back goes into VALUES as
// "<key>=<value>"; "error.<function>.<case>" holds each error's message.
// This file runs it; conformance_test.go holds the expectations.

// conformanceConfig is the model the backend expects (checks_model.c
// auto-completes it with one more output, AUTO_OUT).
const conformanceConfig = `
name: "conformance"
backend: "conformance"
max_batch_size: 0
model_transaction_policy { decoupled: true }
input [
  { name: "KIND" data_type: TYPE_STRING dims: [ 1 ] },
  { name: "DATA" data_type: TYPE_INT32 dims: [ -1 ] optional: true }
]
output [
  { name: "CHECKS" data_type: TYPE_STRING dims: [ -1 ] },
  { name: "VALUES" data_type: TYPE_STRING dims: [ -1 ] }
]
instance_group [ { name: "probe" kind: KIND_CPU count: 1 } ]
parameters [ { key: "probe_param" value: { string_value: "42" } } ]
`

// conformanceBackendConfig is passed as --backend-config settings.
var conformanceBackendConfig = map[string]map[string]string{
	"":            {"global-setting": "everyone"},
	"conformance": {"probe-setting": "on"},
}

// conformanceRun is what one run of every request kind reported.
type conformanceRun struct {
	srv    *testServer
	repo   string
	checks map[string]string // "<function> <case>" -> result
	values map[string]string
	dups   []string // "<function> <case>" reported more than once

	main, thread, reschedule, cancel, inprocess []event
}

// runConformance starts a server with the conformance model and sends it
// one request of each kind, in order: main, thread, reschedule, cancel, and
// collect, which returns what the backend checked after final responses.
func runConformance(t *testing.T) *conformanceRun {
	t.Helper()
	repo := testenv.Repository(t, testenv.Model{Name: "conformance", Config: conformanceConfig},
		testenv.Model{Name: "conformance_peer", Config: strings.Replace(conformanceConfig, `name: "conformance"`, `name: "conformance_peer"`, 1)})
	srv := startServer(t, repo, func(o *core.Options, l *loader.Options) {
		l.BackendConfig = conformanceBackendConfig
		// The instance's host policy, "cpu", has settings the backend
		// reads back (TRITONBACKEND_ModelInstanceHostPolicy).
		o.HostPolicies = map[string]core.HostPolicy{"cpu": {Settings: map[string]string{"probe-policy": "kept"}}}
	})
	run := &conformanceRun{srv: srv, repo: repo, checks: map[string]string{}, values: map[string]string{}}

	run.main = infer(t, srv, &core.Submission{
		Model:         "conformance",
		ID:            "main-1",
		CorrelationID: core.CorrelationID{Uint: 42},
		Flags:         core.RequestFlagSequenceStart | core.RequestFlagSequenceEnd,
		Timeout:       30 * time.Second,
		Inputs: []core.Input{
			kindInput("main"),
			{Name: "DATA", DataType: core.TypeInt32, Shape: []int64{6}, Buffers: [][]byte{int32s(1, 2), int32s(3), int32s(4, 5, -6)}},
		},
		Parameters: []core.Parameter{
			core.StringParam("s", "text"), core.IntParam("i", -5), core.BoolParam("b", true), core.DoubleParam("d", 1.5),
		},
	})
	run.thread = infer(t, srv, &core.Submission{Model: "conformance", ID: "thread-1",
		CorrelationID: core.CorrelationID{String: "seq-a", IsString: true}, Inputs: []core.Input{kindInput("thread")}})
	run.reschedule = infer(t, srv, &core.Submission{Model: "conformance", ID: "again-1", Inputs: []core.Input{kindInput("reschedule")}})
	run.cancel = inferAndCancel(t, srv, &core.Submission{Model: "conformance", ID: "cancel-1", Inputs: []core.Input{kindInput("cancel")}})
	// inprocess calls conformance_peer (kind peer) through the in-process API.
	run.inprocess = infer(t, srv, &core.Submission{Model: "conformance", ID: "inprocess-1", Inputs: []core.Input{kindInput("inprocess")}})
	collect := infer(t, srv, &core.Submission{Model: "conformance", ID: "collect-1", Inputs: []core.Input{kindInput("collect")}})

	for _, evs := range [][]event{run.main, run.thread, run.reschedule, run.inprocess, collect} {
		for _, ev := range evs {
			if ev.resp == nil || ev.resp.Err != nil {
				continue
			}
			run.add(t, ev.resp)
		}
	}
	return run
}

func kindInput(kind string) core.Input {
	return core.NewInput("KIND", core.TypeBytes, []int64{1}, core.EncodeBytes([]byte(kind)))
}

// inferAndCancel sends req and cancels it once its first (non-final)
// response arrived, then waits for the final one.
func inferAndCancel(t *testing.T, srv *testServer, req *core.Submission) []event {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := newCollector()
	var once sync.Once
	err := srv.Infer(ctx, req, func(resp *core.Response, final bool) {
		if resp != nil && !final {
			once.Do(cancel)
		}
		c.fn(resp, final)
	})
	if err != nil {
		t.Fatalf("Infer(%s): %v", req.ID, err)
	}
	return c.wait(t)
}

// add records the CHECKS and VALUES lines of one response.
func (run *conformanceRun) add(t *testing.T, resp *core.Response) {
	t.Helper()
	for _, out := range resp.Outputs {
		if out.Name != "CHECKS" && out.Name != "VALUES" {
			continue
		}
		elems, err := core.DecodeBytes(out.Data)
		if err != nil {
			t.Fatalf("response output %s: %v", out.Name, err)
		}
		for _, e := range elems {
			line := string(e)
			if out.Name == "VALUES" {
				k, v, _ := strings.Cut(line, "=")
				run.values[k] = v
				continue
			}
			i := strings.LastIndexByte(line, ' ')
			if i < 0 {
				t.Errorf("malformed check line %q", line)
				continue
			}
			key, result := line[:i], line[i+1:]
			if _, seen := run.checks[key]; seen {
				run.dups = append(run.dups, key)
			}
			run.checks[key] = result
		}
	}
}

// explain returns the error message the backend recorded for a check.
func (run *conformanceRun) explain(key string) string {
	fn, kase, _ := strings.Cut(key, " ")
	if msg, ok := run.values["error."+fn+"."+kase]; ok {
		return fmt.Sprintf(" (%s)", msg)
	}
	return ""
}

// dump lists everything the backend reported, for a test that fails.
func (run *conformanceRun) dump() string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(run.checks)) {
		fmt.Fprintf(&b, "%s %s\n", k, run.checks[k])
	}
	for _, k := range slices.Sorted(maps.Keys(run.values)) {
		fmt.Fprintf(&b, "%s=%s\n", k, run.values[k])
	}
	return b.String()
}
