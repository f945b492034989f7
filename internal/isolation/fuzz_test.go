package isolation

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"os/exec"
	"slices"
	"testing"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/coretest"
	"github.com/tritonhost/tritonhost/internal/testenv"
	"github.com/tritonhost/tritonhost/internal/wire"
)

// frame writes messages as a fuzz input: each its descriptor spec (a
// byte), its length (a uvarint) and its bytes.
func frame(msgs ...wmsg) []byte {
	var out []byte
	for _, m := range msgs {
		out = append(out, m.fds)
		out = binary.AppendUvarint(out, uint64(len(m.body)))
		out = append(out, m.body...)
	}
	return out
}

// maxFuzzMessages bounds the messages of one fuzz input.
const maxFuzzMessages = 64

// unframe reads a fuzz input back into messages; a length past the end
// takes what is left, and one past MaxMessage is cut to it.
func unframe(in []byte) []wmsg {
	var out []wmsg
	for len(in) > 0 && len(out) < maxFuzzMessages {
		spec := in[0]
		n, k := binary.Uvarint(in[1:])
		if k <= 0 {
			break
		}
		in = in[1+k:]
		n = min(n, uint64(len(in)), wire.MaxMessage)
		out = append(out, wmsg{fds: spec, body: in[:n]})
		in = in[n:]
	}
	return out
}

// fuzzSeed is one seed: the model, and the messages its worker sends (the
// first answers the load; the others follow once it holds requests "a",
// key 1, on instance 0, and "b", key 2, on instance 1).
type fuzzSeed struct {
	decoupled bool
	msgs      []wmsg
}

// workerSeeds are the seeds: a worker that behaves (responses inline and
// in a region, releases, statistics of every kind, state, executions
// returning), one whose messages race as two backend threads make them,
// one that reschedules, a load that fails, every message kind bare, every
// kind of descriptor, and the sizes a hostile worker would try.
func workerSeeds(fs *fakeServer) []fuzzSeed {
	const inst0, inst1 = 0, 1
	loaded := func(decoupled bool) wmsg {
		if decoupled {
			return loadedAnswer(fs, "dec", nil)
		}
		return loadedAnswer(fs, "one", nil)
	}
	big := make([]byte, 100<<10) // past inlineBytes: in a region
	var seeds []fuzzSeed
	for _, dec := range []bool{true, false} {
		final1 := []wmsg{{body: responseMsg(1, &core.Response{Outputs: []core.Output{output(int32s(7, 8))}}, true)}}
		if dec {
			final1 = []wmsg{
				{body: responseMsg(1, &core.Response{Outputs: []core.Output{output(int32s(7, 8))}}, false)},
				{body: responseMsg(1, nil, true)},
			}
		}
		behaves := append([]wmsg{loaded(dec)}, final1...)
		behaves = append(behaves,
			wmsg{body: keyMsg(msgReleased, 1, uint64(core.ReleaseAll))},
			wmsg{body: timesMsgOf(msgStats, timesMsg{Key: 1, Instance: inst0, Success: true, Times: [4]uint64{1, 2, 3, 4}})},
			wmsg{body: timesMsgOf(msgResponseStats, timesMsg{Key: 1, Instance: inst0, Outcome: core.ResponseSucceeded, Times: [4]uint64{1, 2, 3}})},
			wmsg{body: keyMsg(msgFinished, 1, 0)},
			wmsg{body: timesMsgOf(msgBatchStats, timesMsg{Instance: inst0, Size: 1, Times: [4]uint64{1, 2, 3, 4}})},
			wmsg{body: executedMsg(inst0, nil)},
			wmsg{fds: fdRegion | sizeMid, body: responseMsg(2, &core.Response{Outputs: []core.Output{output(big)},
				Parameters: []core.Parameter{core.StringParam("p", "v"), core.IntParam("i", 3), core.BoolParam("b", true)}}, true)},
			wmsg{body: keyMsg(msgReleased, 2, uint64(core.ReleaseAll))},
			wmsg{body: keyMsg(msgFinished, 2, 0)},
			wmsg{body: executedMsg(inst1, nil)},
		)
		seeds = append(seeds,
			fuzzSeed{dec, behaves},
			// Its release reaches the server after its end (two threads).
			fuzzSeed{dec, append(append([]wmsg{loaded(dec)}, final1...),
				wmsg{body: keyMsg(msgFinished, 1, 0)}, wmsg{body: keyMsg(msgReleased, 1, uint64(core.ReleaseAll))},
				wmsg{body: executedMsg(inst0, nil)})},
			// Rescheduled, then answered as key 3 on its next execution.
			fuzzSeed{dec, []wmsg{loaded(dec), {body: keyMsg(msgReleased, 1, uint64(core.ReleaseReschedule))},
				{body: executedMsg(inst0, nil)}, {body: responseMsg(3, nil, true)},
				{body: keyMsg(msgReleased, 3, uint64(core.ReleaseAll))}, {body: keyMsg(msgFinished, 3, 0)}}},
			// An execution that fails, then a state update and an error response.
			fuzzSeed{dec, []wmsg{loaded(dec), {body: executedMsg(inst0, core.Errorf(core.CodeInternal, "no"))},
				{body: stateMsg(2, "OUTPUT_STATE", []int64{2}, int32s(1, 2))},
				{body: responseMsg(2, &core.Response{Err: core.Errorf(core.CodeUnavailable, "busy")}, true)}}},
			// What a hostile worker sends: outputs aliasing one region past
			// every bound, and a state value of a sparse gigabyte.
			fuzzSeed{dec, []wmsg{loaded(dec), {fds: fdRegion | sizeMiB, body: regionResponse(1, 4096, 1<<20)},
				{fds: fdRegion | sizeGiB, body: regionResponse(2, 1, 1<<30)}}},
			fuzzSeed{dec, []wmsg{loaded(dec), {fds: fdRegion | sizeGiB, body: regionState(1, 1<<30)}}},
			// A pooled output region named again without its descriptor,
			// then forgotten, and returns of input regions.
			fuzzSeed{dec, []wmsg{loaded(dec), {fds: fdRegion | sizeMiB, body: pooledResponse(1, 3, 1<<20)},
				{body: pooledResponse(2, 3, 16)}, {body: keyMsg(msgForget, 3, 0)}, {body: pooledResponse(3, 3, 16)},
				{body: keyMsg(msgReturned, 1, 0)}}},
		)
	}
	// Loads that fail: an error, another message, nothing, descriptors.
	seeds = append(seeds,
		fuzzSeed{true, []wmsg{loadedAnswer(fs, "dec", core.Errorf(core.CodeInternal, "backend refused"))}},
		fuzzSeed{true, []wmsg{{body: keyMsg(msgFinished, 1, 0)}}},
		fuzzSeed{true, nil},
		fuzzSeed{true, []wmsg{{fds: fdTwo, body: loaded(true).body}}},
	)
	// Every message kind with nothing after its header, and every kind of
	// descriptor beside a response.
	for kind := range 24 {
		seeds = append(seeds, fuzzSeed{true, []wmsg{loaded(true), {body: encode(func(e *wire.Encoder) { header(e, byte(kind), nil) })}}})
	}
	for spec := range byte(8) {
		seeds = append(seeds, fuzzSeed{true, []wmsg{loaded(true), {fds: spec, body: regionResponse(1, 1, 16)}}})
	}
	return seeds
}

// FuzzWorkerMessages: whatever a worker sends (a malicious one, or one
// whose memory was corrupted) — its answer to the load, then any messages
// with any descriptors beside them while it holds two requests — the
// server never panics, each request it held gets exactly one final
// response and ends, the server's reader of the worker's socket returns
// once the worker is gone, every descriptor the worker passed is closed
// and every region it passed unmapped, and the model is not wedged (a
// request after the worker's end fails at once).
func FuzzWorkerMessages(f *testing.F) {
	fs := newFakeServer(f)
	for _, s := range workerSeeds(fs) {
		f.Add(s.decoupled, frame(s.msgs...))
	}
	f.Fuzz(func(t *testing.T, decoupled bool, input []byte) {
		model := "one"
		if decoupled {
			model = "dec"
		}
		msgs := unframe(input)
		var answer wmsg // none: an empty message, which ends the socket
		if len(msgs) > 0 {
			answer, msgs = msgs[0], msgs[1:]
		}
		r := fs.start(t, model, answer)
		if !r.loaded {
			r.end(t)
			return
		}
		a, _ := r.submit(t, "a")
		b, _ := r.submit(t, "b")
		r.sendAll(msgs)
		r.end(t, a, b)
		probe := coretest.Infer(t, fs.srv, coretest.Request(model, "probe", coretest.Int32Input("INPUT0", []int64{1}, 1)))
		if got := errorText(t, probe); got == "" {
			t.Errorf("a request to %s after its worker's end succeeded", model)
		}
		testenv.WaitUntil(t, "no live request", func() bool { return fs.srv.LiveRequests() == 0 })
	})
}

// TestABrokenWorkerHarmsOnlyItsRequests: what a worker does wrong, or in
// an order the server must accept, ends its requests as it should, and
// no more: a request the worker answered, released and finished (in
// either order) succeeds while the worker lives; one it finished without
// a final response, or rescheduled after one, ends at once; outputs or a
// state value past the server's tensor bound (aliasing one sparse region,
// which costs the worker nothing) fail the response or the update before
// anything is copied; and a message the server cannot take (malformed, a
// region that could shrink or is no memory, too many descriptors, an
// execution that returned twice, an unknown kind) ends the worker, every
// request it held failing with UNAVAILABLE and why. Every descriptor the
// worker passed is closed each time.
func TestABrokenWorkerHarmsOnlyItsRequests(t *testing.T) {
	fs := newFakeServer(t)
	answer := func(key uint64, final bool) wmsg {
		return wmsg{body: responseMsg(key, &core.Response{Outputs: []core.Output{output(int32s(7, 8))}}, final)}
	}
	released := func(key uint64, flags uint32) wmsg { return wmsg{body: keyMsg(msgReleased, key, uint64(flags))} }
	finished := func(key uint64) wmsg { return wmsg{body: keyMsg(msgFinished, key, 0)} }
	const a = 1 // request a's key; b's is 2
	died := func(model string) []string {
		return []string{fmt.Sprintf("model '%s' version 1: the worker process", model), "the model restarts"}
	}
	diedDec := died("dec")
	for _, tc := range []struct {
		name  string
		model string
		msgs  func(exA fakeExecution) []wmsg
		wantA []string // in a's error; nil: a succeeds
		alive bool     // a ends while the worker lives (else once it died)
		log   string   // in the server's log
	}{
		{name: "answered, released and finished", model: "dec", alive: true,
			msgs: func(ex fakeExecution) []wmsg {
				return []wmsg{answer(a, true), released(a, core.ReleaseAll), finished(a), {body: executedMsg(ex.inst, nil)}}
			}},
		{name: "finished before its release arrived", model: "dec", alive: true,
			msgs: func(fakeExecution) []wmsg { return []wmsg{answer(a, true), finished(a), released(a, core.ReleaseAll)} }},
		{name: "not decoupled, finished before its release arrived", model: "one", alive: true,
			msgs: func(fakeExecution) []wmsg { return []wmsg{answer(a, true), finished(a), released(a, core.ReleaseAll)} }},
		{name: "released and finished without a response", model: "dec", alive: true,
			wantA: []string{`finished request "a" without a final response`},
			msgs:  func(fakeExecution) []wmsg { return []wmsg{released(a, core.ReleaseAll), finished(a)} }},
		{name: "finished without a release or a response", model: "one", alive: true,
			wantA: []string{`finished request "a" without a final response`},
			msgs:  func(fakeExecution) []wmsg { return []wmsg{finished(a)} }},
		{name: "rescheduled after its final response", model: "dec", alive: true,
			msgs: func(fakeExecution) []wmsg { return []wmsg{answer(a, true), released(a, core.ReleaseReschedule)} }},
		{name: "a response to a request it does not hold", model: "dec", alive: true,
			msgs: func(fakeExecution) []wmsg {
				return []wmsg{answer(99, true), released(99, core.ReleaseAll), finished(99), answer(a, true), released(a, core.ReleaseAll)}
			}},
		{name: "an output past the tensor bound in a sparse region", model: "dec", alive: true,
			wantA: []string{"1073741824 bytes, more than the largest tensor the server holds"},
			msgs: func(fakeExecution) []wmsg {
				return []wmsg{{fds: fdRegion | sizeGiB, body: regionResponse(a, 1, 1<<30)}, released(a, core.ReleaseAll)}
			}},
		{name: "thousands of outputs aliasing one region", model: "dec", alive: true,
			wantA: []string{"a response of 4294967296 output bytes, more than its 1 outputs can hold"},
			msgs: func(fakeExecution) []wmsg {
				return []wmsg{{fds: fdRegion | sizeMiB, body: regionResponse(a, 4096, 1<<20)}, released(a, core.ReleaseAll)}
			}},
		{name: "a state value past the tensor bound in a sparse region", model: "dec", alive: true,
			log: `state "OUTPUT_STATE" of request "a": the value is 1073741824 bytes, more than the largest tensor the server holds`,
			msgs: func(fakeExecution) []wmsg {
				return []wmsg{{fds: fdRegion | sizeGiB, body: regionState(a, 1<<30)}, answer(a, true), released(a, core.ReleaseAll)}
			}},
		{name: "a malformed message", model: "dec", wantA: append([]string{"sent a malformed message", "and was killed"}, diedDec...),
			msgs: func(fakeExecution) []wmsg { return []wmsg{{body: []byte{0xff, 0xff}}} }},
		{name: "a region that could still shrink", model: "dec", wantA: append([]string{"not sealed against shrinking"}, diedDec...),
			msgs: func(fakeExecution) []wmsg { return []wmsg{{fds: fdUnsealed, body: regionResponse(a, 1, 16)}} }},
		{name: "a pipe for a region", model: "dec", wantA: append([]string{"sent a malformed message"}, diedDec...),
			msgs: func(fakeExecution) []wmsg { return []wmsg{{fds: fdPipe, body: regionResponse(a, 1, 16)}} }},
		{name: "an empty region", model: "dec", wantA: append([]string{"shared memory of 0 bytes"}, diedDec...),
			msgs: func(fakeExecution) []wmsg { return []wmsg{{fds: fdEmpty, body: regionResponse(a, 1, 16)}} }},
		{name: "two regions", model: "dec", wantA: append([]string{"2 descriptors with a region flag of true"}, diedDec...),
			msgs: func(fakeExecution) []wmsg { return []wmsg{{fds: fdTwo, body: regionResponse(a, 1, 16)}} }},
		{name: "more descriptors than a message carries", model: "dec", wantA: diedDec,
			msgs: func(fakeExecution) []wmsg { return []wmsg{{fds: fdMany, body: regionResponse(a, 1, 16)}} }},
		{name: "tensor bytes past its region's end", model: "dec", wantA: append([]string{"past the region's"}, diedDec...),
			msgs: func(fakeExecution) []wmsg {
				return []wmsg{{fds: fdRegion | sizeSmall, body: regionResponse(a, 1, 8<<10)}}
			}},
		{name: "an execution that returned twice", model: "dec", wantA: append([]string{"has no execution"}, diedDec...),
			msgs: func(ex fakeExecution) []wmsg {
				return []wmsg{{body: executedMsg(ex.inst, nil)}, {body: executedMsg(ex.inst, nil)}}
			}},
		{name: "an unknown kind", model: "dec", wantA: append([]string{"unknown message"}, diedDec...),
			msgs: func(fakeExecution) []wmsg {
				return []wmsg{{body: encode(func(e *wire.Encoder) { header(e, 99, nil) })}}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := fs.start(t, tc.model, loadedAnswer(fs, tc.model, nil))
			if !r.loaded {
				t.Fatal("the load failed")
			}
			ca, exA := r.submit(t, "a")
			cb, _ := r.submit(t, "b")
			r.sendAll(tc.msgs(exA))
			if tc.alive {
				testenv.WaitUntil(t, "request a to end while b is held", func() bool {
					return ca.Finished() && fs.srv.LiveRequests() == 1
				})
			}
			r.end(t, ca, cb)
			res := ca.Wait(t)
			got := errorText(t, ca)
			switch {
			case tc.wantA == nil && got != "":
				t.Errorf("a failed: %s", got)
			case tc.wantA == nil && (len(res.Responses) != 1 || !bytes.Equal(res.Responses[0].Outputs[0].Data, int32s(7, 8))):
				t.Errorf("a got %d responses, want one with OUTPUT0 = [7 8]", len(res.Responses))
			case tc.wantA != nil && !hasAll(got, tc.wantA...):
				t.Errorf("a's error %q does not say all of %q", got, tc.wantA)
			}
			// b is held to the end: it fails as the worker ends.
			if got, want := errorText(t, cb), died(tc.model); !hasAll(got, want...) {
				t.Errorf("b's error %q does not say all of %q", got, want)
			}
			if tc.log != "" && !bytes.Contains([]byte(fs.log.String()), []byte(tc.log)) {
				t.Errorf("the log does not say %q:\n%s", tc.log, fs.log.String())
			}
		})
	}
}

// TestFuzzFramingReadsBack: a fuzz input reads back as the messages it
// was framed from, so the seeds are what they say.
func TestFuzzFramingReadsBack(t *testing.T) {
	msgs := []wmsg{{fds: fdRegion | sizeMid, body: []byte{1, 2, 3}}, {body: nil}, {fds: fdMany, body: bytes.Repeat([]byte{9}, 300)}}
	got := unframe(frame(msgs...))
	if !slices.EqualFunc(got, msgs, func(a, b wmsg) bool { return a.fds == b.fds && bytes.Equal(a.body, b.body) }) {
		t.Errorf("unframe(frame(m)) = %v, want %v", got, msgs)
	}
	if got := unframe([]byte{0, 100}); len(got) != 1 || len(got[0].body) != 0 {
		t.Errorf("a length past the end: %v", got)
	}
}

// TestARequestWhileItsWorkerEndsFails: a request that reaches an instance
// while the server is still finding out how its worker ended (waiting for
// the process's exit status and crash report) fails at once with
// UNAVAILABLE; it is not taken for one the worker holds, which no one
// would ever answer.
func TestARequestWhileItsWorkerEndsFails(t *testing.T) {
	fs := newFakeServer(t)
	mod := fs.models["one"]
	local, remote, err := wire.Pair()
	if err != nil {
		t.Fatal(err)
	}
	conn, err := wire.NewConn(local)
	if err != nil {
		t.Fatal(err)
	}
	pr := newProcess(mod, &exec.Cmd{}, conn)
	close(pr.logDone)
	exited := pr.exited // open: the process has not been reaped yet
	mod.mu.Lock()
	mod.cur = pr
	mod.mu.Unlock()
	readEnd := make(chan struct{})
	go func() {
		defer close(readEnd)
		pr.read()
	}()
	remote.Close() // the worker is gone; its exit status is not in yet
	testenv.WaitUntil(t, "the server to take the worker for dead", func() bool {
		pr.mu.Lock()
		defer pr.mu.Unlock()
		return pr.dead
	})
	c := coretest.Infer(t, fs.srv, coretest.Request("one", "late", coretest.Int32Input("INPUT0", []int64{1}, 1)))
	if got := errorText(t, c); !hasAll(got, "model 'one' version 1: the worker process", "the model restarts") {
		t.Errorf("the request got %q, want the worker's end", got)
	}
	close(exited)
	<-readEnd
	testenv.WaitUntil(t, "no live request", func() bool { return fs.srv.LiveRequests() == 0 })
}

// TestACancelNeverOvertakesItsBatch: a client's cancellation reaches the
// worker after the batch its request is in, however close to the batch's
// dispatch it comes (here: at once, with the request's tensor in shared
// memory, which takes the server a while to write): a cancel for a key
// the worker has not been sent yet would be lost, and the backend would
// run the request as if nothing had happened.
func TestACancelNeverOvertakesItsBatch(t *testing.T) {
	fs := newFakeServer(t)
	r := fs.start(t, "dec", loadedAnswer(fs, "dec", nil))
	if !r.loaded {
		t.Fatal("the load failed")
	}
	big := make([]int32, 64<<10) // 256 KiB: past the inline bound
	var cs []*coretest.Collector
	for i := range 200 {
		ctx, cancel := context.WithCancel(context.Background())
		c := coretest.InferCtx(t, ctx, fs.srv, coretest.Request("dec", fmt.Sprint(i), coretest.Int32Input("INPUT0", []int64{int64(len(big))}, big...)))
		cancel()
		cs = append(cs, c)
		select { // it ran (its batch reached the worker), or was failed before
		case <-r.w.arrived:
			r.w.mu.Lock()
			ex := r.w.executions[len(r.w.executions)-1]
			r.w.mu.Unlock()
			r.sendAll([]wmsg{{body: responseMsg(ex.keys[0], nil, true)}, {body: keyMsg(msgReleased, ex.keys[0], uint64(core.ReleaseAll))},
				{body: keyMsg(msgFinished, ex.keys[0], 0)}, {body: executedMsg(ex.inst, nil)}})
			<-c.Done()
		case <-c.Done():
		}
	}
	r.w.mu.Lock()
	early := slices.Clone(r.w.early)
	r.w.mu.Unlock()
	if len(early) > 0 {
		t.Errorf("the worker was sent cancels of %d requests before their batches: keys %v", len(early), early)
	}
	r.end(t, cs...)
}
