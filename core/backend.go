package core

// BackendProvider loads the backends that run models: package loader for
// Triton-style shared libraries (its package doc is the whole lifecycle of
// such a backend), or a Go-native one in tests and embedders. Each method
// says when the server calls it.
//
// The calls that load and unload (BackendProvider.LoadModel,
// BackendModel.NewInstance, BackendInstance.Finalize, BackendModel.Finalize)
// are bounded by Options.BackendCallTimeout, and the Finalize calls by
// Stop's context as well. The server cannot interrupt a call that
// outlasts its bound: it stops waiting, leaving the call running on its
// goroutine, and keeps the lifecycle's order for whatever the call returns
// late. A model or instance created for a load that failed meanwhile is
// finalized once it is returned (instances before their model), and
// nothing more is created for that load; an unload's later Finalize calls
// follow once the late one returns. Implementations need not guard against
// either: they see the same calls, in the same order, only later.
type BackendProvider interface {
	// LoadModel initializes m in its backend, once per model version, when
	// the version loads. The backend may complete m's configuration
	// (Model.SetConfig) until LoadModel returns.
	LoadModel(m *Model) (BackendModel, error)
	// Close is called once, after every model was unloaded.
	Close() error
}

// BackendModel is a model version initialized in its backend.
type BackendModel interface {
	// NewInstance initializes one instance of the model, after LoadModel
	// and before any execution. Calls are serial unless
	// ParallelInstanceLoading says otherwise. If one fails, the instances
	// created so far are finalized, then the model, and the version does not
	// load; other models are unaffected.
	NewInstance(inst *Instance) (BackendInstance, error)
	// ParallelInstanceLoading reports whether NewInstance may be called
	// concurrently for this model's instances.
	ParallelInstanceLoading() bool
	// Finalize releases the model when the version unloads, after every
	// instance was finalized.
	Finalize() error
}

// InputMemory is implemented by a BackendModel whose backend reads its
// requests' inputs in memory the server shares with it (an isolated
// backend's worker process): a frontend may receive a large request
// straight into a buffer of that memory (Model.InputBuffer), whose
// inputs the backend layer then passes on where they lie rather than
// copying them. Any goroutine may call it.
type InputMemory interface {
	// InputBuffer returns a buffer of n bytes, or nil when there is none
	// to give (n too small or too large to be worth it, none free).
	InputBuffer(n int) InputBuffer
}

// InputBuffer is memory a request's input buffers lie in, from a model's
// InputMemory (Submission.InputBuffer).
type InputBuffer interface {
	// Bytes returns the buffer, for its taker to write; it stays valid
	// until Release.
	Bytes() []byte
	// Release gives the buffer back, once, when nothing reads it any
	// more: once its request finished (Submission.Finished), or was never
	// submitted. The backend layer keeps the memory for as long as its
	// own reader still uses it. Any goroutine may call it.
	Release()
}

// BackendInstance is one execution context of a model.
type BackendInstance interface {
	// Execute runs a batch of requests. It is never called concurrently for
	// one instance, but not always from the same goroutine (a request may
	// run on its submitter's, Submission.Inline). Returning nil passes ownership of every request to the
	// backend, which must release each one (Request.Release) and complete it
	// through its Responder. Returning an error keeps ownership with the
	// caller, which completes every request not yet released with that error.
	Execute(batch []*Request) error
	// Finalize releases the instance when the version unloads, once no
	// execution runs. Backends may still be sending responses from their own
	// threads while it runs.
	Finalize() error
}
