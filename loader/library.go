package loader

import "github.com/tritonhost/tritonhost/core"

// Opener opens backend shared libraries (step 1 of the package lifecycle).
// Package abi implements it.
type Opener interface {
	// Open loads the library at path for the backend named name and creates
	// its TRITONBACKEND_Backend with config as its --backend-config
	// settings. It runs none of the backend's code.
	Open(path, name string, config map[string]string) (Library, error)
}

// Library is one opened backend library and its backend. The loader calls
// Initialize, Attributes, Finalize and Close once each, in the lifecycle's
// order; NewModel may be called concurrently for different models.
type Library interface {
	// Initialize runs TRITONBACKEND_Initialize, if the library exports it.
	Initialize() error
	// Attributes runs TRITONBACKEND_GetBackendAttribute, if the library
	// exports it, and returns what the backend set.
	Attributes() (Attributes, error)
	// DeviceBlocking reports whether the backend chose
	// TRITONBACKEND_EXECUTION_DEVICE_BLOCKING.
	DeviceBlocking() bool
	// NewModel creates the TRITONBACKEND_Model of m without initializing it;
	// autoComplete is what TRITONBACKEND_ModelAutoCompleteConfig reports.
	NewModel(m *core.Model, autoComplete bool) (Model, error)
	// Finalize runs TRITONBACKEND_Finalize, if the library exports it.
	Finalize() error
	// HeldRequests returns how many requests of the library's models the
	// backend still holds anything of (a request, a response factory, an
	// unsent response).
	HeldRequests() int64
	// Close frees the backend's handles, and those of its models and
	// instances, and unloads the library.
	Close() error
}

// Model is one model version's handle in its backend library.
type Model interface {
	// Initialize runs TRITONBACKEND_ModelInitialize, if exported.
	Initialize() error
	// NewInstance creates the TRITONBACKEND_ModelInstance of inst without
	// initializing it.
	NewInstance(inst *core.Instance) (Instance, error)
	// Finalize runs TRITONBACKEND_ModelFinalize, if exported.
	Finalize() error
	// Retire makes the model's handle unusable: a backend thread that still
	// uses it gets an error. Its memory stays until Library.Close.
	Retire()
}

// Instance is one model instance's handle in its backend library.
type Instance interface {
	// Initialize runs TRITONBACKEND_ModelInstanceInitialize, if exported.
	Initialize() error
	// Ready runs TRITONBACKEND_ModelInstanceReady, if exported.
	Ready() error
	// Execute runs TRITONBACKEND_ModelInstanceExecute with the batch, as
	// core.BackendInstance.Execute documents. Only from the instance's
	// goroutine.
	Execute(batch []*core.Request) error
	// Finalize runs TRITONBACKEND_ModelInstanceFinalize, if exported.
	Finalize() error
	// Retire makes the instance's handle unusable; see Model.Retire.
	Retire()
}

// Attributes are what a backend sets in TRITONBACKEND_GetBackendAttribute.
type Attributes struct {
	// ParallelInstanceLoading lets the instances of one model initialize
	// concurrently.
	ParallelInstanceLoading bool
	// PreferredGroups are the instance groups the backend prefers when a
	// model's configuration names none.
	PreferredGroups []PreferredGroup
}

// PreferredGroup is one instance group a backend prefers.
type PreferredGroup struct {
	Kind      core.InstanceKind
	Count     uint64
	DeviceIDs []uint64
}
