package core

// Traces that their creator makes, rather than the server's Tracer
// (Submission.Trace): an application's own trace of a request it
// submits, and the child trace a backend spawns from the trace of the
// request it serves, for the request it makes of another model in turn, so
// that the trace of a request and of the requests made on its behalf form
// a tree, as Triton's do.

// NewOwnTrace returns a trace with a new id and the given parent id (0:
// none) for a request its creator submits with Submission.Trace
// (TRITONSERVER_InferenceTraceNew). Nobody receives it when its request
// finishes: the creator reads it then.
func NewOwnTrace(parentID uint64) *Trace {
	return &Trace{ID: traceIDs.Add(1), ParentID: parentID}
}

// SpawnChild returns a new trace whose parent is t: a new id, t's id as its
// parent id, and t's end, so that the child of a trace the server's Tracer
// sampled reaches the Tracer too when its own request finishes (a
// TraceStarter traces that request into the child: see adoptTrace). Its
// context starts empty, as in Triton.
func (t *Trace) SpawnChild() *Trace {
	return &Trace{ID: traceIDs.Add(1), ParentID: t.ID, finish: t.finish, spawnedOf: t}
}

// adoptTrace lets a TraceStarter trace a request submitted with a child
// trace spawned from a trace it started (a backend's request on behalf of
// the request it serves): the tracer records the request into the child
// (TraceStart.Trace), as a child of its parent. Other traces a submitter
// brings are left as they are.
func adoptTrace(tracer Tracer, m *Model, req *Submission) {
	ts, ok := tracer.(TraceStarter)
	parent := req.Trace.spawnedOf
	if !ok || parent == nil || parent.ext == nil || req.Trace.ext != nil {
		return
	}
	ts.StartTrace(TraceStart{Model: m.name, Version: m.version, RequestID: req.ID, Parent: parent,
		Context: req.TraceContext, Trace: req.Trace})
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
