package grpcserver

import (
	"bytes"
	"errors"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/tritonhost/tritonhost/core"
	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
	"github.com/tritonhost/tritonhost/internal/protocol"
	"github.com/tritonhost/tritonhost/internal/sendqueue"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// loans counts memory lent to responses and not yet freed; a second Free of
// one loan fails the test.
type loans struct {
	t   *testing.T
	out atomic.Int64
}

type loan struct {
	l     *loans
	freed atomic.Bool
}

func (l *loan) Free() {
	if l.freed.Swap(true) {
		l.l.t.Error("lent memory freed twice")
		return
	}
	l.l.out.Add(-1)
}

// lend gives r a loan.
func (ls *loans) lend(r *core.Response) *core.Response {
	ls.out.Add(1)
	r.Lent = &loan{l: ls}
	return r
}

// wait waits for every loan to be freed, collecting garbage if gc is set.
func (ls *loans) wait(gc bool) {
	ls.t.Helper()
	if !testenv.Eventually(func() bool {
		if gc {
			runtime.GC()
		}
		return ls.out.Load() == 0
	}) {
		ls.t.Fatalf("%d loans never freed", ls.out.Load())
	}
}

func lentResponse(ls *loans, sizes ...int) *core.Response {
	r := &core.Response{}
	for i, n := range sizes {
		r.Outputs = append(r.Outputs, core.Output{Name: "OUT" + string(rune('A'+i)), DataType: core.TypeUint8,
			Shape: []int64{int64(n)}, Data: bytes.Repeat([]byte{byte(i + 1)}, n)})
	}
	return ls.lend(r)
}

func TestLentMemoryIsFreedWhenGRPCLetsGoOfTheLastBuffer(t *testing.T) {
	t.Parallel()
	ls := &loans{t: t}
	r := lentResponse(ls, 8, inlineOutputBytes+1, 3*inlineOutputBytes)
	want := &pb.ModelStreamInferResponse{InferResponse: responseMessage(responseHeader{model: "m"}, r)}
	want.InferResponse.Parameters = map[string]*pb.InferParameter{protocol.ParamFinalResponse: boolP(true)}
	large := &r.Outputs[2].Data[0]
	msg := encodeResponse(responseHeader{model: "m"}, r, isFinal, true, "")
	if r.Lent != nil {
		t.Error("the response kept its loan: the message should hold it")
	}
	if len(msg.bufs) != 4 || &msg.bufs[3].ReadOnlyData()[0] != large {
		t.Fatalf("the large outputs were copied: %d buffers", len(msg.bufs))
	}
	got := new(pb.ModelStreamInferResponse)
	if err := proto.Unmarshal(msg.bufs.Materialize(), got); err != nil || !proto.Equal(got, want) {
		t.Fatalf("decoded %v (%v), want %v", got, err, want)
	}
	// gRPC takes a reference for its transport, and the sender drops its
	// own: the memory stays until the transport lets go.
	msg.bufs.Ref()
	msg.bufs.Free()
	if ls.out.Load() != 1 {
		t.Fatal("lent memory freed while gRPC still held a buffer")
	}
	msg.bufs.Free()
	if ls.out.Load() != 0 {
		t.Fatal("lent memory not freed when gRPC let go")
	}
}

func TestLentMemoryOfCopiedOutputsIsFreedAtOnce(t *testing.T) {
	t.Parallel()
	ls := &loans{t: t}
	msg := encodeResponse(responseHeader{model: "m"}, lentResponse(ls, 4, inlineOutputBytes), notFinal, true, "")
	if ls.out.Load() != 0 {
		t.Error("a message that copied every output kept the loan")
	}
	msg.free() // nothing lent: frees nothing
}

func TestLentMemoryDroppedWithoutFreeIsFreedByTheCollector(t *testing.T) {
	t.Parallel()
	ls := &loans{t: t}
	// As gRPC drops the frames of a broken connection: neither sent nor
	// freed.
	msg := encodeResponse(responseHeader{model: "m"}, lentResponse(ls, 2*inlineOutputBytes, 2*inlineOutputBytes), notFinal, true, "")
	if ls.out.Load() != 1 {
		t.Fatal("loan freed early")
	}
	runtime.KeepAlive(msg)
	msg = nil
	ls.wait(true)
}

func TestSendQueueFreesWhatItNeverSends(t *testing.T) {
	t.Parallel()
	ls := &loans{t: t}
	lentEvent := func() streamEvent {
		return streamEvent{msg: encodeResponse(responseHeader{}, lentResponse(ls, 2*inlineOutputBytes), notFinal, true, "")}
	}
	q := sendqueue.New(1, 1<<20, 20*time.Millisecond, streamEvent.size, streamEvent.free)
	done := make(chan struct{})
	if err := q.Push(lentEvent(), done); err != nil {
		t.Fatal(err)
	}
	if err := q.Push(lentEvent(), done); !errors.Is(err, sendqueue.ErrStalled) {
		t.Fatalf("push into a full queue: %v", err)
	}
	if ls.out.Load() != 1 {
		t.Errorf("after a stalled push: %d loans, want the queued one", ls.out.Load())
	}
	q.Close()
	if ls.out.Load() != 0 {
		t.Errorf("close left %d loans", ls.out.Load())
	}
	if err := q.Push(lentEvent(), done); !errors.Is(err, sendqueue.ErrEnded) {
		t.Fatalf("push into a closed queue: %v", err)
	}
	if ls.out.Load() != 0 {
		t.Errorf("a push into a closed queue kept its loan")
	}
	close(done)
}
