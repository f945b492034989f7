package loader

import (
	"fmt"
	"path/filepath"
	"time"
	"unsafe"

	"tritonhost/abi"
	"tritonhost/core/serverlog"
)

// entryPoints are a backend's TRITONBACKEND_* functions, nil where the
// library does not export one.
type entryPoints struct {
	initialize, finalize, getAttribute unsafe.Pointer
	modelInit, modelFini               unsafe.Pointer
	instanceInit, instanceFini         unsafe.Pointer
	instanceReady, execute             unsafe.Pointer
}

func resolveEntryPoints(h unsafe.Pointer) entryPoints {
	return entryPoints{
		initialize:    dlsym(h, "TRITONBACKEND_Initialize"),
		finalize:      dlsym(h, "TRITONBACKEND_Finalize"),
		getAttribute:  dlsym(h, "TRITONBACKEND_GetBackendAttribute"),
		modelInit:     dlsym(h, "TRITONBACKEND_ModelInitialize"),
		modelFini:     dlsym(h, "TRITONBACKEND_ModelFinalize"),
		instanceInit:  dlsym(h, "TRITONBACKEND_ModelInstanceInitialize"),
		instanceFini:  dlsym(h, "TRITONBACKEND_ModelInstanceFinalize"),
		instanceReady: dlsym(h, "TRITONBACKEND_ModelInstanceReady"),
		execute:       dlsym(h, "TRITONBACKEND_ModelInstanceExecute"),
	}
}

// library is one opened backend shared library. Its fields are set once by
// openLibrary; refs and retired are guarded by the Provider's mutex.
type library struct {
	path    string
	name    string
	handle  unsafe.Pointer
	ep      entryPoints
	backend *abi.Backend
	attrs   *abi.BackendAttributes

	refs          int          // model versions using it
	retiredModels []*abi.Model // finalized, freed when the library closes
	retiredInsts  []*abi.Instance
}

// openLibrary loads a backend library and initializes the backend (steps 2
// and 3 of the package lifecycle).
func openLibrary(path, name string, cmdline map[string]string) (*library, error) {
	if err := loadStub(); err != nil {
		return nil, err
	}
	h, err := dlopen(path, false)
	if err != nil {
		return nil, fmt.Errorf("load backend library %s: %w", path, err)
	}
	lib := &library{path: path, name: name, handle: h, ep: resolveEntryPoints(h)}
	if lib.ep.execute == nil {
		_ = dlclose(h)
		return nil, fmt.Errorf("backend library %s does not export TRITONBACKEND_ModelInstanceExecute", path)
	}
	lib.backend = abi.NewBackend(name, filepath.Dir(path), cmdline)
	lib.attrs = abi.NewBackendAttributes()
	if lib.ep.initialize != nil {
		if err := abi.CallBackend(lib.ep.initialize, lib.backend); err != nil {
			lib.free()
			return nil, fmt.Errorf("backend library %s: TRITONBACKEND_Initialize failed: %w", path, err)
		}
	}
	if lib.ep.getAttribute != nil {
		if err := abi.CallBackendAttribute(lib.ep.getAttribute, lib.backend, lib.attrs); err != nil {
			lib.finalizeBackend(serverlog.Discard())
			lib.free()
			return nil, fmt.Errorf("backend library %s: TRITONBACKEND_GetBackendAttribute failed: %w", path, err)
		}
	}
	return lib, nil
}

func (lib *library) finalizeBackend(log *serverlog.Logger) {
	if lib.ep.finalize == nil {
		return
	}
	if err := abi.CallBackend(lib.ep.finalize, lib.backend); err != nil {
		log.Errorf("backend %q (%s): TRITONBACKEND_Finalize failed: %v", lib.name, lib.path, err)
	}
}

// close finalizes the backend and unloads the library (step 6). If its
// backend still holds requests after a grace period, the library stays
// mapped: its code may still be running on the backend's own threads.
func (lib *library) close(log *serverlog.Logger, grace time.Duration) {
	lib.finalizeBackend(log)
	deadline := time.Now().Add(grace)
	for lib.backend.LiveRequests() > 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if n := lib.backend.LiveRequests(); n > 0 {
		log.Warnf("backend %q (%s) still holds %d request(s) after finalization; keeping the library loaded", lib.name, lib.path, n)
		return
	}
	for _, m := range lib.retiredModels {
		m.Free()
	}
	for _, i := range lib.retiredInsts {
		i.Free()
	}
	lib.free()
}

func (lib *library) free() {
	lib.attrs.Free()
	lib.backend.Free()
	if err := dlclose(lib.handle); err != nil {
		// The mapping stays; nothing else to do.
		_ = err
	}
}
