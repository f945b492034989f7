package grpcserver

import (
	"runtime"
	"sync/atomic"

	"google.golang.org/grpc/mem"

	"github.com/tritonhost/tritonhost/core"
)

// A response whose outputs a backend lent (core.Response.Lent) is sent
// from the backend's buffers: the encoded message refers to each large
// output where it is, and the response is freed when gRPC has let go of
// every one of them. gRPC counts references to the buffers of a message it
// sends (mem.Buffer) and returns each to its pool once its transport wrote
// it, or dropped it with the stream; a wireLoan is that pool. So the
// backend's memory lives until the socket write, and no longer.
//
// gRPC does not return the buffers of frames still queued when a
// connection breaks; a cleanup on each buffer's pool part frees the
// response once the garbage collector finds the part unreachable. Loans
// are bounded by the stream's queue (StreamLimits) and gRPC's write quota
// of each stream.

// wireLoan holds a response's lent memory for the buffers of one message.
type wireLoan struct {
	parts atomic.Int32 // buffers not yet returned
	resp  core.LentMemory
}

// loanPart is the pool of one buffer of a loan: its Put ends the buffer.
// It carries the buffer's slice, which mem.NewBuffer wants by pointer.
type loanPart struct {
	data    []byte
	loan    *wireLoan
	cleanup runtime.Cleanup
	done    atomic.Bool
}

// newWireLoan takes the lent memory of r for parts buffers (parts > 0).
func newWireLoan(r *core.Response, parts int) *wireLoan {
	w := &wireLoan{resp: r.Lent}
	r.Lent = nil
	w.parts.Store(int32(parts))
	return w
}

// buffer returns a gRPC buffer over data, which points into the loan's
// memory. data must be larger than gRPC's pooling threshold, or gRPC would
// not count its references (lendsBuffer).
func (w *wireLoan) buffer(data []byte) mem.Buffer {
	p := &loanPart{data: data, loan: w}
	p.cleanup = runtime.AddCleanup(p, (*wireLoan).release, w)
	return mem.NewBuffer(&p.data, p)
}

// release ends one part; the last frees the response.
func (w *wireLoan) release() {
	if w.parts.Add(-1) == 0 {
		w.resp.Free()
	}
}

// Get is never called: gRPC takes buffers from a pool only to copy into
// them, and a loan's buffers are never copied into. It allocates, as a
// pool must.
func (p *loanPart) Get(length int) *[]byte {
	b := make([]byte, length)
	return &b
}

// Put returns the part's buffer: gRPC is done with it.
func (p *loanPart) Put(*[]byte) {
	if p.done.Swap(true) {
		return
	}
	p.cleanup.Stop()
	p.loan.release()
}

// lendsBuffer reports whether an output of n bytes is sent from where it
// is rather than copied into the message.
func lendsBuffer(n int) bool {
	return n > inlineOutputBytes && !mem.IsBelowBufferPoolingThreshold(n)
}
