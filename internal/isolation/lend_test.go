package isolation

import (
	"bytes"
	"context"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/coretest"
	"github.com/tritonhost/tritonhost/internal/testenv"
	"github.com/tritonhost/tritonhost/internal/wire"
)

// TestOutputsInAFrozenRegionAreLent: a response whose outputs are in a
// region the worker froze reaches a caller that frees its responses over
// the region itself (no copy), which stays mapped until the caller frees
// the response; a region only sealed against resizing is copied, and
// unmapped at once.
func TestOutputsInAFrozenRegionAreLent(t *testing.T) {
	fs := newFakeServer(t)
	r := fs.start(t, "one", loadedAnswer(fs, "one", nil))
	if !r.loaded {
		t.Fatal("the load failed")
	}
	const size = 1 << 20
	want := make([]byte, size)
	for i := range want {
		want[i] = byte(i % 251)
	}
	for _, frozen := range []bool{true, false} {
		got := make(chan *core.Response, 1)
		sub := coretest.Request("one", "lend", coretest.Int32Input("INPUT0", []int64{2}, 7, 8))
		sub.FreesResponses = true
		if err := fs.srv.Infer(context.Background(), sub, func(resp *core.Response, final bool) { got <- resp }); err != nil {
			t.Fatal(err)
		}
		ex := r.w.awaitExecution(t)
		before := memfdMappings(t)
		region, err := wire.NewShared("outputs", size)
		if err != nil {
			t.Fatal(err)
		}
		copy(region.Bytes(), want)
		if frozen {
			err = region.Freeze()
		} else {
			err = region.Seal()
		}
		if err != nil {
			t.Fatal(err)
		}
		msg := regionResponse(ex.keys[0], 1, size)
		fds := []int{region.Fd()}
		_, _, err = r.w.out.WriteMsgUnix(wire.AppendFrame(nil, msg, 1), unix.UnixRights(fds...), nil)
		region.Close()
		if err != nil {
			t.Fatal(err)
		}
		var resp *core.Response
		select {
		case resp = <-got:
		case <-time.After(testenv.Patience):
			t.Fatal("no response")
		}
		if resp.Err != nil || len(resp.Outputs) != 1 || !bytes.Equal(resp.Outputs[0].Data, want) {
			t.Fatalf("frozen %v: the response: %v, %d outputs", frozen, resp.Err, len(resp.Outputs))
		}
		if (resp.Lent != nil) != frozen {
			t.Errorf("frozen %v: lent %v", frozen, resp.Lent != nil)
		}
		if frozen && memfdMappings(t) != before+1 {
			t.Errorf("the lent region is not mapped while the response lives: %d mappings, %d before", memfdMappings(t), before)
		}
		resp.Free()
		// A copied region goes once the reader is done with its message.
		testenv.WaitUntil(t, "the region unmapped", func() bool { return memfdMappings(t) == before })
		r.sendAll([]wmsg{{body: keyMsg(msgReleased, ex.keys[0], uint64(core.ReleaseAll))},
			{body: keyMsg(msgFinished, ex.keys[0], 0)}, {body: executedMsg(ex.inst, nil)}})
	}
	r.end(t)
}
