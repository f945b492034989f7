package dynbatch_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/coretest"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// inline returns req marked to run on its submitter when it can.
func inline(req *core.Submission) *core.Submission {
	req.Inline = true
	return req
}

// inferAsync submits req from a goroutine of its own and returns its
// collector and a channel closed when Infer returned.
func inferAsync(t *testing.T, srv *core.Server, req *core.Submission) (*coretest.Collector, <-chan struct{}) {
	c := coretest.NewCollector()
	returned := make(chan struct{})
	go func() {
		defer close(returned)
		if err := srv.Infer(context.Background(), req, c.Receive); err != nil {
			t.Errorf("Infer %q: %v", req.ID, err)
		}
	}()
	return c, returned
}

func TestInlineRequestRunsOnItsSubmitterWhenAnInstanceIsIdle(t *testing.T) {
	t.Parallel()
	srv, p, gate := gatedServer(t, batchingConfig)
	reply, returned := inferAsync(t, srv, inline(rows("r", 1)))
	p.Reached(t, "r") // executing, held at the gate
	select {
	case <-returned:
		t.Fatal("Infer returned while its request was executing: it did not run on the submitter")
	default:
	}
	gate.Open()
	<-returned
	if !reply.Finished() {
		t.Error("Infer returned before the response of the request it executed was delivered")
	}
	coretest.Succeeded(t, reply)
}

func TestInlineRequestQueuesBehindABusyInstance(t *testing.T) {
	t.Parallel()
	srv, p, gate := gatedServer(t, batchingConfig)
	busy := coretest.Infer(t, srv, rows("busy", 4))
	p.Reached(t, "busy")
	reply, returned := inferAsync(t, srv, inline(rows("r", 1)))
	<-returned // queued: Infer does not wait for the busy instance
	if p.Executed("r") {
		t.Fatal("the request ran while the only instance was busy")
	}
	gate.Open()
	coretest.Succeeded(t, busy, reply)
	if got := fmt.Sprint(p.Batches("m")); got != "[[busy] [r]]" {
		t.Errorf("batches %s, want [[busy] [r]]", got)
	}
}

func TestInlineRequestWaitsForTheBatchingDelay(t *testing.T) {
	t.Parallel()
	p := coretest.NewProvider()
	srv := coretest.Start(t, p, coretest.ModelDir{Name: "m", Config: batchingConfig +
		`dynamic_batching { preferred_batch_size: [ 4 ] max_queue_delay_microseconds: 30000000 }`})
	p.Set("m", coretest.Echo())
	first, returned := inferAsync(t, srv, inline(rows("a", 1)))
	<-returned // queued, to wait for a fuller batch
	var rest []*coretest.Collector
	for _, id := range []string{"b", "c", "d"} {
		rest = append(rest, coretest.Infer(t, srv, inline(rows(id, 1))))
	}
	coretest.Succeeded(t, append(rest, first)...)
	if got := fmt.Sprint(p.Batches("m")); got != "[[a b c d]]" {
		t.Errorf("batches %s, want one of the four requests: an inline request must not skip the delay", got)
	}
}

func TestInlineRequestThatFillsABatchRunsAtOnce(t *testing.T) {
	t.Parallel()
	p := coretest.NewProvider()
	srv := coretest.Start(t, p, coretest.ModelDir{Name: "m", Config: batchingConfig +
		`dynamic_batching { max_queue_delay_microseconds: 30000000 }`})
	gate := coretest.NewGate(t)
	p.Set("m", coretest.Gated(gate, coretest.Echo()))
	reply, returned := inferAsync(t, srv, inline(rows("full", 4)))
	p.Reached(t, "full")
	select {
	case <-returned:
		t.Fatal("a request that fills max_batch_size was queued rather than run on its submitter")
	default:
	}
	gate.Open()
	<-returned
	coretest.Succeeded(t, reply)
}

func TestInlineAndQueuedRequestsNeverShareAnInstance(t *testing.T) {
	t.Parallel()
	p := coretest.NewProvider()
	srv := coretest.Start(t, p, coretest.ModelDir{Name: "m", Config: `name: "m"
backend: "go"
max_batch_size: 4
input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ 1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ 1 ] } ]
instance_group [ { count: 2 kind: KIND_CPU } ]
`})
	p.Set("m", coretest.Echo())
	const clients, each = 8, 40
	var wg sync.WaitGroup
	replies := make([][]*coretest.Collector, clients)
	for c := range clients {
		wg.Go(func() {
			for i := range each {
				req := rows(fmt.Sprintf("c%d-%d", c, i), 1)
				req.Inline = (c+i)%2 == 0
				reply := coretest.NewCollector()
				if err := srv.Infer(context.Background(), req, reply.Receive); err != nil {
					t.Errorf("Infer %q: %v", req.ID, err)
					return
				}
				replies[c] = append(replies[c], reply)
			}
		})
	}
	wg.Wait()
	for _, rs := range replies {
		coretest.Succeeded(t, rs...)
	}
	if o := p.Overlaps(); len(o) > 0 {
		t.Errorf("instances %v ran two executions at once", o)
	}
	if n := len(p.Executions("m")); n != clients*each {
		t.Errorf("%d executions, want %d", n, clients*each)
	}
}

func TestUnloadWaitsForAnInlineExecution(t *testing.T) {
	t.Parallel()
	p := coretest.NewProvider()
	srv := coretest.Serve(t, core.Options{Backends: p, ExplicitModelControl: true, StartupModels: []string{"*"}},
		coretest.ModelDir{Name: "m", Config: batchingConfig})
	gate := coretest.NewGate(t)
	p.Set("m", coretest.Gated(gate, coretest.Echo()))
	m, err := srv.Model("m", 0)
	if err != nil {
		t.Fatal(err)
	}
	reply, returned := inferAsync(t, srv, inline(rows("r", 1)))
	p.Reached(t, "r")
	var opened atomic.Bool
	unloaded := make(chan bool, 1) // whether the gate was open when UnloadModel returned
	go func() {
		if err := srv.UnloadModel(context.Background(), "m"); err != nil {
			t.Errorf("UnloadModel: %v", err)
		}
		unloaded <- opened.Load()
	}()
	testenv.WaitUntil(t, "the version unloading", func() bool { return m.Readiness() == core.ModelUnloading })
	opened.Store(true)
	gate.Open()
	if !<-unloaded {
		t.Error("the unload finished while an inline execution ran")
	}
	<-returned
	coretest.Succeeded(t, reply)
}
