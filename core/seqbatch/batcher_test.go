package seqbatch_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/coretest"
)

// TestSequenceRequestsRunInOrderOnTheirInstance interleaves eight sequences
// over two instances (one slot each, so six wait in the backlog): every
// request of a sequence runs on one instance, in order, and the running
// sums kept in implicit state stay apart.
func TestSequenceRequestsRunInOrderOnTheirInstance(t *testing.T) {
	b := newAccBackend()
	srv := seqServer(t, accConfig(0, stateBatching, `instance_group [ { count: 2 kind: KIND_CPU } ]`), b, nil)
	const seqs, steps = 8, 5
	var replies [seqs][steps]*coretest.Collector
	for step := range steps {
		for s := range seqs {
			replies[s][step] = send(t, srv, 0, seqReq{
				id: fmt.Sprintf("s%d-%d", s, step), corr: uintID(uint64(100 + s)),
				flags: startEnd(step == 0, step == steps-1), value: int32(s*10 + step),
			})
		}
	}
	for s := range seqs {
		var sum int32
		for step := range steps {
			sum += int32(s*10 + step)
			if got := outputOf(t, replies[s][step].Single(t)); got != sum {
				t.Errorf("sequence %d step %d: running sum %d, want %d", s, step, got, sum)
			}
		}
	}
	order := map[uint64][]string{}
	inst := map[uint64]string{}
	for _, e := range b.recorded() {
		id := e.corrID.Uint
		order[id] = append(order[id], e.id)
		if inst[id] == "" {
			inst[id] = e.instance
		} else if inst[id] != e.instance {
			t.Errorf("sequence %d ran on %s and %s", id, inst[id], e.instance)
		}
	}
	for s := range seqs {
		var want []string
		for step := range steps {
			want = append(want, fmt.Sprintf("s%d-%d", s, step))
		}
		if got := order[uint64(100+s)]; strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("sequence %d ran %v, want %v", s, got, want)
		}
	}
}

// TestSequenceControlInputs checks the values and shapes of START, END,
// READY and CORRID as the backend sees them, for each kind of value and
// with and without a batch dimension.
func TestSequenceControlInputs(t *testing.T) {
	controls := `control_input [
  { name: "START" control [ { kind: CONTROL_SEQUENCE_START int32_false_true: [ 7, 9 ] } ] },
  { name: "END" control [ { kind: CONTROL_SEQUENCE_END fp32_false_true: [ 0.5, 1.5 ] } ] },
  { name: "READY" control [ { kind: CONTROL_SEQUENCE_READY bool_false_true: [ false, true ] } ] },
  { name: "CORRID" control [ { kind: CONTROL_SEQUENCE_CORRID data_type: %s } ] }
]`
	for _, tt := range []struct {
		name     string
		maxBatch int
		corrType string
		corr     core.CorrelationID
		want     any
	}{
		{"uint64 id, no batching", 0, "TYPE_UINT64", uintID(1<<40 + 5), uint64(1<<40 + 5)},
		{"uint32 id, batching", 4, "TYPE_UINT32", uintID(1<<40 + 5), uint32(5)},
		{"int64 id", 0, "TYPE_INT64", uintID(77), int64(77)},
		{"string id", 2, "TYPE_STRING", strID("conversation-a"), "conversation-a"},
		{"numeric id as string", 0, "TYPE_STRING", uintID(42), "42"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b := newAccBackend()
			cfg := accConfig(tt.maxBatch, fmt.Sprintf(controls, tt.corrType), "")
			srv := seqServer(t, cfg, b, nil)
			steps := []struct {
				id         string
				flags      uint32
				start, end any
			}{
				{"first", startEnd(true, false), int32(9), float32(0.5)},
				{"middle", 0, int32(7), float32(0.5)},
				{"last", startEnd(false, true), int32(7), float32(1.5)},
				{"only", startEnd(true, true), int32(9), float32(1.5)},
			}
			for _, st := range steps {
				send(t, srv, tt.maxBatch, seqReq{id: st.id, corr: tt.corr, flags: st.flags, value: 1}).Single(t)
				e := b.byID(t, st.id)
				for name, want := range map[string]any{"START": st.start, "END": st.end, "READY": true, "CORRID": tt.want} {
					if got := e.inputs[name]; got != want {
						t.Errorf("%s: %s = %v (%T), want %v (%T)", st.id, name, got, got, want, want)
					}
					if got, want := fmt.Sprint(e.shapes[name]), fmt.Sprint(shapeFor(tt.maxBatch)); got != want {
						t.Errorf("%s: %s has shape %s, want %s", st.id, name, got, want)
					}
				}
				if _, ok := e.inputs["INPUT"]; !ok || len(e.inputs) != 5 {
					t.Errorf("%s: backend saw inputs %v, want INPUT and the four controls", st.id, e.inputs)
				}
			}
		})
	}
}

// TestSequenceRefusesRequestsOutsideASequence checks the errors Infer
// returns at once, before anything runs.
func TestSequenceRefusesRequestsOutsideASequence(t *testing.T) {
	batching := stateBatching + `
control_input [ { name: "START" control [ { kind: CONTROL_SEQUENCE_START int32_false_true: [ 0, 1 ] } ] },
                { name: "CORRID" control [ { kind: CONTROL_SEQUENCE_CORRID data_type: TYPE_UINT64 } ] } ]`
	b := newAccBackend()
	srv := seqServer(t, accConfig(4, batching, ""), b, nil)
	send(t, srv, 4, seqReq{id: "a0", corr: uintID(5), flags: startEnd(true, false), value: 1}).Single(t)
	send(t, srv, 4, seqReq{id: "a1", corr: uintID(5), flags: startEnd(false, true), value: 1}).Single(t)

	infer := func(req *core.Submission) error {
		return srv.Infer(context.Background(), req, func(*core.Response, bool) { t.Errorf("request %q got a response", req.ID) })
	}
	in := func(name string, shape []int64) core.Input {
		return core.NewInput(name, core.TypeInt32, shape, make([]byte, 4*core.ElementCount(shape)))
	}
	for _, tt := range []struct {
		name string
		req  *core.Submission
		want []string
	}{
		{"no correlation id", &core.Submission{ID: "x", Flags: core.RequestFlagSequenceStart, Inputs: []core.Input{in("INPUT", []int64{1, 1})}},
			[]string{`model 'acc'`, "must specify a non-zero or non-empty correlation ID"}},
		{"empty string id", &core.Submission{ID: "x", CorrelationID: strID(""), Inputs: []core.Input{in("INPUT", []int64{1, 1})}},
			[]string{"non-empty correlation ID"}},
		{"unknown sequence", &core.Submission{ID: "x", CorrelationID: uintID(6), Inputs: []core.Input{in("INPUT", []int64{1, 1})}},
			[]string{"sequence 6", `model 'acc'`, "must specify the START flag"}},
		{"after END", &core.Submission{ID: "x", CorrelationID: uintID(5), Inputs: []core.Input{in("INPUT", []int64{1, 1})}},
			[]string{"sequence 5", "START flag"}},
		{"batch of two", &core.Submission{ID: "x", CorrelationID: uintID(7), Flags: core.RequestFlagSequenceStart, Inputs: []core.Input{in("INPUT", []int64{2, 1})}},
			[]string{`model 'acc'`, "batch-size 1"}},
		{"string id, integer CORRID", &core.Submission{ID: "x", CorrelationID: strID("s"), Flags: core.RequestFlagSequenceStart, Inputs: []core.Input{in("INPUT", []int64{1, 1})}},
			[]string{`"CORRID"`, "unsigned integer correlation ID"}},
		{"client sends a control", &core.Submission{ID: "x", CorrelationID: uintID(8), Flags: core.RequestFlagSequenceStart,
			Inputs: []core.Input{in("INPUT", []int64{1, 1}), in("START", []int64{1, 1})}}, []string{`"START"`, "sequence batcher"}},
		{"client sends the state", &core.Submission{ID: "x", CorrelationID: uintID(8), Flags: core.RequestFlagSequenceStart,
			Inputs: []core.Input{in("INPUT", []int64{1, 1}), in("STATE_IN", []int64{1, 1})}}, []string{`"STATE_IN"`, "sequence batcher"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.req.Model = "acc"
			err := infer(tt.req)
			if core.CodeOf(err) != core.CodeInvalidArg {
				t.Fatalf("Infer: %v (code %v), want INVALID_ARG", err, core.CodeOf(err))
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
	if n := len(b.recorded()); n != 2 {
		t.Errorf("%d executions, want only the two of sequence 5", n)
	}
}

// TestSequenceStartResetsState checks implicit state: START gives the
// initial state (zeros, or initial_state), every request sees the state the
// previous one wrote, and a START on a running sequence starts over.
func TestSequenceStartResetsState(t *testing.T) {
	withFile := `state [ { input_name: "STATE_IN" output_name: "STATE_OUT" data_type: TYPE_INT32 dims: [ -1 ]
  initial_state: { data_type: TYPE_INT32 dims: [ 1 ] data_file: "hundred" name: "from file" } } ]`
	for _, tt := range []struct {
		name     string
		maxBatch int
		batching string
		initial  int32
	}{
		{"zeros", 0, stateBatching, 0},
		{"from file, batching", 2, withFile, 100},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b := newAccBackend()
			srv := seqServer(t, accConfig(tt.maxBatch, tt.batching, ""), b, map[string][]byte{"initial_state/hundred": int32Bytes(100)})
			run := func(id string, flags uint32, v int32) int32 {
				return outputOf(t, send(t, srv, tt.maxBatch, seqReq{id: id, corr: strID("x"), flags: flags, value: v}).Single(t))
			}
			for _, step := range []struct {
				id    string
				flags uint32
				value int32
				want  int32
			}{
				{"a", startEnd(true, false), 1, tt.initial + 1},
				{"b", 0, 2, tt.initial + 3},
				{"c", startEnd(true, false), 5, tt.initial + 5}, // START again: the state starts over
				{"d", startEnd(false, true), 1, tt.initial + 6},
				{"e", startEnd(true, true), 3, tt.initial + 3},
			} {
				if got := run(step.id, step.flags, step.value); got != step.want {
					t.Errorf("%s: output %d, want %d", step.id, got, step.want)
				}
			}
			if e := b.byID(t, "a"); fmt.Sprint(e.shapes["STATE_IN"]) != fmt.Sprint(shapeFor(tt.maxBatch)) {
				t.Errorf("initial state shape %v, want %v", e.shapes["STATE_IN"], shapeFor(tt.maxBatch))
			}
			for _, e := range b.recorded() {
				if e.err != nil {
					t.Errorf("%s: UpdateState: %v", e.id, e.err)
				}
			}
		})
	}
}

// TestSequenceUpdateStateChecksTheName checks UpdateState and
// CheckStateOutput: only configured state outputs, only on models with
// state.
func TestSequenceUpdateStateChecksTheName(t *testing.T) {
	var got []error
	b := newAccBackend()
	srv := seqServer(t, accConfig(0, stateBatching, ""), b, nil)
	send(t, srv, 0, seqReq{id: "a", corr: uintID(1), flags: startEnd(true, true), value: 1}).Single(t)
	if e := b.byID(t, "a"); e.err != nil {
		t.Errorf("UpdateState of a configured state: %v", e.err)
	}
	var captured *core.Request
	srv2 := hookServer(t, accConfig(0, stateBatching, ""), func(r *core.Request) {
		captured = r
		got = append(got,
			r.CheckStateOutput("STATE_OUT"),
			r.CheckStateOutput("NOPE"),
			r.UpdateState("NOPE", core.TypeInt32, []int64{1}, int32Bytes(1)),
			r.UpdateState("STATE_OUT", core.TypeInt32, []int64{2}, int32Bytes(1)),
			r.UpdateState("STATE_OUT", core.TypeInt32, []int64{1 << 62}, nil), // 2^64 bytes: not 0
			r.UpdateState("STATE_OUT", core.TypeInt32, []int64{1}, int32Bytes(1)),
		)
	})
	send(t, srv2, 0, seqReq{id: "h", corr: uintID(3), flags: startEnd(true, false), value: 1}).Single(t)
	if captured == nil || len(got) != 6 {
		t.Fatalf("hook did not run: %v", got)
	}
	want := []string{"", `state "NOPE" is not a valid state name for model "acc"`, "not a valid state name", "needs 8", "more bytes than an int64 counts", ""}
	for i, w := range want {
		switch {
		case w == "" && got[i] != nil:
			t.Errorf("call %d: %v, want success", i, got[i])
		case w != "" && (got[i] == nil || !strings.Contains(got[i].Error(), w) || core.CodeOf(got[i]) != core.CodeInvalidArg):
			t.Errorf("call %d: %v, want INVALID_ARG mentioning %q", i, got[i], w)
		}
	}

	noState := hookServer(t, accConfig(0, "", ""), func(r *core.Request) {
		if err := r.CheckStateOutput("STATE_OUT"); err == nil || !strings.Contains(err.Error(), `State configuration is missing for model "acc"`) {
			t.Errorf("CheckStateOutput without state: %v", err)
		}
	})
	send(t, noState, 0, seqReq{id: "n", corr: uintID(3), flags: startEnd(true, false), value: 1}).Single(t)
}

// TestSequenceIdleTimeoutFreesTheSlot: a sequence that sends nothing for
// max_sequence_idle_microseconds loses its slot (the backlogged sequence
// gets it) and its state; its next request needs START again.
func TestSequenceIdleTimeoutFreesTheSlot(t *testing.T) {
	b := newAccBackend()
	srv := seqServer(t, accConfig(0, stateBatching+"\nmax_sequence_idle_microseconds: 100000", ""), b, nil)
	send(t, srv, 0, seqReq{id: "a0", corr: uintID(1), flags: startEnd(true, false), value: 5}).Single(t)
	start := time.Now()
	b2 := send(t, srv, 0, seqReq{id: "b0", corr: uintID(2), flags: startEnd(true, false), value: 1})
	if got := outputOf(t, b2.Single(t)); got != 1 {
		t.Errorf("backlogged sequence: output %d, want 1", got)
	}
	if waited := time.Since(start); waited < 80*time.Millisecond {
		t.Errorf("backlogged sequence ran after %v, before the idle timeout of the first freed the only slot", waited)
	}
	_, err := trySend(srv, 0, seqReq{id: "a1", corr: uintID(1), value: 1})
	if core.CodeOf(err) != core.CodeInvalidArg || !strings.Contains(err.Error(), "START") {
		t.Errorf("request of a timed-out sequence: %v, want INVALID_ARG asking for START", err)
	}
	// Sequence 2 holds the slot now; it ends, and sequence 1 restarts from zero.
	send(t, srv, 0, seqReq{id: "b1", corr: uintID(2), flags: startEnd(false, true), value: 1}).Single(t)
	if got := outputOf(t, send(t, srv, 0, seqReq{id: "a2", corr: uintID(1), flags: startEnd(true, true), value: 3}).Single(t)); got != 3 {
		t.Errorf("restarted sequence: output %d, want 3 (the old state is gone)", got)
	}
}

// TestSequenceBatchesSlotsTogether: with max_batch_size 2 an instance has
// two slots; requests of two sequences run in one batch, a third sequence
// waits for a slot.
func TestSequenceBatchesSlotsTogether(t *testing.T) {
	for _, strategy := range []string{"direct { }", "oldest { max_candidate_sequences: 2 }"} {
		t.Run(strings.Fields(strategy)[0], func(t *testing.T) {
			b := newAccBackend()
			srv := seqServer(t, accConfig(2, strategy+"\n"+stateBatching, ""), b, nil)
			gate := b.gated(t, "block")
			// "block" occupies the instance; meanwhile two sequences queue up.
			blk := send(t, srv, 2, seqReq{id: "block", corr: uintID(9), flags: startEnd(true, true)})
			b.Reached(t, "block")
			x := send(t, srv, 2, seqReq{id: "x", corr: uintID(1), flags: startEnd(true, true), value: 1})
			y := send(t, srv, 2, seqReq{id: "y", corr: uintID(2), flags: startEnd(true, false), value: 2})
			z := send(t, srv, 2, seqReq{id: "z", corr: uintID(3), flags: startEnd(true, true), value: 3})
			gate.Open()
			for _, r := range []*coretest.Collector{blk, x, y, z} {
				r.Single(t)
			}
			ex, ey, ez := b.byID(t, "x"), b.byID(t, "y"), b.byID(t, "z")
			if ex.batch != ey.batch || ex.size != 2 {
				t.Errorf("x and y ran in batches %d (size %d) and %d, want one batch of 2", ex.batch, ex.size, ey.batch)
			}
			if ez.batch <= ex.batch {
				t.Errorf("z ran in batch %d, want after x's %d (it waited for a slot)", ez.batch, ex.batch)
			}
			send(t, srv, 2, seqReq{id: "y1", corr: uintID(2), flags: startEnd(false, true), value: 2}).Single(t)
		})
	}
}

// TestSequenceCancellationEndsTheSequence: cancelling a queued request
// fails it and every later request of its sequence with CANCELLED, at once;
// earlier ones still run; the sequence then needs START again. A cancelled
// sequence in the backlog goes too.
func TestSequenceCancellationEndsTheSequence(t *testing.T) {
	b := newAccBackend()
	srv := seqServer(t, accConfig(0, stateBatching, ""), b, nil)
	gate := b.gated(t, "a0")
	a0 := send(t, srv, 0, seqReq{id: "a0", corr: uintID(1), flags: startEnd(true, false), value: 1})
	b.Reached(t, "a0")
	a1 := send(t, srv, 0, seqReq{id: "a1", corr: uintID(1), value: 2})
	ctx, cancel := context.WithCancel(context.Background())
	a2 := send(t, srv, 0, seqReq{id: "a2", corr: uintID(1), value: 3, ctx: ctx})
	a3 := send(t, srv, 0, seqReq{id: "a3", corr: uintID(1), flags: startEnd(false, true), value: 4})
	bctx, bcancel := context.WithCancel(context.Background())
	bl := send(t, srv, 0, seqReq{id: "b0", corr: uintID(2), flags: startEnd(true, false), ctx: bctx})
	cancel()
	bcancel()
	for id, r := range map[string]*coretest.Collector{"a2": a2, "a3": a3, "b0": bl} {
		resp := r.Single(t)
		if core.CodeOf(resp.Err) != core.CodeCancelled {
			t.Errorf("%s: %v, want CANCELLED", id, resp.Err)
		}
	}
	select {
	case <-a1.Done():
		t.Error("a1 completed while a0 still runs")
	default:
	}
	gate.Open()
	if got := outputOf(t, a0.Single(t)); got != 1 {
		t.Errorf("a0: %d, want 1", got)
	}
	if got := outputOf(t, a1.Single(t)); got != 3 {
		t.Errorf("a1 (before the cancelled request): %d, want 3", got)
	}
	if _, err := trySend(srv, 0, seqReq{id: "a4", corr: uintID(1), value: 1}); core.CodeOf(err) != core.CodeInvalidArg {
		t.Errorf("request after the cancelled sequence: %v, want INVALID_ARG", err)
	}
	for _, e := range b.recorded() {
		if e.id == "a2" || e.id == "a3" || e.id == "b0" {
			t.Errorf("cancelled request %s reached the backend", e.id)
		}
	}
	// The slot is free again.
	send(t, srv, 0, seqReq{id: "c0", corr: uintID(3), flags: startEnd(true, true), value: 1}).Single(t)
}

// TestSequenceStopCompletesEveryRequestOnce: a model unloaded while a
// request executes, others of its sequence are queued and another sequence
// waits in the backlog: Stop gives up at its deadline, every queued request
// fails with UNAVAILABLE at once, the running one completes later, each
// exactly once.
func TestSequenceStopCompletesEveryRequestOnce(t *testing.T) {
	b := newAccBackend()
	repoSrv := seqServer(t, accConfig(0, stateBatching, ""), b, nil)
	gate := b.gated(t, "a0")
	var replies []*coretest.Collector
	replies = append(replies, send(t, repoSrv, 0, seqReq{id: "a0", corr: uintID(1), flags: startEnd(true, false), value: 1}))
	b.Reached(t, "a0")
	replies = append(replies,
		send(t, repoSrv, 0, seqReq{id: "a1", corr: uintID(1), value: 1}),
		send(t, repoSrv, 0, seqReq{id: "b0", corr: uintID(2), flags: startEnd(true, false), value: 1}),
		send(t, repoSrv, 0, seqReq{id: "b1", corr: uintID(2), flags: startEnd(false, true), value: 1}),
	)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	coretest.WantError(t, "Stop", repoSrv.Stop(ctx), core.CodeUnavailable, `model "acc"`, "running execution")
	for i, r := range replies[1:] {
		resp := r.Single(t)
		if core.CodeOf(resp.Err) != core.CodeUnavailable || !strings.Contains(resp.Err.Error(), "unloaded") {
			t.Errorf("reply %d: %v, want UNAVAILABLE (unloaded)", i+1, resp.Err)
		}
	}
	if replies[0].Finished() {
		t.Error("a0 finished while its execution waited")
	}
	gate.Open()
	if got := outputOf(t, replies[0].Single(t)); got != 1 {
		t.Errorf("a0: %d, want 1", got)
	}
	b.WaitEvent(t, "finalize model acc")
	for _, r := range replies {
		r.Check(t) // no second final
	}
}

// TestSequenceUnloadDrainsTheBacklog: unloading lets queued sequences run,
// giving the slot of an idle sequence to the backlog at once instead of
// after its idle timeout.
func TestSequenceUnloadDrainsTheBacklog(t *testing.T) {
	b := newAccBackend()
	srv := seqServer(t, accConfig(0, stateBatching+"\nmax_sequence_idle_microseconds: 60000000", ""), b, nil, func(o *core.Options) {
		o.ExplicitModelControl, o.StartupModels = true, []string{"*"}
	})
	send(t, srv, 0, seqReq{id: "a0", corr: uintID(1), flags: startEnd(true, false), value: 1}).Single(t)
	bl := send(t, srv, 0, seqReq{id: "b0", corr: uintID(2), flags: startEnd(true, false), value: 2})
	select {
	case <-bl.Done():
		t.Fatal("the backlogged sequence ran while the only slot was taken")
	case <-time.After(50 * time.Millisecond):
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	if err := srv.UnloadModel(ctx, "acc"); err != nil {
		t.Fatalf("UnloadModel: %v", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("unload took %v: it waited for the idle timeout", took)
	}
	if got := outputOf(t, bl.Single(t)); got != 2 {
		t.Errorf("b0: %d, want 2", got)
	}
}

// hookServer serves model "acc" with config on a backend that calls fn
// with every request, then echoes it.
func hookServer(t *testing.T, config string, fn func(r *core.Request)) *core.Server {
	t.Helper()
	return seqServer(t, config, coretest.NewProvider().Set("acc", coretest.Inspect(fn, coretest.Echo())), nil)
}

// iterBackend serves a model with iterative_sequence: a request asks for
// INPUT iterations; each execution sends one response with the iteration's
// number and START as the backend saw it, then reschedules the request
// until the last iteration, which is final and releases it for good.
type iterBackend struct {
	*coretest.Provider
	mu   sync.Mutex
	done map[string]int32 // iterations run, by request id
	seen map[string][]string
}

func newIterBackend() *iterBackend {
	b := &iterBackend{Provider: coretest.NewProvider(), done: map[string]int32{}, seen: map[string][]string{}}
	b.Set("acc", b.execute)
	return b
}

func (b *iterBackend) execute(x *coretest.Exec) error {
	for _, r := range x.Batch {
		var want, start int32
		for _, in := range r.Inputs() {
			switch in.Name {
			case "INPUT":
				want = decode(in).(int32)
			case "START":
				start = decode(in).(int32)
			}
		}
		b.mu.Lock()
		b.done[r.ID()]++
		n := b.done[r.ID()]
		b.seen[r.ID()] = append(b.seen[r.ID()], fmt.Sprintf("%d:start=%d,flags=%d,corr=%v", n, start, r.Flags(), r.CorrelationID().Uint != 0))
		b.mu.Unlock()
		last := n >= want
		_ = x.Send(r, &core.Response{Outputs: []core.Output{{Name: "OUTPUT", DataType: core.TypeInt32, Shape: []int64{1},
			Data: int32Bytes(n)}}}, last)
		if last {
			_ = x.Release(r, core.ReleaseAll)
		} else {
			_ = x.Release(r, core.ReleaseReschedule)
		}
	}
	return nil
}

// TestIterativeSequenceReschedulesUntilDone: with iterative_sequence a
// request needs no correlation id; the server makes it a sequence of its
// own (START on the first iteration only) that the backend reschedules
// until it is done, and the slot is free again after: more requests than
// slots all finish.
func TestIterativeSequenceReschedulesUntilDone(t *testing.T) {
	t.Parallel()
	b := newIterBackend()
	cfg := `name: "acc"
backend: "go"
max_batch_size: 0
model_transaction_policy { decoupled: true }
input [ { name: "INPUT" data_type: TYPE_INT32 dims: [ 1 ] } ]
output [ { name: "OUTPUT" data_type: TYPE_INT32 dims: [ 1 ] } ]
sequence_batching {
  iterative_sequence: true
  control_input [ { name: "START" control [ { kind: CONTROL_SEQUENCE_START int32_false_true: [ 0, 1 ] } ] } ]
}
instance_group [ { count: 1 kind: KIND_CPU } ]
`
	srv := seqServer(t, cfg, b, nil)
	var cs []*coretest.Collector
	for i := range 5 { // one slot: the sequences take turns
		cs = append(cs, send(t, srv, 0, seqReq{id: fmt.Sprint("r", i), value: int32(i + 1)}))
	}
	for i, c := range cs {
		res := c.Wait(t)
		var got []int32
		for _, resp := range res.Responses {
			got = append(got, outputOf(t, resp))
		}
		if want := []int32{1, 2, 3, 4, 5}[:i+1]; !slices.Equal(got, want) {
			t.Errorf("request r%d: responses %v, want %v", i, got, want)
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if got := fmt.Sprint(b.seen["r2"]); got != "[1:start=1,flags=1,corr=true 2:start=0,flags=0,corr=true 3:start=0,flags=0,corr=true]" {
		t.Errorf("r2's iterations as the backend saw them: %s", got)
	}
}

// TestDelaySchedulerHooksHoldTheLanes: Triton's test hooks hold every lane
// until enough requests are queued (TRITONSERVER_DELAY_SCHEDULER) or wait
// in the backlog (TRITONSERVER_BACKLOG_DELAY_SCHEDULER); then what is
// queued runs, batched as it stands.
func TestDelaySchedulerHooksHoldTheLanes(t *testing.T) {
	t.Setenv("TRITONSERVER_DELAY_SCHEDULER", "3")
	b := newAccBackend()
	srv := seqServer(t, accConfig(2, "", `instance_group [ { count: 1 kind: KIND_CPU } ]`), b, nil)
	a1 := send(t, srv, 2, seqReq{id: "a1", corr: uintID(1), flags: startEnd(true, false), value: 1})
	b1 := send(t, srv, 2, seqReq{id: "b1", corr: uintID(2), flags: startEnd(true, true), value: 1})
	select {
	case <-a1.Done():
		t.Fatal("a request ran before three were queued")
	case <-time.After(50 * time.Millisecond): // a window for a wrong execution to show
	}
	a2 := send(t, srv, 2, seqReq{id: "a2", corr: uintID(1), flags: startEnd(false, true), value: 1})
	coretest.Succeeded(t, a1, b1, a2)
	sizes := map[string]int{}
	for _, e := range b.recorded() {
		sizes[e.id] = e.size
	}
	if sizes["a1"] != 2 || sizes["b1"] != 2 || sizes["a2"] != 1 {
		t.Errorf("batch sizes %v, want a1 and b1 together, then a2", sizes)
	}
}
