package loader

import (
	"fmt"

	"github.com/tritonhost/tritonhost/core"
)

// libraryModel is a model version initialized in a backend library.
type libraryModel struct {
	p   *Provider
	lib *sharedLibrary
	m   *core.Model
	h   Model
}

var _ core.BackendModel = (*libraryModel)(nil)

// NewInstance creates and initializes one instance (lifecycle step 3).
func (lm *libraryModel) NewInstance(inst *core.Instance) (core.BackendInstance, error) {
	h, err := lm.h.NewInstance(inst)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", lm.lib.path, err)
	}
	if err := h.Initialize(); err != nil {
		// Finalized all the same, as Triton does: a backend cleans up there
		// what its initialize got as far as creating.
		if ferr := h.Finalize(); ferr != nil {
			lm.p.log.Errorf("model %q instance %q: %s: TRITONBACKEND_ModelInstanceFinalize after a failed initialize: %v", lm.m.Name(), inst.Name(), lm.lib.path, ferr)
		}
		h.Retire()
		return nil, fmt.Errorf("%s: TRITONBACKEND_ModelInstanceInitialize failed: %w", lm.lib.path, err)
	}
	return &libraryInstance{lm: lm, h: h}, nil
}

// DeviceBlocking reports whether the backend chose
// TRITONBACKEND_EXECUTION_DEVICE_BLOCKING.
func (lm *libraryModel) DeviceBlocking() bool { return lm.lib.DeviceBlocking() }

// ParallelInstanceLoading reports the backend's attribute.
func (lm *libraryModel) ParallelInstanceLoading() bool { return lm.lib.attrs.ParallelInstanceLoading }

// Finalize finalizes and retires the model, then gives up its use of the
// library (lifecycle steps 5 and 6).
func (lm *libraryModel) Finalize() error {
	var err error
	if ferr := lm.h.Finalize(); ferr != nil {
		err = fmt.Errorf("model %q: %s: TRITONBACKEND_ModelFinalize failed: %w", lm.m.Name(), lm.lib.path, ferr)
	}
	lm.h.Retire()
	lm.p.release(lm.lib)
	return err
}

// libraryInstance is a model instance in a backend library.
type libraryInstance struct {
	lm *libraryModel
	h  Instance
}

var _ core.BackendInstance = (*libraryInstance)(nil)

// Execute runs TRITONBACKEND_ModelInstanceExecute (lifecycle step 4).
func (li *libraryInstance) Execute(batch []*core.Request) error { return li.h.Execute(batch) }

// Ready runs TRITONBACKEND_ModelInstanceReady where the backend exports it.
func (li *libraryInstance) Ready() error { return li.h.Ready() }

// Finalize finalizes and retires the instance (lifecycle step 5).
func (li *libraryInstance) Finalize() error {
	var err error
	if ferr := li.h.Finalize(); ferr != nil {
		err = fmt.Errorf("%s: TRITONBACKEND_ModelInstanceFinalize failed: %w", li.lm.lib.path, ferr)
	}
	li.h.Retire()
	return err
}
