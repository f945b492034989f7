package abi

/*
#include <stdlib.h>
#include "plugins.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"sync"
	"unsafe"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/loader"
)

// A repository agent library (tritonrepoagent.h): its entry points, only
// TRITONREPOAGENT_ModelAction required, and the TRITONREPOAGENT_Agent the
// host made for it. The host functions an agent calls are in
// repoagent_api.c; everything they read is copied into C when the agent
// model is made, so they never cross into Go.

// repoAgent is an opened agent library; it implements
// loader.RepoAgentLibrary.
type repoAgent struct {
	host                 *Host
	path                 string
	dl                   unsafe.Pointer
	init, fini           unsafe.Pointer
	modelInit, modelFini unsafe.Pointer
	action               unsafe.Pointer
	c                    *C.struct_thost_repoagent
}

var (
	_ loader.RepoAgentOpener  = (*Host)(nil)
	_ loader.RepoAgentLibrary = (*repoAgent)(nil)
	_ core.RepoAgentModel     = (*repoAgentModel)(nil)
)

// OpenRepoAgent implements loader.RepoAgentOpener: it loads the
// libtritonserver.so stub once per process, then the library with
// RTLD_NOW|RTLD_LOCAL, and resolves its entry points.
func (h *Host) OpenRepoAgent(path, name string) (loader.RepoAgentLibrary, error) {
	if err := loadStub(); err != nil {
		return nil, err
	}
	dl, err := dlopen(path)
	if err != nil {
		return nil, err
	}
	a := &repoAgent{host: h, path: path, dl: dl,
		init: dlsym(dl, "TRITONREPOAGENT_Initialize"), fini: dlsym(dl, "TRITONREPOAGENT_Finalize"),
		modelInit: dlsym(dl, "TRITONREPOAGENT_ModelInitialize"), modelFini: dlsym(dl, "TRITONREPOAGENT_ModelFinalize"),
		action: dlsym(dl, "TRITONREPOAGENT_ModelAction")}
	if a.action == nil {
		_ = dlclose(dl)
		return nil, fmt.Errorf("%s does not export TRITONREPOAGENT_ModelAction", path)
	}
	a.c = C.thost_repoagent_new(h.c, cstr(name), C.size_t(len(name)))
	if a.c == nil {
		_ = dlclose(dl)
		return nil, errors.New("out of memory creating the agent's handle")
	}
	return a, nil
}

// Initialize implements loader.RepoAgentLibrary.
func (a *repoAgent) Initialize() error {
	if a.init == nil {
		return nil
	}
	return takeError(C.thost_call_repoagent(a.init, a.c))
}

// Finalize implements loader.RepoAgentLibrary.
func (a *repoAgent) Finalize() error {
	if a.fini == nil {
		return nil
	}
	return takeError(C.thost_call_repoagent(a.fini, a.c))
}

// Close implements loader.RepoAgentLibrary: the agent's handle is freed,
// then the library is unloaded. Its agent models were freed before (the
// loader closes an agent after its last model's Finalize).
func (a *repoAgent) Close() error {
	C.thost_repoagent_free(a.c)
	a.c = nil
	return dlclose(a.dl)
}

// NewModel implements loader.RepoAgentLibrary.
func (a *repoAgent) NewModel(spec core.RepoAgentModelSpec) (core.RepoAgentModel, error) {
	c := C.thost_repoagent_model_new(a.c, cstr(spec.Location), C.size_t(len(spec.Location)),
		cbytes(spec.Config), C.size_t(len(spec.Config)), C.uint32_t(len(spec.Parameters)))
	ok := c != nil
	for i := 0; ok && i < len(spec.Parameters); i++ {
		p := spec.Parameters[i]
		ok = bool(C.thost_repoagent_model_set_param(c, C.uint32_t(i), cstr(p.Name), C.size_t(len(p.Name)), cstr(p.Value), C.size_t(len(p.Value))))
	}
	if !ok {
		if c != nil {
			C.thost_repoagent_model_free(c)
		}
		return nil, fmt.Errorf("model %q: out of memory creating its agent model", spec.Model)
	}
	m := &repoAgentModel{agent: a, c: c}
	if a.modelInit != nil {
		if err := takeError(C.thost_call_repoagent_model(a.modelInit, c)); err != nil {
			C.thost_repoagent_model_free(c)
			return nil, err
		}
	}
	return m, nil
}

// repoAgentModel is one agent model; it implements core.RepoAgentModel.
// Its calls never overlap (core's contract), except Location, which the
// agent's own threads cannot change outside an action.
type repoAgentModel struct {
	agent *repoAgent
	mu    sync.Mutex
	c     *C.struct_thost_repoagent_model // nil once finalized
}

// Action implements core.RepoAgentModel.
func (m *repoAgentModel) Action(act core.RepoAction) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.c == nil {
		return core.Errorf(core.CodeNotFound, "repository agent model already finalized")
	}
	return takeError(C.thost_call_repoagent_action(m.agent.action, m.c, C.int(act)))
}

// Location implements core.RepoAgentModel.
func (m *repoAgentModel) Location() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.c == nil {
		return ""
	}
	loc := C.thost_repoagent_model_location(m.c)
	if loc == nil {
		return ""
	}
	defer C.free(unsafe.Pointer(loc))
	return C.GoString(loc)
}

// Finalize implements core.RepoAgentModel: TRITONREPOAGENT_ModelFinalize,
// then the agent model is freed with the directory it acquired.
func (m *repoAgentModel) Finalize() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.c == nil {
		return nil
	}
	var err error
	if m.agent.modelFini != nil {
		err = takeError(C.thost_call_repoagent_model(m.agent.modelFini, m.c))
	}
	C.thost_repoagent_model_free(m.c)
	m.c = nil
	return err
}
