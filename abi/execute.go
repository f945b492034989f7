package abi

/*
#include <stdlib.h>
#include <string.h>
#include "host.h"
#include "inprocess.h"

// Frees a block whose layout failed before any backend saw it: no handle
// was made for anything in it but the block itself. Unlike
// thost_request_free it keeps the block's context reference, which the
// caller drops once it holds no Go lock (the last one calls into Go).
static void
thost_request_discard(struct thost_request* req)
{
  struct thost_host* h = req->ctx->host;
  thost_handle_free(req->handle);
  free(req);
  thost_count(h, THOST_COUNT_REQUEST, -1);
}
*/
import "C"

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/tritonhost/tritonhost/core"
)

// heldRequest is the Go side of one request while a backend holds anything
// of it (its request block, a factory, an unsent response): the request
// context in C counts those, and its key leads here. When the context's
// last reference goes (thostRequestContextDone), the record goes too.
type heldRequest struct {
	key uint64
	req *core.Request
	lib *library

	mu     sync.Mutex
	ctx    *C.struct_thost_reqctx
	block  *C.struct_thost_request // the block the backend holds now, if any
	pinner runtime.Pinner          // pins block's large input buffers and BYTES parameter values
	dead   bool                    // context freed
}

var errOutOfMemory = errors.New("out of memory or handles for the request block")

// heldRequestFor returns the live record of r, creating one when r has
// none, with a new context and its first request block (blk), of size
// bytes, made in the same crossing; the context's one reference is the
// block's. With an existing record it adds a reference for the block
// about to be built, and blk is nil.
func (l *library) heldRequestFor(r *core.Request, size uintptr) (st *heldRequest, blk *C.struct_thost_request, err error) {
	if st, ok := r.BackendData().(*heldRequest); ok {
		st.mu.Lock()
		if !st.dead && st.tryRef() {
			st.mu.Unlock()
			return st, nil, nil
		}
		st.mu.Unlock()
	}
	st = &heldRequest{req: r, lib: l}
	st.key = l.host.requests.add(st)
	made := C.thost_reqctx_new_with_request(l.host.c, C.uint64_t(st.key), callerAllocator(r), C.size_t(size))
	st.ctx, blk = made.ctx, made.req
	if st.ctx == nil {
		l.host.requests.take(st.key)
		return nil, nil, errOutOfMemory
	}
	r.Hold() // until the context ends: thostRequestContextDone drops it
	l.held.Add(1)
	if r.BackendData() == nil {
		r.Responder().OnCancelArg(markHeldCancelled, r)
	}
	r.SetBackendData(st)
	if r.Cancelled() {
		st.markCancelled()
	}
	return st, blk, nil
}

// markHeldCancelled is the cancel hook of a request (a *core.Request): it
// marks the request's current context cancelled.
func markHeldCancelled(r any) {
	if cur, ok := r.(*core.Request).BackendData().(*heldRequest); ok {
		cur.markCancelled()
	}
}

// tryRef adds a reference to st's context unless the last one is already
// gone. dead alone cannot tell: the C side drops the last reference before
// thostRequestContextDone marks st dead, and then frees the context, so a
// reference taken in between would revive a context about to be freed.
func (st *heldRequest) tryRef() bool {
	refs := (*int32)(unsafe.Pointer(&st.ctx.refs))
	for {
		n := atomic.LoadInt32(refs)
		if n == 0 {
			return false
		}
		if atomic.CompareAndSwapInt32(refs, n, n+1) {
			return true
		}
	}
}

func (st *heldRequest) markCancelled() {
	st.mu.Lock()
	defer st.mu.Unlock()
	if !st.dead {
		atomic.StoreInt32((*int32)(unsafe.Pointer(&st.ctx.cancelled)), 1)
	}
}

// recordStats hands the statistics reports that the C side buffered for
// this request (a list, oldest first: the request's own and its
// responses') to the instances that made them.
// Reports of instances already retired are dropped. The list is the
// caller's (C memory, freed by the caller once this returns); nothing of it
// is kept. Takes no lock of its own.
func (st *heldRequest) recordStats(recs *C.struct_thost_rstat) {
	if recs == nil {
		return
	}
	p := st.req.Responder()
	var inst *core.Instance
	var instKey C.uint64_t
	for r := recs; r != nil; r = r.next {
		if inst == nil || r.instance_key != instKey {
			if inst = st.lib.host.instances.get(uint64(r.instance_key)); inst == nil {
				continue
			}
			instKey = r.instance_key
		}
		if r.kind == C.THOST_RSTAT_REQUEST {
			inst.ReportStatistics(st.req, r.has_error == 0, uint64(r.start), uint64(r.compute_output_start), uint64(r.compute_end), uint64(r.end))
			continue
		}
		outcome := core.ResponseSucceeded
		switch {
		case r.has_error != 0 && core.Code(r.error_code) == core.CodeCancelled:
			outcome = core.ResponseCancelled
		case r.has_error != 0:
			outcome = core.ResponseFailed
		}
		inst.ReportResponseStatistics(p, uint64(r.start), uint64(r.compute_output_start), uint64(r.end), outcome)
	}
}

// OnExecutingThread reports whether the calling thread is inside a
// backend's TRITONBACKEND_ModelInstanceExecute (of any instance): a
// backend calling back on the thread it was called on. It reads a
// thread-local variable of the C side, with no system call.
func OnExecutingThread() bool { return bool(C.thost_on_executing_thread()) }

// Execute implements loader.Instance: it builds a block for each request
// and calls TRITONBACKEND_ModelInstanceExecute with their handles. It is
// never called concurrently for one instance (the scratch space is the
// instance's), from any goroutine. If the backend returns an
// error, the blocks it did not release are freed and the error is returned:
// the caller then owns (fails and releases) the requests, as
// core.BackendInstance.Execute documents.
func (i *instanceHandle) Execute(batch []*core.Request) error {
	n := len(batch)
	if n == 0 {
		return nil
	}
	if n > i.cap {
		C.free(unsafe.Pointer(i.scratch))
		i.scratch = (*C.uint64_t)(C.malloc(C.size_t(n) * 8))
		i.cap = n
		if i.scratch == nil {
			i.cap = 0
			return errOutOfMemory
		}
	}
	handles := unsafe.Slice((*uint64)(unsafe.Pointer(i.scratch)), n)
	held, blocks := slices.Grow(i.held[:0], n)[:n], slices.Grow(i.blocks[:0], n)[:n]
	defer func() {
		clear(held)
		clear(blocks)
		i.held, i.blocks = held[:0], blocks[:0]
	}()
	for k, r := range batch {
		traceContext := blockTraceContext(r)
		size := requestBlockSize(r, traceContext)
		st, blk, err := i.lib.heldRequestFor(r, size)
		if err == nil {
			st.mu.Lock()
			blk, err = st.buildBlock(r, i, blk, size, traceContext)
			st.block = blk
			st.mu.Unlock()
			if err != nil {
				C.thost_reqctx_unref(st.ctx) // the reference taken for the block
			}
		}
		if err != nil {
			i.reclaim(held[:k], blocks[:k])
			return err
		}
		held[k], blocks[k] = st, blk
		handles[k] = uint64(blk.handle)
	}
	cerr := C.thost_call_execute(i.lib.ep.execute, i.c, i.scratch, C.uint32_t(n))
	if i.c.batch_count > 0 {
		if inst := i.lib.host.instances.get(i.key); inst != nil {
			recordBatchStats(inst, i.c)
		}
		i.c.batch_count = 0
	}
	if cerr == nil {
		return nil
	}
	err := takeError(cerr)
	i.reclaim(held, blocks)
	return err
}

// reclaim frees the blocks the backend did not release.
func (i *instanceHandle) reclaim(held []*heldRequest, blocks []*C.struct_thost_request) {
	for k, st := range held {
		st.mu.Lock()
		ours := st.block == blocks[k]
		if ours {
			st.block = nil
			st.pinner.Unpin()
		}
		st.mu.Unlock()
		if ours {
			// Statistics the backend reported for the request before it
			// failed are recorded before the caller fails the request.
			stats := C.thost_reqctx_take_stats(st.ctx)
			st.recordStats(stats)
			C.thost_rstats_free(stats)
			C.thost_request_free(blocks[k])
		}
	}
}

// arena lays out one allocation of end bytes: objects and strings appended
// in order, each 8-byte aligned. Its size comes from requestBlockSize, a
// pass over the request separate from the one that fills the block
// (fillBlock), so every allocation checks the end: a field that one pass
// has and the other lacks stops the layout before it writes past the
// allocation.
type arena struct {
	base     unsafe.Pointer
	off, end uintptr
}

// blockOverflow is what arena.alloc panics with when an allocation would
// pass the end; layBlock recovers it and returns an error.
type blockOverflow struct{ off, n, end uintptr }

func align8(n uintptr) uintptr { return (n + 7) &^ 7 }

func (a *arena) alloc(n uintptr) unsafe.Pointer {
	n = align8(n)
	if n > a.end-a.off {
		panic(blockOverflow{a.off, n, a.end})
	}
	p := unsafe.Add(a.base, a.off)
	a.off += n
	return p
}

func (a *arena) cstring(s string) *C.char {
	p := a.alloc(uintptr(len(s) + 1))
	b := unsafe.Slice((*byte)(p), len(s)+1)
	copy(b, s)
	b[len(s)] = 0
	return (*C.char)(p)
}

func strSize(s string) uintptr { return align8(uintptr(len(s) + 1)) }

// copiedInputMax is the largest input buffer that goes into the request
// block as a copy rather than pinned where it lies: copying a few hundred
// bytes costs less than pinning and unpinning them (a lookup of the
// buffer's span and its lock, each way), and most requests' tensors are
// that small. Larger buffers are pinned, never copied.
const copiedInputMax = 256

// copiedInput reports whether the block holds a copy of input buffer b
// (copiedInputMax) rather than b itself, pinned.
func copiedInput(b []byte) bool { return len(b) > 0 && len(b) <= copiedInputMax }

// errBlockLayout is the class of the error a request gets when the two
// passes over its request block disagree: a bug in this file, never the
// client's doing.
var errBlockLayout = core.Errorf(core.CodeInternal, "request block size and layout disagree")

// buildBlock lays out the request block of r for one execution by inst:
// one zeroed allocation of size bytes (requestBlockSize of r with
// traceContext) with its handle, the inputs, their shapes and buffers, the
// requested output names and the parameters. Input buffers are pinned,
// not copied, but for small ones (copiedInputMax). blk is the allocation
// when heldRequestFor made it with the context, else nil, and buildBlock
// makes it. The caller holds a context reference for the block
// (heldRequestFor) and st.mu; on an error the reference is still the
// caller's to drop.
func (st *heldRequest) buildBlock(r *core.Request, inst *instanceHandle, blk *C.struct_thost_request, size uintptr, traceContext string) (*C.struct_thost_request, error) {
	if blk == nil {
		if blk = C.thost_request_new(C.size_t(size), st.ctx); blk == nil {
			return nil, errOutOfMemory
		}
	}
	if err := st.layBlock(unsafe.Pointer(blk), size, r, inst, traceContext); err != nil {
		st.pinner.Unpin()
		C.thost_request_discard(blk)
		return nil, err
	}
	return blk, nil
}

// blockTraceContext returns the context string of r's trace ("" when r
// is not traced), read once for both passes over the block: another thread
// may set it meanwhile.
func blockTraceContext(r *core.Request) string {
	if trace := r.Trace(); trace != nil {
		return trace.Context()
	}
	return ""
}

// requestBlockSize is the size of r's request block with traceContext as
// its trace's context: what fillBlock allocates from its arena, field for
// field.
func requestBlockSize(r *core.Request, traceContext string) uintptr {
	inputs := r.Inputs()
	outputs := r.RequestedOutputs()
	params := r.Parameters()
	size := align8(C.sizeof_struct_thost_request) +
		align8(uintptr(len(inputs))*C.sizeof_struct_thost_input) +
		align8(uintptr(len(outputs))*unsafe.Sizeof(uintptr(0))) +
		align8(uintptr(len(params))*C.sizeof_struct_thost_param) +
		strSize(r.ID())
	if cid := r.CorrelationID(); cid.IsString {
		size += strSize(cid.String)
	}
	for i := range inputs {
		in := &inputs[i]
		size += align8(uintptr(len(in.Buffers))*C.sizeof_struct_thost_buffer) +
			align8(uintptr(len(in.Shape))*8) + strSize(in.Name)
		for _, b := range in.Buffers {
			if copiedInput(b) {
				size += align8(uintptr(len(b)))
			}
		}
	}
	for _, o := range outputs {
		size += strSize(o)
	}
	for i := range params {
		size += strSize(params[i].Name)
		if params[i].Type == core.ParamString {
			size += strSize(params[i].String)
		}
	}
	if trace := r.Trace(); trace != nil {
		size += align8(C.sizeof_struct_thost_trace) + strSize(trace.Model) + strSize(trace.RequestID) + strSize(traceContext)
	}
	return size
}

// layBlock fills the zeroed block of size bytes at base with r's request
// (fillBlock) and checks that the layout used exactly size bytes. When it
// did not, the block must not reach a backend: the error (class
// errBlockLayout) fails the request and names the offsets. A panic would
// say it as loudly in a test, but would end a serving process for a
// request that only this code got wrong; the error fails that request and
// the server goes on. Any test sending a request of that shape sees it.
func (st *heldRequest) layBlock(base unsafe.Pointer, size uintptr, r *core.Request, inst *instanceHandle, traceContext string) (err error) {
	a := arena{base: base, end: size}
	defer func() {
		if p := recover(); p != nil {
			o, ok := p.(blockOverflow)
			if !ok {
				panic(p)
			}
			err = fmt.Errorf("request %q for model %q: %w: %d bytes wanted at offset %d of %d",
				r.ID(), r.Model().Name(), errBlockLayout, o.n, o.off, o.end)
		}
	}()
	st.fillBlock(&a, r, inst, traceContext)
	if a.off != a.end {
		return fmt.Errorf("request %q for model %q: %w: %d bytes sized, %d laid out",
			r.ID(), r.Model().Name(), errBlockLayout, a.end, a.off)
	}
	return nil
}

// fillBlock lays r out through a: the block's own struct first, then what
// it points to.
func (st *heldRequest) fillBlock(a *arena, r *core.Request, inst *instanceHandle, traceContext string) {
	blk := (*C.struct_thost_request)(a.alloc(C.sizeof_struct_thost_request))
	inputs := r.Inputs()
	outputs := r.RequestedOutputs()
	params := r.Parameters()
	cid := r.CorrelationID()
	trace := r.Trace()

	blk.instance = inst.c
	blk.flags = C.uint32_t(r.Flags())
	blk.timeout_us = C.uint64_t(r.Timeout().Microseconds())
	blk.id = a.cstring(r.ID())
	if cid.IsString {
		blk.correlation_id_string = a.cstring(cid.String)
	} else {
		blk.correlation_id = C.uint64_t(cid.Uint)
	}

	blk.input_count = C.uint32_t(len(inputs))
	cins := unsafe.Slice((*C.struct_thost_input)(a.alloc(uintptr(len(inputs))*C.sizeof_struct_thost_input)), len(inputs))
	if len(inputs) > 0 {
		blk.inputs = &cins[0]
	}
	for i := range inputs {
		in := &inputs[i]
		ci := &cins[i]
		ci.datatype = C.TRITONSERVER_DataType(in.DataType)
		ci.name = a.cstring(in.Name)
		ci.dims_count = C.uint32_t(len(in.Shape))
		shape := unsafe.Slice((*int64)(a.alloc(uintptr(len(in.Shape))*8)), len(in.Shape))
		copy(shape, in.Shape)
		if len(shape) > 0 {
			ci.shape = (*C.int64_t)(unsafe.Pointer(&shape[0]))
		}
		ci.buffer_count = C.uint32_t(len(in.Buffers))
		ci.byte_size = C.uint64_t(in.ByteSize())
		bufs := unsafe.Slice((*C.struct_thost_buffer)(a.alloc(uintptr(len(in.Buffers))*C.sizeof_struct_thost_buffer)), len(in.Buffers))
		if len(bufs) > 0 {
			ci.buffers = &bufs[0]
		}
		for j, b := range in.Buffers {
			bufs[j].attrs.server_owned = true
			bufs[j].attrs.byte_size = C.uint64_t(len(b))
			bufs[j].attrs.memory_type = C.TRITONSERVER_MEMORY_CPU
			switch {
			case copiedInput(b):
				p := a.alloc(uintptr(len(b)))
				copy(unsafe.Slice((*byte)(p), len(b)), b)
				bufs[j].base = p
			case len(b) > 0:
				p := unsafe.Pointer(unsafe.SliceData(b))
				st.pinner.Pin(p)
				bufs[j].base = p
			}
		}
	}

	blk.output_count = C.uint32_t(len(outputs))
	names := unsafe.Slice((**C.char)(a.alloc(uintptr(len(outputs))*unsafe.Sizeof(uintptr(0)))), len(outputs))
	if len(names) > 0 {
		blk.output_names = &names[0]
	}
	for i, o := range outputs {
		names[i] = a.cstring(o)
	}

	blk.param_count = C.uint32_t(len(params))
	cps := unsafe.Slice((*C.struct_thost_param)(a.alloc(uintptr(len(params))*C.sizeof_struct_thost_param)), len(params))
	if len(cps) > 0 {
		blk.params = &cps[0]
	}
	for i := range params {
		p, cp := &params[i], &cps[i]
		cp.name = a.cstring(p.Name)
		cp._type = C.TRITONSERVER_ParameterType(p.Type)
		switch p.Type {
		case core.ParamString:
			cp.value = unsafe.Pointer(a.cstring(p.String))
		case core.ParamInt:
			cp.i = C.int64_t(p.Int)
			cp.value = unsafe.Pointer(&cp.i)
		case core.ParamBool:
			cp.b = C.bool(p.Bool)
			cp.value = unsafe.Pointer(&cp.b)
		case core.ParamDouble:
			cp.d = C.double(p.Double)
			cp.value = unsafe.Pointer(&cp.d)
		case core.ParamBytes:
			if len(p.Bytes) > 0 {
				b := unsafe.Pointer(unsafe.SliceData(p.Bytes))
				st.pinner.Pin(b)
				cp.value = b
			}
		}
	}
	if trace != nil {
		t := (*C.struct_thost_trace)(a.alloc(C.sizeof_struct_thost_trace))
		t.ctx = st.ctx
		t.id = C.uint64_t(trace.ID)
		t.parent_id = C.uint64_t(trace.ParentID)
		t.model_version = C.int64_t(trace.Version)
		t.model_name = a.cstring(trace.Model)
		t.request_id = a.cstring(trace.RequestID)
		t.context = a.cstring(traceContext)
		blk.trace = t
	}
}
