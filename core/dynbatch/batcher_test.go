package dynbatch_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/coretest"
)

const batchingConfig = `name: "m"
backend: "go"
max_batch_size: 4
input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ 1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ 1 ] } ]
instance_group [ { count: 1 kind: KIND_CPU } ]
`

// rows returns a request of model "m" with a batch of n rows.
func rows(id string, n int) *core.Submission {
	return coretest.Request("m", id, coretest.Int32Input("INPUT0", []int64{int64(n), 1}))
}

// gatedServer serves model "m" with config; the first request keeps the
// only instance busy until the gate opens (coretest.StartGated).
func gatedServer(t *testing.T, config string) (*core.Server, *coretest.Provider, *coretest.Gate) {
	t.Helper()
	return coretest.StartGated(t, "m", config)
}

func TestDynamicBatcherRules(t *testing.T) {
	tests := []struct {
		name    string
		batcher string
		queued  []int // batch sizes of the requests queued while the instance is busy
		want    [][]string
	}{
		{"no delay: everything queued goes, up to max_batch_size", "dynamic_batching { }",
			[]int{1, 1, 1, 1, 1, 1}, [][]string{{"q0", "q1", "q2", "q3"}, {"q4", "q5"}}},
		{"a full batch goes at once despite the delay", "dynamic_batching { max_queue_delay_microseconds: 5000000 }",
			[]int{2, 2}, [][]string{{"q0", "q1"}}},
		{"the longest run ending on a preferred size goes at once", "dynamic_batching { preferred_batch_size: [ 2 ] max_queue_delay_microseconds: 5000000 }",
			[]int{1, 1, 1, 1}, [][]string{{"q0", "q1"}, {"q2", "q3"}}},
		{"batch sizes of requests add up", "dynamic_batching { preferred_batch_size: [ 3 ] max_queue_delay_microseconds: 5000000 }",
			[]int{2, 1, 3}, [][]string{{"q0", "q1"}, {"q2"}}},
		{"what does not reach a preferred size waits for the delay", "dynamic_batching { preferred_batch_size: [ 4 ] max_queue_delay_microseconds: 100000 }",
			[]int{1, 1, 1}, [][]string{{"q0", "q1", "q2"}}},
		{"without dynamic batching one request per execution", "",
			[]int{1, 1}, [][]string{{"q0"}, {"q1"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv, p, gate := gatedServer(t, batchingConfig+tc.batcher)
			busy := coretest.Infer(t, srv, rows("busy", 4)) // a full batch: it starts at once
			p.Reached(t, "busy")                            // the instance now waits at the gate
			var queued []*coretest.Collector
			for i, n := range tc.queued {
				queued = append(queued, coretest.Infer(t, srv, rows(fmt.Sprintf("q%d", i), n)))
			}
			gate.Open()
			coretest.Succeeded(t, append(queued, busy)...)
			got := p.Batches("m")[1:]
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("batches %v, want %v", got, tc.want)
			}
		})
	}
}

func TestIncompatibleShapesDoNotShareABatch(t *testing.T) {
	t.Parallel()
	srv, p, gate := gatedServer(t, `name: "m"
backend: "go"
max_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ -1 ] } ]
instance_group [ { count: 1 kind: KIND_CPU } ]
dynamic_batching { }
`)
	busy := coretest.Infer(t, srv, rows("busy", 1))
	p.Reached(t, "busy")
	var queued []*coretest.Collector
	for i, width := range []int64{2, 2, 3, 2} {
		req := coretest.Request("m", fmt.Sprintf("w%d", i), coretest.Int32Input("INPUT0", []int64{1, width}))
		queued = append(queued, coretest.Infer(t, srv, req))
	}
	gate.Open()
	coretest.Succeeded(t, append(queued, busy)...)
	if got := fmt.Sprint(p.Batches("m")[1:]); got != "[[w0 w1] [w2] [w3]]" {
		t.Errorf("batches %s: a request of another shape must end the batch", got)
	}
}

func TestQueuedRequestTimesOut(t *testing.T) {
	t.Parallel()
	srv, p, gate := gatedServer(t, batchingConfig)
	busy := coretest.Infer(t, srv, rows("busy", 4))
	p.Reached(t, "busy")
	late := rows("late", 1)
	late.Timeout = time.Millisecond
	reply := coretest.Infer(t, srv, late)
	time.Sleep(10 * time.Millisecond) // the timeout passes while the request is queued
	gate.Open()
	coretest.Succeeded(t, busy)
	if err := reply.Err(t); core.CodeOf(err) != core.CodeUnavailable {
		t.Fatalf("timed-out request: %v, want an UNAVAILABLE error", err)
	}
	if n := len(p.Executions("m")); n != 1 {
		t.Errorf("the timed-out request was executed (%d executions)", n)
	}
}

func TestFullQueueRefusesRequests(t *testing.T) {
	t.Parallel()
	srv, p, gate := gatedServer(t, batchingConfig+`dynamic_batching { default_queue_policy { max_queue_size: 1 } }`)
	busy := coretest.Infer(t, srv, rows("busy", 4))
	p.Reached(t, "busy")
	queued := coretest.Infer(t, srv, rows("queued", 1))
	extra := coretest.NewCollector()
	if err := srv.Infer(t.Context(), rows("extra", 1), extra.Receive); core.CodeOf(err) != core.CodeUnavailable {
		t.Errorf("third request: %v, want UNAVAILABLE (queue full)", err)
	}
	gate.Open()
	coretest.Succeeded(t, busy, queued)
	if got := extra.Snapshot(); len(got.Responses) > 0 || extra.Finished() {
		t.Error("a refused request got a response")
	}
}

const priorityConfig = `name: "m"
backend: "go"
max_batch_size: 1
input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ 1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ 1 ] } ]
instance_group [ { count: 1 kind: KIND_CPU } ]
`

// queuedRequest is one request sent while the only instance is busy.
type queuedRequest struct {
	id       string
	priority uint64
	timeout  time.Duration
}

// TestPriorityLevelsAndQueuePolicies: requests queued behind a busy
// instance run by priority level (1 first, 0 or past the levels meaning
// the default level), and each level's queue policy times them out as
// Triton's does: REJECT fails them with "Request timeout expired" unrun,
// DELAY sets them behind the level's others; a request's own timeout
// counts only under allow_timeout_override, and only when shorter.
func TestPriorityLevelsAndQueuePolicies(t *testing.T) {
	tests := []struct {
		name     string
		batcher  string
		queued   []queuedRequest
		wait     bool // let the queued requests' timeouts pass before the instance frees
		want     string
		rejected []string
	}{
		{"a high priority overtakes the queue", "dynamic_batching { priority_levels: 2 default_priority_level: 2 }",
			[]queuedRequest{{"low0", 0, 0}, {"low1", 2, 0}, {"high", 1, 0}, {"past", 9, 0}},
			false, "[[high] [low0] [low1] [past]]", nil},
		{"levels in order, arrival order within one", "dynamic_batching { priority_levels: 3 default_priority_level: 3 }",
			[]queuedRequest{{"c0", 3, 0}, {"b0", 2, 0}, {"a0", 1, 0}, {"b1", 2, 0}, {"a1", 1, 0}},
			false, "[[a0] [a1] [b0] [b1] [c0]]", nil},
		{"REJECT fails what waited past the timeout", "dynamic_batching { default_queue_policy { timeout_action: REJECT default_timeout_microseconds: 100000 } }",
			[]queuedRequest{{"q0", 0, 0}, {"q1", 0, 0}},
			true, "[]", []string{"q0", "q1"}},
		{"DELAY sets late requests behind the others", `dynamic_batching { default_queue_policy { timeout_action: DELAY default_timeout_microseconds: 60000000 allow_timeout_override: true } }`,
			[]queuedRequest{{"short", 0, 100 * time.Millisecond}, {"long", 0, 0}},
			true, "[[long] [short]]", nil},
		{"a request's own timeout needs allow_timeout_override", "dynamic_batching { default_queue_policy { default_timeout_microseconds: 60000000 } }",
			[]queuedRequest{{"own", 0, 100 * time.Millisecond}},
			true, "[[own]]", nil},
		{"an own timeout longer than the policy's does not count", "dynamic_batching { default_queue_policy { default_timeout_microseconds: 100000 allow_timeout_override: true } }",
			[]queuedRequest{{"longer", 0, time.Hour}},
			true, "[]", []string{"longer"}},
		{"each level its policy", `dynamic_batching { priority_levels: 2 default_priority_level: 2
  priority_queue_policy { key: 2 value: { default_timeout_microseconds: 100000 } } }`,
			[]queuedRequest{{"kept", 1, 0}, {"dropped", 2, 0}},
			true, "[[kept]]", []string{"dropped"}},
	}
	// The timeouts are 100 ms, not less: the request that keeps the
	// instance busy waits under the same policy, and on a loaded machine
	// (the race detector, two cores) it may be queued for some
	// milliseconds before it runs.
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv, p, gate := gatedServer(t, priorityConfig+tc.batcher)
			busy := coretest.Infer(t, srv, rows("busy", 1))
			p.Reached(t, "busy")
			replies := map[string]*coretest.Collector{}
			for _, q := range tc.queued {
				req := rows(q.id, 1)
				req.Priority, req.Timeout = q.priority, q.timeout
				replies[q.id] = coretest.Infer(t, srv, req)
			}
			if tc.wait {
				time.Sleep(300 * time.Millisecond) // the timeouts pass while the requests wait
			}
			gate.Open()
			coretest.Succeeded(t, busy)
			for _, id := range tc.rejected {
				err := replies[id].Err(t)
				if core.CodeOf(err) != core.CodeUnavailable || err.Error() != "Request timeout expired" {
					t.Errorf("%s: %v, want UNAVAILABLE \"Request timeout expired\"", id, err)
				}
				delete(replies, id)
			}
			for _, c := range replies {
				coretest.Succeeded(t, c)
			}
			if got := fmt.Sprint(p.Batches("m")[1:]); got != tc.want {
				t.Errorf("batches %s, want %s", got, tc.want)
			}
		})
	}
}

// TestQueueSizeIsBoundedPerLevel: a level's max_queue_size refuses its
// requests past it with Triton's text, and leaves other levels alone.
func TestQueueSizeIsBoundedPerLevel(t *testing.T) {
	t.Parallel()
	srv, p, gate := gatedServer(t, priorityConfig+`dynamic_batching { priority_levels: 2 default_priority_level: 2
  priority_queue_policy { key: 1 value: { max_queue_size: 1 } } }`)
	busy := coretest.Infer(t, srv, rows("busy", 1))
	p.Reached(t, "busy")
	first := rows("first", 1)
	first.Priority = 1
	accepted := []*coretest.Collector{busy, coretest.Infer(t, srv, first)}
	over := rows("over", 1)
	over.Priority = 1
	err := srv.Infer(t.Context(), over, coretest.NewCollector().Receive)
	if core.CodeOf(err) != core.CodeUnavailable || err.Error() != "[request id: over] Exceeds maximum queue size" {
		t.Errorf("a second request at level 1: %v, want UNAVAILABLE \"[request id: over] Exceeds maximum queue size\"", err)
	}
	for i := range 3 {
		accepted = append(accepted, coretest.Infer(t, srv, rows(fmt.Sprint("low", i), 1)))
	}
	gate.Open()
	coretest.Succeeded(t, accepted...)
}

// TestDelaySchedulerHookHoldsUntilTheQueueFills: with Triton's test hook
// TRITONSERVER_DELAY_SCHEDULER=3 nothing runs until three requests are
// queued, which then go together in one batch; later requests are not held.
func TestDelaySchedulerHookHoldsUntilTheQueueFills(t *testing.T) {
	t.Setenv("TRITONSERVER_DELAY_SCHEDULER", "3")
	p := coretest.NewProvider()
	srv := coretest.Serve(t, core.Options{Backends: p}, coretest.ModelDir{Name: "m", Config: batchingConfig + "dynamic_batching { }"})
	var first []*coretest.Collector
	for i := range 2 {
		first = append(first, coretest.Infer(t, srv, rows(fmt.Sprint("q", i), 1)))
	}
	for _, c := range first {
		select {
		case <-c.Done():
			t.Fatal("a request ran before the queue held three")
		case <-time.After(50 * time.Millisecond): // a window for a wrong execution to show
		}
	}
	first = append(first, coretest.Infer(t, srv, rows("q2", 1)))
	coretest.Succeeded(t, first...)
	coretest.Succeeded(t, coretest.Infer(t, srv, rows("later", 1)))
	if got := fmt.Sprint(p.Batches("m")); got != "[[q0 q1 q2] [later]]" {
		t.Errorf("batches %s, want the three held requests together, then the later one alone", got)
	}
}
