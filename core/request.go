package core

import (
	"sync"
	"sync/atomic"
	"time"
)

// Request release flags, as TRITONSERVER_RequestReleaseFlag.
const (
	ReleaseAll        uint32 = 1
	ReleaseReschedule uint32 = 2
)

// Request is an accepted, validated inference request as schedulers and
// backends see it. Its inputs carry the shapes the backend sees (with the
// configuration's reshape applied). The backend owns it from a successful
// Execute until it calls Release; its Responder outlives it.
type Request struct {
	model     *Model
	sub       *Submission // what the client submitted
	inputs    []Input
	outputs   []string
	batchSize uint64
	responder *Responder

	requestStart uint64 // Nanotime when Infer accepted it
	deadline     uint64 // Nanotime after which it may not start (0: none)
	queueStart   uint64 // Nanotime when it last entered a queue
	// queueDeadline is when its queue policy times it out (Nanotime; 0:
	// never): its scheduler's (SetQueueDeadline).
	queueDeadline uint64
	// The sequence its scheduler gave it (SetSequence), and what runs once
	// it is released for good (SetReleaseHook).
	seqID       CorrelationID
	seqFlags    uint32
	seqSet      bool
	releaseHook func()
	// forward is set for a request another server handed over
	// (Model.NewForwarded): its releases are reported there.
	forward *forwarding

	sched atomic.Pointer[SchedulerData] // what its scheduler tied to it (SetSchedulerData)

	queued atomic.Bool // counted in its model's pending requests

	// finishing: the request is finished once it is released for good and its
	// final response was delivered, in either order.
	mu         sync.Mutex
	released   bool
	finalSeen  bool
	holds      int // Hold calls not yet matched by Drop
	finished   atomic.Bool
	inflight   *inflightCounter // counts the request until it finishes (nil: nothing)
	onFinished func(*Request)
	stopCancel func() bool
	backend    any        // data the backend layer attaches (SetBackendData)
	stepOf     *StepTimes // an ensemble step's request: where its compute times add up
	trace      *Trace     // nil unless the request is traced
	// alone is the batch of the request alone (Batch); set when the
	// request is made, never modified after.
	alone [1]*Request
}

// Batch returns a batch of r alone, for a scheduler that executes one
// request at a time. It is r's own memory, allocated with r: the caller
// must not change its element.
func (r *Request) Batch() []*Request {
	if r.alone[0] != r {
		return []*Request{r}
	}
	return r.alone[:]
}

// Model returns the model version the request runs on.
func (r *Request) Model() *Model { return r.model }

// ID returns the client's request id ("" when none was given).
func (r *Request) ID() string { return r.sub.ID }

// CorrelationID returns the sequence correlation id: the client's, or the
// one its scheduler gave it (SetSequence).
func (r *Request) CorrelationID() CorrelationID {
	if r.seqSet {
		return r.seqID
	}
	return r.sub.CorrelationID
}

// Flags returns the request flags (sequence start/end): the client's, or
// those its scheduler set (SetSequence).
func (r *Request) Flags() uint32 {
	if r.seqSet {
		return r.seqFlags
	}
	return r.sub.Flags
}

// SetSequence gives r the correlation id and flags its scheduler chose,
// in place of the client's: the sequence batcher's iterative sequences,
// where the server makes the sequence. Only the scheduler calls it, while
// no backend holds r.
func (r *Request) SetSequence(id CorrelationID, flags uint32) {
	r.seqID, r.seqFlags, r.seqSet = id, flags, true
}

// SetReleaseHook has f run once the backend releases r for good
// (ReleaseAll), on the releasing thread, after r is marked released; its
// scheduler's, which must not call back into r. Set before r executes.
func (r *Request) SetReleaseHook(f func()) { r.releaseHook = f }

// Priority returns the request's priority (0: the model's default).
func (r *Request) Priority() uint64 { return r.sub.Priority }

// Timeout returns the client's timeout for the request (0: none).
func (r *Request) Timeout() time.Duration { return r.sub.Timeout }

// Parameters returns the request parameters the client sent.
func (r *Request) Parameters() []Parameter { return r.sub.Parameters }

// Origin returns Submission.Origin, what the submitter attached for
// the backend layer.
func (r *Request) Origin() any { return r.sub.Origin }

// InputBuffer returns Submission.InputBuffer, the buffer the request's
// inputs lie in (nil: none known).
func (r *Request) InputBuffer() InputBuffer { return r.sub.InputBuffer }

// SchedulerKey returns Submission.SchedulerKey, what the submitter left
// for the model's scheduler.
func (r *Request) SchedulerKey() any { return r.sub.SchedulerKey }

// Inline reports whether the submitter let the scheduler run r on its own
// goroutine (Submission.Inline).
func (r *Request) Inline() bool { return r.sub.Inline }

// Inputs returns the inputs with backend-visible shapes. The slice and its
// buffers must not be modified.
func (r *Request) Inputs() []Input { return r.inputs }

// RequestedOutputs returns the outputs to produce: those the client named, or
// every output of the model configuration when it named none.
func (r *Request) RequestedOutputs() []string { return r.outputs }

// BatchSize returns the request's batch size: its first dimension when the
// model batches, 1 otherwise.
func (r *Request) BatchSize() uint64 { return r.batchSize }

// Responder returns the object that delivers this request's responses.
func (r *Request) Responder() *Responder { return r.responder }

// Cancelled reports whether the client cancelled the request.
func (r *Request) Cancelled() bool { return r.responder.Cancelled() }

// BackendData returns what the backend layer attached with SetBackendData.
func (r *Request) BackendData() any {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.backend
}

// SetBackendData attaches data of the backend layer to the request (the abi
// package keeps its C handles there). Core never looks at it.
func (r *Request) SetBackendData(v any) {
	r.mu.Lock()
	r.backend = v
	r.mu.Unlock()
}

// Released reports whether the backend released the request for good.
func (r *Request) Released() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.released
}

// Release gives the request back to the server. With ReleaseAll the backend
// is done with it; with ReleaseReschedule it goes back into the model's queue
// to be executed again. Unknown flags, a second release, and rescheduling a
// request that received its final response fail with CodeInvalidArg, and the
// backend keeps the request.
//
// A backend that answers after releasing holds the request's responder with
// Hold first. A request released for good with no hold left and no final
// response has been abandoned: it fails with CodeInternal, so its client is
// answered.
func (r *Request) Release(flags uint32) error {
	if flags == 0 || flags&^(ReleaseAll|ReleaseReschedule) != 0 {
		return Errorf(CodeInvalidArg, "request %q of model %q: unknown release flags %#x", r.ID(), r.model.name, flags)
	}
	r.mu.Lock()
	if r.released {
		r.mu.Unlock()
		return Errorf(CodeInvalidArg, "request %q of model %q was already released", r.ID(), r.model.name)
	}
	if flags&ReleaseReschedule != 0 && r.forward != nil {
		// Its server queues it again; here it is over, unanswered.
		r.mu.Unlock()
		r.responder.close()
		if r.forward.released != nil {
			r.forward.released(flags)
		}
		r.mu.Lock()
		r.released = true
		r.mu.Unlock()
		return nil
	}
	if flags&ReleaseReschedule != 0 {
		r.mu.Unlock()
		if r.responder.Done() {
			return Errorf(CodeInvalidArg, "request %q of model %q already received its final response and cannot be rescheduled; release it with TRITONSERVER_REQUEST_RELEASE_ALL", r.ID(), r.model.name)
		}
		if err := r.model.requeue(r); err != nil {
			r.responder.Fail(err)
			r.markReleased()
		}
		return nil
	}
	r.mu.Unlock()
	r.markReleased()
	return nil
}

// Hold records that the backend keeps a way to answer the request after
// releasing it (in the C API, a response factory or an unsent response).
// Every Hold is matched by one Drop.
func (r *Request) Hold() {
	r.mu.Lock()
	r.holds++
	r.mu.Unlock()
}

// Drop ends a Hold. The last Drop of a request released for good that
// received no final response fails it (see Release).
func (r *Request) Drop() {
	r.mu.Lock()
	r.holds--
	abandoned := r.abandonedLocked()
	r.mu.Unlock()
	if abandoned {
		r.abandon()
	}
}

func (r *Request) abandonedLocked() bool { return r.released && r.holds == 0 && !r.finalSeen }

func (r *Request) abandon() {
	r.responder.Fail(Errorf(CodeInternal,
		"model %q released request %q and dropped every response factory without sending a final response",
		r.model.name, r.ID()))
}

// markReleased records the final release and finishes the request if its
// final response was already delivered, or fails it if it was abandoned.
func (r *Request) markReleased() {
	r.mu.Lock()
	r.released = true
	done := r.finalSeen
	abandoned := r.abandonedLocked()
	r.mu.Unlock()
	if r.forward != nil && r.forward.released != nil {
		r.forward.released(ReleaseAll)
	}
	if r.releaseHook != nil {
		r.releaseHook()
	}
	switch {
	case done:
		r.finish()
	case abandoned:
		r.abandon()
	}
}

// finalDelivered is the Responder's hook after the final response.
func (r *Request) finalDelivered() {
	r.mu.Lock()
	r.finalSeen = true
	done := r.released
	r.mu.Unlock()
	if done {
		r.finish()
	}
}

func (r *Request) finish() {
	if r.finished.Swap(true) {
		return
	}
	if r.trace != nil {
		r.traceEvent(TraceRequestEnd)
		r.trace.end()
	}
	if r.stopCancel != nil {
		r.stopCancel()
	}
	if r.inflight != nil {
		r.inflight.done()
	}
	if r.onFinished != nil {
		r.onFinished(r)
	}
	if r.sub.Finished != nil {
		r.sub.Finished()
	}
}

// failAndRelease completes a request the backend never owned (or gave back
// with an error) and releases it.
func (r *Request) failAndRelease(err error) {
	r.leaveQueue()
	r.responder.Fail(err)
	r.mu.Lock()
	already := r.released
	r.mu.Unlock()
	if !already {
		r.markReleased()
	}
}
