package core

// A forwarded request is one that another server validated and scheduled
// and hands to this one to execute as it stands: the worker process that
// hosts an isolated backend runs the batches of the server it serves. Its
// inputs are those the backend sees (reshaped, with the sequence batcher's
// controls and states), its responses go back unshaped and without the
// transaction policy (the serving server applies both), and what the
// backend does with it (releases, state updates) is reported through the
// hooks of ForwardedRequest.

// ForwardedRequest describes a request to execute as it stands
// (Model.NewForwarded).
type ForwardedRequest struct {
	// Submission carries the request's id, correlation id, flags,
	// priority, timeout, parameters and requested outputs, and its inputs
	// as the backend sees them. Finished is called as for any request.
	Submission *Submission
	// BatchSize is the request's batch size as its server counted it.
	BatchSize uint64
	// Respond receives every response the backend sends, as sent.
	Respond ResponseFunc
	// Released is called when the backend releases the request, with the
	// flags it released it with (ReleaseAll, or ReleaseReschedule: the
	// request is then over here, and its server queues it again).
	Released func(flags uint32)
	// UpdateState, if set, is called with each state value the backend
	// sets, once it was checked against the model's states.
	UpdateState func(name string, dtype DataType, shape []int64, data []byte)
	// States, if set, are the model's implicit states, whose input values
	// come with the inputs: the request checks the backend's updates
	// against them.
	States *States
}

// forwarding is what a forwarded request keeps of its ForwardedRequest.
type forwarding struct {
	released    func(flags uint32)
	updateState func(name string, dtype DataType, shape []int64, data []byte)
}

// NewForwarded returns a request of m built from f without the checks a
// client's request goes through (its server made them), ready for
// Instance.Execute. The caller executes it on one of m's instances.
func (m *Model) NewForwarded(f ForwardedRequest) *Request {
	sub := f.Submission
	r := &Request{
		model:        m,
		sub:          sub,
		inputs:       sub.Inputs,
		outputs:      sub.Outputs,
		batchSize:    max(f.BatchSize, 1),
		requestStart: Nanotime(),
		forward:      &forwarding{released: f.Released, updateState: f.UpdateState},
	}
	r.queueStart = r.requestStart
	r.responder = newResponder(m, sub.ID, sub.Outputs, sub.FreesResponses, f.Respond)
	r.responder.passThrough = true
	r.responder.maxTensor = m.tensorLimitOf(sub)
	r.responder.start = r.requestStart
	r.responder.req = r
	if f.States != nil {
		r.SetSchedulerData(&SchedulerData{States: f.States.NewRun()})
	}
	return r
}

// Cancel cancels the request as its client would: the backend's
// cancellation checks see it, and cancel hooks run.
func (p *Responder) Cancel() { p.cancel() }
