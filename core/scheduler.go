package core

import (
	"context"
	"sync"
)

// Scheduler decides which instance executes which requests of one model
// version, and when. Each version has its own, made when the version loads
// by Options.Schedulers (a SchedulerFactory); the server calls Enqueue for
// every request it accepts for the version, Requeue for every request the
// version's backend reschedules, Start once the version has loaded, and
// Stop when it unloads.
//
// The schedulers tritonhost has live in packages of their own: the dynamic
// batcher (core/dynbatch), the sequence batcher (core/seqbatch) and the
// ensemble scheduler (core/ensemble); core/scheduling's New picks one from
// the configuration. A scheduler runs a batch on an instance with
// Instance.Execute, never concurrently for one instance: from the
// instance's goroutine, or from any goroutine that holds the instance for
// the call (the dynamic batcher runs an idle instance's request on its
// submitter's goroutine, Submission.Inline).
type Scheduler interface {
	// Enqueue accepts r or returns why not. Accepting, it marks r queued
	// (Request.MarkQueued). It refuses with CodeUnavailable when it stops,
	// has no instance to run r on or its queue is full (the model's
	// max_queue_size), and with CodeInvalidArg when r breaks its rules (the
	// sequence batcher's: a correlation id, the START flag on the first
	// request of a sequence, a batch of one). A refused request was not
	// kept: the server hands the error to the client and counts the
	// request as rejected.
	Enqueue(r *Request) error
	// Requeue takes back a request the backend released with
	// ReleaseReschedule. Unlike Enqueue it is accepted while the scheduler
	// stops, until its workers have finished: a request already accepted
	// runs again rather than failing because its model unloads. An error
	// fails the request.
	Requeue(r *Request) error
	// Start launches the instances' goroutines.
	Start()
	// Stop refuses new requests and returns once every queued request has
	// run and every execution returned. When ctx ends first, the requests
	// still queued fail at once (UnloadedError), and Stop returns once the
	// running executions have (an ensemble, which has neither, cancels its
	// requests in flight and returns).
	Stop(ctx context.Context)
}

// SchedulerFactory makes the scheduler of model version m as m loads, once
// its instances exist (an ensemble has none), with srv the server loading
// it (an ensemble sends its steps there). An error means that the
// configuration cannot be served: the version does not load.
type SchedulerFactory func(srv *Server, m *Model) (Scheduler, error)

// The errors a scheduler gives when it cannot take or run a request, all
// CodeUnavailable.

// UnloadingError is Enqueue's error once the version unloads.
func UnloadingError(m *Model) error {
	return Errorf(CodeUnavailable, "model %q version %d is unloading", m.name, m.version)
}

// NoInstanceError is Enqueue's error when every instance is passive.
func NoInstanceError(m *Model) error {
	return Errorf(CodeUnavailable, "model %q version %d has no active instance", m.name, m.version)
}

// UnloadedError fails a queued request that will not run because its
// version unloaded first.
func UnloadedError(m *Model, r *Request) error {
	return Errorf(CodeUnavailable, "model %q version %d was unloaded before request %q ran", m.name, m.version, r.ID())
}

// UnloadedBeforeRerunError is Requeue's error once the workers have
// finished.
func UnloadedBeforeRerunError(m *Model, r *Request) error {
	return Errorf(CodeUnavailable, "model %q version %d was unloaded before request %q could run again", m.name, m.version, r.ID())
}

// What a scheduler does with a request, an instance and a model version.

// MarkQueued records that r entered its scheduler's queue: its queue time
// (ModelStatistics' Queue) starts now, and a traced request records
// QUEUE_START. It returns the time, a Nanotime value. Enqueue calls it
// once it accepts r. At the TENSORS level the trace records the inputs
// too.
func (r *Request) MarkQueued() uint64 {
	r.queueStart = Nanotime()
	if r.trace != nil {
		r.trace.Report(TraceQueueStart, r.queueStart)
		r.traceInputs()
	}
	return r.queueStart
}

// MarkRequeued records that r, rescheduled by its backend, entered the
// queue again: its queue time starts again (nothing is traced). Requeue
// calls it once it accepts r.
func (r *Request) MarkRequeued() { r.queueStart = Nanotime() }

// QueueStart returns when r last entered its scheduler's queue (MarkQueued,
// MarkRequeued), a Nanotime value.
func (r *Request) QueueStart() uint64 { return r.queueStart }

// SetQueueDeadline records when r's queue policy times it out (a Nanotime
// value; 0: never), for its scheduler alone: the dynamic batcher sets it
// as r enters its queue and reads it under its own lock, or once r left the
// queue. QueueDeadline returns it.
func (r *Request) SetQueueDeadline(d uint64) { r.queueDeadline = d }

// QueueDeadline returns what SetQueueDeadline recorded.
func (r *Request) QueueDeadline() uint64 { return r.queueDeadline }

// Expired reports whether r's timeout has passed: a scheduler no longer
// starts it.
func (r *Request) Expired() bool { return r.deadline != 0 && Nanotime() > r.deadline }

// LeaveQueue ends r's count among its version's pending requests (the
// queue size the metrics report) without executing it: an ensemble's
// request once its steps start. Instance.Execute and Fail do the same.
func (r *Request) LeaveQueue() { r.leaveQueue() }

// Fail completes a request that no backend holds (its scheduler did not
// run it, or an ensemble's): it counts as a failure of its version for
// reason, gets err as its final response and is released.
func (r *Request) Fail(reason FailureReason, err error) {
	r.model.stats.failure(r.requestStart, Nanotime(), reason)
	r.failAndRelease(err)
}

// FailureReasonOf is the reason a request that failed with err counts
// under: FailureCanceled for CodeCancelled, FailureOther otherwise.
func FailureReasonOf(err error) FailureReason { return failureReasonOf(err) }

// SetInputs replaces the inputs the backend sees: a scheduler that provides
// inputs itself (the sequence batcher's control and state inputs) calls it
// before r executes, never after. The request keeps in; the caller must
// not modify it afterwards.
func (r *Request) SetInputs(in []Input) { r.inputs = in }

// SchedulerData is what the scheduler that dispatches a request ties to it
// (Request.SetSchedulerData): one slot, set by one scheduler, so that a
// Request carries no field of any particular scheduler.
type SchedulerData struct {
	// States is the implicit state of the sequence run the request is
	// dispatched in (nil: the model keeps none). The backend reads and
	// updates it through the request (CheckStateOutput, UpdateState).
	States *StateRun
	// Own is the scheduler's own data (the sequence batcher keeps there the
	// sequence the request runs in); core never looks at it.
	Own any
}

// SchedulerData returns what r's scheduler tied to it with
// SetSchedulerData; nil when nothing.
func (r *Request) SchedulerData() *SchedulerData { return r.sched.Load() }

// SetSchedulerData ties d to r; the sequence batcher calls it when it
// dispatches r, before r executes. The caller must not modify d
// afterwards. Safe to call while other goroutines read it.
func (r *Request) SetSchedulerData(d *SchedulerData) { r.sched.Store(d) }

// Execute runs batch on the instance's backend, holding the device lock
// when the backend asked for one (ShareDeviceLocks); the requests leave
// their version's pending count first. When the backend returns an error,
// every request it did not release fails with it. A scheduler never calls
// Execute concurrently for one instance.
func (i *Instance) Execute(batch []*Request) { i.execute(batch) }

// ShareDeviceLocks gives the instances of one device a common lock when
// the backend chose TRITONBACKEND_EXECUTION_DEVICE_BLOCKING: then only one
// execution runs on a device at a time, as with Triton's per-device
// thread. The dynamic batcher calls it when it is made.
func (m *Model) ShareDeviceLocks() {
	db, ok := m.backend.(interface{ DeviceBlocking() bool })
	if !ok || !db.DeviceBlocking() {
		return
	}
	type device struct {
		kind InstanceKind
		id   int32
	}
	locks := map[device]*sync.Mutex{}
	for _, inst := range m.instances {
		d := device{inst.kind, inst.deviceID}
		if locks[d] == nil {
			locks[d] = &sync.Mutex{}
		}
		inst.deviceLock = locks[d]
	}
}
