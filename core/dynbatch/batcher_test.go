package dynbatch_test

import (
	"fmt"
	"testing"
	"time"

	"tritonhost/core"
	"tritonhost/core/coretest"
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
