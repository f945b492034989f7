package isolation

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/coretest"
	"github.com/tritonhost/tritonhost/internal/testenv"
	"github.com/tritonhost/tritonhost/internal/wire"
)

// TestInputPoolBounds: the pool reuses a returned region for inputs of a
// size it fits, never holds more than its bounds (a take past them when
// every region is lent gets none: the batch travels in a region of its
// own), evicts idle regions to make room (naming those the worker knows),
// refuses a return of a region the worker does not hold, and closes
// everything once closed, a region in flight once its sender is done.
func TestInputPoolBounds(t *testing.T) {
	fds, maps := openFDs(t), memfdMappings(t)
	p := newRegionPool("test", 2, 4<<20)
	take := func(total int) *pooledRegion {
		t.Helper()
		r, forget, err := p.take(total)
		if err != nil {
			t.Fatal(err)
		}
		if len(forget) != 0 {
			t.Fatalf("take(%d) evicted %v", total, forget)
		}
		return r
	}
	if r := take(minPooledBytes - 1); r != nil {
		t.Fatal("inputs under minPooledBytes got a pooled region")
	}
	a := take(1 << 20)
	p.lent(a)
	p.sent(a)
	b := take(1<<20 + 1) // a 2 MiB region
	p.lent(b)
	p.sent(b)
	if r := take(1 << 20); r != nil {
		t.Fatalf("a third region (%d) past a bound of two", r.id)
	}
	if n, bytes := p.counts(); n != 2 || bytes != 3<<20 {
		t.Fatalf("%d regions of %d bytes, want 2 of 3 MiB", n, bytes)
	}
	if err := p.returned(a.id); err != nil {
		t.Fatal(err)
	}
	if err := p.returned(a.id); err == nil {
		t.Fatal("a second return of one region was accepted")
	}
	if err := p.returned(99); err == nil {
		t.Fatal("a return of an unknown region was accepted")
	}
	if r := take(1 << 20); r != a {
		t.Fatalf("the returned region was not reused: got %v", r)
	}
	p.unsent(a, true) // its message did not go: idle again, still known
	// 3 MiB do not fit a's 1 MiB: a goes (the worker is told), b is lent.
	r, forget, err := p.take(3 << 20)
	if err != nil || r != nil || len(forget) != 1 || forget[0] != a.id {
		t.Fatalf("take(3 MiB) with b lent: region %v, forget %v, %v", r, forget, err)
	}
	if err := p.returned(b.id); err != nil {
		t.Fatal(err)
	}
	c, forget, err := p.take(3 << 20)
	if err != nil || c == nil || len(forget) != 1 || forget[0] != b.id {
		t.Fatalf("take(3 MiB) with b idle: region %v, forget %v, %v", c, forget, err)
	}
	if n, bytes := p.counts(); n != 1 || bytes != 3<<20 {
		t.Fatalf("%d regions of %d bytes, want 1 of 3 MiB", n, bytes)
	}
	// Closed while c is written: c goes once its sender is done.
	p.close()
	if n, _ := p.counts(); n != 1 {
		t.Fatalf("%d regions after close, want the one in flight", n)
	}
	c.region.Bytes()[0] = 1
	p.lent(c)
	p.sent(c)
	if n, bytes := p.counts(); n != 0 || bytes != 0 {
		t.Fatalf("%d regions of %d bytes after close", n, bytes)
	}
	if r := take(1 << 20); r != nil {
		t.Fatal("a closed pool made a region")
	}
	if openFDs(t) != fds || memfdMappings(t) != maps {
		t.Fatalf("%d descriptors and %d mappings after, %d and %d before", openFDs(t), memfdMappings(t), fds, maps)
	}
}

// TestLargeInputsReusePooledRegions: a worker that returns each batch's
// region gets every later batch of large inputs in it again, without its
// descriptor; one that returns none gets maxPooledRegions of them, then
// regions of their own; a return of a region it does not hold kills it;
// nothing stays open or mapped after.
func TestLargeInputsReusePooledRegions(t *testing.T) {
	fs := newFakeServer(t)
	r := fs.start(t, "one", loadedAnswer(fs, "one", nil))
	if !r.loaded {
		t.Fatal("the load failed")
	}
	big := func(id string) fakeExecution {
		t.Helper()
		sub := coretest.Request("one", id, coretest.Int32Input("INPUT0", []int64{1 << 18}))
		c := coretest.Infer(t, fs.srv, sub)
		ex := r.w.awaitExecution(t)
		r.sendAll([]wmsg{{body: responseMsg(ex.keys[0], &core.Response{}, true)},
			{body: keyMsg(msgReleased, ex.keys[0], uint64(core.ReleaseAll))},
			{body: keyMsg(msgFinished, ex.keys[0], 0)}, {body: executedMsg(ex.inst, nil)}})
		c.Wait(t)
		return ex
	}
	var first uint64
	for i := range 3 {
		ex := big("returned")
		if ex.region == 0 {
			t.Fatalf("batch %d: no pooled region", i)
		}
		if i == 0 {
			first = ex.region
		}
		if ex.region != first || ex.fds != map[bool]int{true: 1, false: 0}[i == 0] {
			t.Fatalf("batch %d: region %d with %d descriptors, want %d with the first only", i, ex.region, ex.fds, first)
		}
		r.sendAll([]wmsg{{body: keyMsg(msgReturned, ex.region, 0)}})
		// The server's reader takes the return in its own time: the next
		// batch may only count on it once it did.
		testenv.Eventually(func() bool {
			p := r.pr.inputs
			p.mu.Lock()
			defer p.mu.Unlock()
			c := p.regions[ex.region]
			return c != nil && c.state == regionIdle
		})
	}
	seen := map[uint64]bool{}
	for i := range maxPooledRegions + 2 {
		ex := big("kept")
		if i < maxPooledRegions {
			if ex.region == 0 || seen[ex.region] {
				t.Fatalf("kept batch %d: region %d, already seen %v", i, ex.region, seen[ex.region])
			}
			seen[ex.region] = true
		} else if ex.region != 0 || ex.fds != 1 {
			t.Fatalf("kept batch %d past the bound: region %d with %d descriptors, want one of its own", i, ex.region, ex.fds)
		}
	}
	if n, bytes := r.pr.inputs.counts(); n != maxPooledRegions || bytes > maxPooledBytes {
		t.Fatalf("%d pooled regions of %d bytes", n, bytes)
	}
	r.sendAll([]wmsg{{body: keyMsg(msgReturned, 1<<40, 0)}})
	testenv.WaitUntil(t, "the worker killed for a return of a region it does not hold", func() bool {
		return strings.Contains(fs.log.String(), "returned region 1099511627776, which it does not hold")
	})
	r.end(t)
}

// pooledResponse is a final response to request key whose output OUTPUT0
// is size bytes at offset 0 of the worker's pooled region id.
func pooledResponse(key, id uint64, size int64) []byte { return responseInRegion(key, id, 1, size) }

// pooledOutputSetup starts a fake worker of model "one" and makes the
// region of size bytes it writes its outputs into, sealed against
// shrinking as a worker's pool seals its regions.
func pooledOutputSetup(t *testing.T, size int) (*fakeServer, *run, *wire.Shared) {
	t.Helper()
	fs := newFakeServer(t)
	r := fs.start(t, "one", loadedAnswer(fs, "one", nil))
	if !r.loaded {
		t.Fatal("the load failed")
	}
	region, err := wire.NewShared("outputs", size)
	if err != nil {
		t.Fatal(err)
	}
	if err := region.Seal(); err != nil {
		t.Fatal(err)
	}
	return fs, r, region
}

// TestPooledOutputsAreLentOrCopiedAndReturned: outputs in a worker's
// pooled region reach a caller that frees its responses lent, the region
// going back to the worker (msgReturned) once the response is freed, and
// any other caller copied, the region going back at once; the server
// keeps the region mapped for the next response that names it without
// its descriptor, unmaps it when the worker says forget it, and kills a
// worker that would have it map more than maxPooledRegions.
func TestPooledOutputsAreLentOrCopiedAndReturned(t *testing.T) {
	const size = 1 << 20
	fs, r, region := pooledOutputSetup(t, size)
	send := func(msg []byte, fds ...int) {
		t.Helper()
		var oob []byte
		if len(fds) > 0 {
			oob = unix.UnixRights(fds...)
		}
		if _, _, err := r.w.out.WriteMsgUnix(wire.AppendFrame(nil, msg, len(fds)), oob, nil); err != nil {
			t.Fatal(err)
		}
	}
	returned := func() int {
		r.w.mu.Lock()
		defer r.w.mu.Unlock()
		for _, id := range r.w.returned {
			if id != 7 {
				t.Fatalf("region %d returned, want 7", id)
			}
		}
		return len(r.w.returned)
	}
	before := memfdMappings(t)
	for i, frees := range []bool{true, false, true, false} {
		region.Bytes()[0] = byte(i + 1)
		sub := coretest.Request("one", "pooled", coretest.Int32Input("INPUT0", []int64{2}, 7, 8))
		sub.FreesResponses = frees
		got := make(chan *core.Response, 1)
		if err := fs.srv.Infer(context.Background(), sub, func(resp *core.Response, final bool) { got <- resp }); err != nil {
			t.Fatal(err)
		}
		ex := r.w.awaitExecution(t)
		if i == 0 {
			send(pooledResponse(ex.keys[0], 7, size), region.Fd())
		} else {
			send(pooledResponse(ex.keys[0], 7, size))
		}
		var resp *core.Response
		select {
		case resp = <-got:
		case <-time.After(testenv.Patience):
			t.Fatal("no response")
		}
		if resp.Err != nil || len(resp.Outputs) != 1 || len(resp.Outputs[0].Data) != size || resp.Outputs[0].Data[0] != byte(i+1) {
			t.Fatalf("response %d: %v, %d outputs\n%s", i, resp.Err, len(resp.Outputs), fs.log.String())
		}
		if frees {
			if resp.Lent == nil {
				t.Fatalf("response %d, to a caller that frees it: its outputs were copied, not lent", i)
			}
			if n := returned(); n != i {
				t.Fatalf("response %d: the region was returned (%d times) before the response was freed", i, n)
			}
			resp.Free()
		} else {
			if resp.Lent != nil {
				t.Fatalf("response %d, to a caller that does not free it: its outputs were lent", i)
			}
			region.Bytes()[0] = 99 // the worker writes the region again: the copy stays
			if resp.Outputs[0].Data[0] != byte(i+1) {
				t.Fatalf("response %d: its outputs changed with the region", i)
			}
		}
		testenv.WaitUntil(t, "the region returned", func() bool { return returned() == i+1 })
		if memfdMappings(t) != before+1 {
			t.Fatalf("response %d: %d mappings, want the pooled region's only (%d before)", i, memfdMappings(t), before)
		}
		r.sendAll([]wmsg{{body: keyMsg(msgReleased, ex.keys[0], uint64(core.ReleaseAll))},
			{body: keyMsg(msgFinished, ex.keys[0], 0)}, {body: executedMsg(ex.inst, nil)}})
	}
	r.sendAll([]wmsg{{body: keyMsg(msgForget, 7, 0)}})
	testenv.WaitUntil(t, "the region unmapped", func() bool { return memfdMappings(t) == before })
	// Past the bound: the worker is killed.
	for id := range uint64(maxPooledRegions + 1) {
		sub := coretest.Request("one", "many", coretest.Int32Input("INPUT0", []int64{2}, 7, 8))
		c := coretest.Infer(t, fs.srv, sub)
		ex := r.w.awaitExecution(t)
		send(pooledResponse(ex.keys[0], id+10, size), region.Fd())
		if id < maxPooledRegions {
			c.Wait(t)
			r.sendAll([]wmsg{{body: keyMsg(msgReleased, ex.keys[0], uint64(core.ReleaseAll))},
				{body: keyMsg(msgFinished, ex.keys[0], 0)}, {body: executedMsg(ex.inst, nil)}})
		}
	}
	testenv.WaitUntil(t, "the worker killed for a region past the bound", func() bool {
		return strings.Contains(fs.log.String(), fmt.Sprintf("%d mapped", maxPooledRegions))
	})
	region.Close()
	r.end(t)
}

// TestALentPooledRegionOutlivesItsWorker: a worker that forgets a pooled
// region a response holds, or sends another response in it, is killed
// for the malformed message, and the held response's outputs stay mapped
// and readable until it is freed; then the region is unmapped.
func TestALentPooledRegionOutlivesItsWorker(t *testing.T) {
	for _, tc := range []struct {
		name  string
		abuse func(key uint64) []byte
		log   string
	}{
		{"forget", func(uint64) []byte { return keyMsg(msgForget, 7, 0) }, "which a response holds"},
		{"reuse", func(key uint64) []byte { return pooledResponse(key, 7, 1<<20) }, "which the server holds"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const size = 1 << 20
			fs, r, region := pooledOutputSetup(t, size)
			defer region.Close()
			region.Bytes()[size-1] = 42
			before := memfdMappings(t)
			sub := coretest.Request("one", "held", coretest.Int32Input("INPUT0", []int64{2}, 7, 8))
			sub.FreesResponses = true
			got := make(chan *core.Response, 1)
			if err := fs.srv.Infer(context.Background(), sub, func(resp *core.Response, final bool) {
				if resp != nil {
					got <- resp
				}
			}); err != nil {
				t.Fatal(err)
			}
			ex := r.w.awaitExecution(t)
			msg := pooledResponse(ex.keys[0], 7, size)
			if _, _, err := r.w.out.WriteMsgUnix(wire.AppendFrame(nil, msg, 1), unix.UnixRights(region.Fd()), nil); err != nil {
				t.Fatal(err)
			}
			var resp *core.Response
			select {
			case resp = <-got:
			case <-time.After(testenv.Patience):
				t.Fatal("no response")
			}
			if resp.Lent == nil {
				t.Fatal("the response's outputs were not lent")
			}
			second := coretest.Infer(t, fs.srv, coretest.Request("one", "second", coretest.Int32Input("INPUT0", []int64{2}, 7, 8)))
			ex2 := r.w.awaitExecution(t)
			r.sendAll([]wmsg{{body: tc.abuse(ex2.keys[0])}})
			testenv.WaitUntil(t, "the worker killed", func() bool { return strings.Contains(fs.log.String(), tc.log) })
			second.Wait(t)
			if got := resp.Outputs[0].Data[size-1]; got != 42 {
				t.Fatalf("the held output reads %d, want 42", got)
			}
			if memfdMappings(t) != before+1 {
				t.Fatalf("%d mappings while the response holds the region, want %d", memfdMappings(t), before+1)
			}
			resp.Free()
			testenv.WaitUntil(t, "the region unmapped", func() bool { return memfdMappings(t) == before })
		})
	}
}

// TestReceivedInputsReachTheWorkerWhereTheyLie: a request received into
// its model's input buffer (core.Model.InputBuffer) reaches the worker in
// that region, its input where it lies, with nothing copied; the region
// is reused (without its descriptor) only once the request's buffer was
// released and the worker returned it; an input outside the buffer is
// copied; a buffer held across the worker's death is closed when
// released, leaving nothing open or mapped.
func TestReceivedInputsReachTheWorkerWhereTheyLie(t *testing.T) {
	fs := newFakeServer(t)
	r := fs.start(t, "one", loadedAnswer(fs, "one", nil))
	if !r.loaded {
		t.Fatal("the load failed")
	}
	m, err := fs.srv.Model("one", 0)
	if err != nil {
		t.Fatal(err)
	}
	if b := m.InputBuffer(minPooledBytes - 1); b != nil {
		t.Error("a buffer for a message under minPooledBytes")
	}
	const n = 1 << 18 // INT32 elements: 1 MiB
	type received struct {
		buf  core.InputBuffer
		data []byte
		c    *coretest.Collector
	}
	// receive places request id's input at byte at of a new buffer, or in
	// memory of its own (outside).
	receive := func(id string, at int, outside bool) received {
		t.Helper()
		buf := m.InputBuffer(at + 4*n + 100)
		if buf == nil {
			t.Fatal("no input buffer")
		}
		data := buf.Bytes()[at : at+4*n]
		if outside {
			data = make([]byte, 4*n)
		}
		for i := range data {
			data[i] = byte(i*7 + at)
		}
		sub := coretest.Request("one", id, core.NewInput("INPUT0", core.TypeInt32, []int64{n}, data))
		sub.InputBuffer, sub.Finished = buf, buf.Release
		return received{buf, data, coretest.Infer(t, fs.srv, sub)}
	}
	finish := func(ex fakeExecution, c *coretest.Collector) {
		t.Helper()
		r.sendAll([]wmsg{{body: responseMsg(ex.keys[0], &core.Response{}, true)},
			{body: keyMsg(msgReleased, ex.keys[0], uint64(core.ReleaseAll))},
			{body: keyMsg(msgFinished, ex.keys[0], 0)}, {body: executedMsg(ex.inst, nil)}})
		c.Wait(t)
	}
	regionOf := func(b core.InputBuffer) uint64 { return b.(*inputLease).r.id }
	state := func(id uint64) (regionUse, bool) {
		p := r.pr.inputs
		p.mu.Lock()
		defer p.mu.Unlock()
		c := p.regions[id]
		if c == nil {
			return -1, false
		}
		return c.state, c.leased
	}
	check := func(what string, ex fakeExecution, region uint64, fds, at int, data []byte) {
		t.Helper()
		if ex.region != region || ex.fds != fds || len(ex.inputs) != 1 || len(ex.inputs[0]) != 1 {
			t.Fatalf("%s: region %d with %d descriptors and inputs %d, want region %d with %d", what, ex.region, ex.fds, len(ex.inputs), region, fds)
		}
		if in := ex.inputs[0][0]; (fds == 1 && in.at != at) || !bytes.Equal(in.data, data) {
			t.Fatalf("%s: the input at %d (want %d), its bytes equal: %v", what, in.at, at, bytes.Equal(in.data, data))
		}
	}

	a := receive("a", 100, false)
	exA := r.w.awaitExecution(t)
	first := regionOf(a.buf)
	check("a", exA, first, 1, 100, a.data)
	finish(exA, a.c)
	// Finished released the buffer; the worker still holds the region.
	testenv.WaitUntil(t, "a's buffer released", func() bool { _, leased := state(first); return !leased })
	if st, _ := state(first); st != regionLent {
		t.Fatalf("region %d is in state %d while the worker holds it", first, st)
	}
	b := receive("b", 0, false)
	if regionOf(b.buf) == first {
		t.Fatal("b was given the region the worker holds")
	}
	exB := r.w.awaitExecution(t)
	check("b", exB, regionOf(b.buf), 1, 0, b.data)
	finish(exB, b.c)

	r.sendAll([]wmsg{{body: keyMsg(msgReturned, first, 0)}, {body: keyMsg(msgReturned, regionOf(b.buf), 0)}})
	testenv.WaitUntil(t, "both regions returned", func() bool {
		s1, l1 := state(first)
		s2, l2 := state(regionOf(b.buf))
		return s1 == regionIdle && s2 == regionIdle && !l1 && !l2
	})
	again := receive("again", 4096, false)
	exAgain := r.w.awaitExecution(t)
	if regionOf(again.buf) != first && regionOf(again.buf) != regionOf(b.buf) {
		t.Fatalf("a returned region was not reused: %d", regionOf(again.buf))
	}
	check("again", exAgain, regionOf(again.buf), 0, 4096, again.data)
	finish(exAgain, again.c)
	r.sendAll([]wmsg{{body: keyMsg(msgReturned, regionOf(again.buf), 0)}})

	out := receive("outside", 0, true)
	exOut := r.w.awaitExecution(t)
	if exOut.region == regionOf(out.buf) {
		t.Fatal("an input outside its request's buffer was sent as lying in it")
	}
	if len(exOut.inputs) != 1 || !bytes.Equal(exOut.inputs[0][0].data, out.data) {
		t.Fatal("the copied input's bytes differ")
	}
	finish(exOut, out.c)

	held := m.InputBuffer(2 << 20)
	if held == nil {
		t.Fatal("no input buffer")
	}
	r.w.close()
	testenv.WaitUntil(t, "the worker's pool closed", func() bool {
		p := r.pr.inputs
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.closed
	})
	held.Release()
	held.Release() // a second release does nothing
	r.end(t)
}
