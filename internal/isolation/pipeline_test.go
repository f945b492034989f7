package isolation

import (
	"fmt"
	"testing"
	"time"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/coretest"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// TestAPipeliningModelSendsBatchesAhead: where the model pipelines, the
// server sends an instance's next batch before its last one returned, up
// to the model's depth per instance and no further; a request the worker
// held when it died fails.
func TestAPipeliningModelSendsBatchesAhead(t *testing.T) {
	fs := newFakeServer(t)
	const depth = 3
	fs.models["one"].depth = depth
	r := fs.start(t, "one", loadedAnswer(fs, "one", nil))
	if !r.loaded {
		t.Fatal("the load failed")
	}
	executions := func() []fakeExecution {
		r.w.mu.Lock()
		defer r.w.mu.Unlock()
		return append([]fakeExecution(nil), r.w.executions...)
	}
	const instances = 2
	var cs []*coretest.Collector
	for i := range instances*depth + 1 {
		cs = append(cs, coretest.Infer(t, fs.srv, coretest.Request("one", fmt.Sprint(i), coretest.Int32Input("INPUT0", []int64{2}, 7, 8))))
	}
	testenv.WaitUntil(t, "every instance's batches sent ahead", func() bool { return len(executions()) == instances*depth })
	time.Sleep(100 * time.Millisecond)
	ex := executions()
	if len(ex) != instances*depth {
		t.Fatalf("the worker was sent %d batches, more than %d instances hold", len(ex), instances)
	}
	answer := func(e fakeExecution) {
		r.sendAll([]wmsg{{body: responseMsg(e.keys[0], &core.Response{Outputs: []core.Output{output([]byte{1, 2, 3, 4})}}, true)},
			{body: keyMsg(msgReleased, e.keys[0], uint64(core.ReleaseAll))},
			{body: keyMsg(msgFinished, e.keys[0], 0)}, {body: executedMsg(e.inst, nil)}})
	}
	// An instance's next batch waits for one of those it has to return:
	// the first of each instance's returns, and the last batch goes out.
	first := map[int]uint64{}
	for _, e := range ex {
		if _, ok := first[e.inst]; !ok {
			first[e.inst] = e.keys[0]
			answer(e)
		}
	}
	testenv.WaitUntil(t, "the last batch sent once an execution returned", func() bool { return len(executions()) == len(ex)+1 })
	last := executions()[len(ex)]
	for _, e := range ex {
		if first[e.inst] != e.keys[0] {
			answer(e)
		}
	}
	var answered []*coretest.Collector
	var held *coretest.Collector
	for i, c := range cs {
		if fmt.Sprint(i) == last.ids[0] {
			held = c
		} else {
			answered = append(answered, c)
		}
	}
	coretest.Succeeded(t, answered...)
	// The worker dies holding the last batch: its request fails.
	r.end(t)
	if got := errorText(t, held); !hasAll(got, "the worker process") {
		t.Errorf("the request the dead worker held got %q, want the worker's end", got)
	}
}

// TestOnlyASingleInstanceModelThatIsNotDecoupledRunsOnOneProcessor: the
// worker of a model whose backend calls back into Go from its executing
// thread alone runs Go on one processor; a decoupled model's, or one of
// several instances, keeps every processor for its backend's other
// threads.
func TestOnlyASingleInstanceModelThatIsNotDecoupledRunsOnOneProcessor(t *testing.T) {
	srv := coretest.Serve(t, core.Options{Backends: coretest.NewProvider()},
		coretest.ModelDir{Name: "plain", Config: coretest.VectorConfig("instance_group [ { count: 1 kind: KIND_CPU } ]")},
		coretest.ModelDir{Name: "dec", Config: coretest.VectorConfig("instance_group [ { count: 1 kind: KIND_CPU } ]\n" + coretest.Decoupled)},
		coretest.ModelDir{Name: "two", Config: coretest.VectorConfig("instance_group [ { count: 2 kind: KIND_CPU } ]")})
	for name, want := range map[string]bool{"plain": true, "dec": false, "two": false} {
		m, err := srv.Model(name, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got := oneProcessor(m); got != want {
			t.Errorf("%s: one processor %v, want %v", name, got, want)
		}
	}
}
