package core

// BackendProvider loads the backends that run models. The loader package
// implements it for Triton-style shared libraries; tests and embedders may
// provide Go-native backends.
//
// The lifecycle, which the server drives:
//  1. LoadModel once per model version: find and initialize the backend if
//     needed, then initialize the model (the backend may auto-complete its
//     configuration through Model.SetConfig during this call).
//  2. BackendModel.NewInstance once per instance, serially unless
//     ParallelInstanceLoading says otherwise.
//  3. BackendInstance.Execute from the instance's goroutine, never
//     concurrently for one instance.
//  4. On unload: BackendInstance.Finalize for every instance, then
//     BackendModel.Finalize. A backend is released once no model uses it.
//  5. Close after every model was unloaded.
//
// If step 2 fails for any instance, the instances created so far are
// finalized, then the model; the model does not load and others are
// unaffected.
type BackendProvider interface {
	LoadModel(m *Model) (BackendModel, error)
	Close() error
}

// BackendModel is a model initialized in its backend.
type BackendModel interface {
	// NewInstance initializes one instance of the model.
	NewInstance(inst *Instance) (BackendInstance, error)
	// ParallelInstanceLoading reports whether NewInstance may be called
	// concurrently for this model's instances.
	ParallelInstanceLoading() bool
	// Finalize releases the model; every instance was finalized before.
	Finalize() error
}

// BackendInstance is one execution context of a model.
type BackendInstance interface {
	// Execute runs a batch of requests. It is called from the instance's own
	// goroutine only. Returning nil passes ownership of every request to the
	// backend, which must release each one (Request.Release) and complete it
	// through its Responder. Returning an error keeps ownership with the
	// caller, which completes every request not yet released with that error.
	Execute(batch []*Request) error
	// Finalize releases the instance. Backends may still be sending
	// responses from their own threads while it runs.
	Finalize() error
}
