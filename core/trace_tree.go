package core

// Traces that their creator makes, rather than the server's Tracer
// (InferenceRequest.Trace): an application's own trace of a request it
// submits, and the child trace a backend spawns from the trace of the
// request it serves, for the request it makes of another model in turn, so
// that the trace of a request and of the requests made on its behalf form
// a tree, as Triton's do.

// NewTrace returns a trace with a new id and the given parent id (0: none)
// for a request its creator submits with InferenceRequest.Trace. Nobody
// receives it when its request finishes: the creator reads it then.
func NewTrace(parentID uint64) *Trace {
	return &Trace{ID: traceIDs.Add(1), ParentID: parentID}
}

// SpawnChild returns a new trace whose parent is t: a new id, t's id as its
// parent id, and t's end, so that the child of a trace the server's Tracer
// sampled reaches the Tracer too when its own request finishes. Its
// context starts empty, as in Triton.
func (t *Trace) SpawnChild() *Trace {
	return &Trace{ID: traceIDs.Add(1), ParentID: t.ID, finish: t.finish}
}

// Context returns the trace's context: a string its creator or a backend
// set (Triton's trace context, OpenTelemetry's propagated context or the
// names of custom activities, as JSON), "" when none was set.
func (t *Trace) Context() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.context
}

// SetContext replaces the trace's context.
func (t *Trace) SetContext(context string) {
	t.mu.Lock()
	t.context = context
	t.mu.Unlock()
}
