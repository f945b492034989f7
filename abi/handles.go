package abi

/*
#include <stdlib.h>
#include <string.h>
#include "handles.h"

typedef TRITONSERVER_Error* (*thost_backend_fn)(TRITONBACKEND_Backend*);
typedef TRITONSERVER_Error* (*thost_attr_fn)(TRITONBACKEND_Backend*, TRITONBACKEND_BackendAttribute*);
typedef TRITONSERVER_Error* (*thost_model_fn)(TRITONBACKEND_Model*);
typedef TRITONSERVER_Error* (*thost_instance_fn)(TRITONBACKEND_ModelInstance*);
typedef TRITONSERVER_Error* (*thost_execute_fn)(TRITONBACKEND_ModelInstance*, TRITONBACKEND_Request**, const uint32_t);

static TRITONSERVER_Error* thost_call_backend(void* fn, TRITONBACKEND_Backend* b) { return ((thost_backend_fn)fn)(b); }
static TRITONSERVER_Error* thost_call_attr(void* fn, TRITONBACKEND_Backend* b, TRITONBACKEND_BackendAttribute* a) {
  return ((thost_attr_fn)fn)(b, a);
}
static TRITONSERVER_Error* thost_call_model(void* fn, TRITONBACKEND_Model* m) { return ((thost_model_fn)fn)(m); }
static TRITONSERVER_Error* thost_call_instance(void* fn, TRITONBACKEND_ModelInstance* i) {
  return ((thost_instance_fn)fn)(i);
}
static TRITONSERVER_Error* thost_call_execute(void* fn, TRITONBACKEND_ModelInstance* i, TRITONBACKEND_Request** r,
                                              uint32_t n) {
  return ((thost_execute_fn)fn)(i, r, n);
}

static TRITONBACKEND_Backend* thost_backend_new(_GoString_ name, _GoString_ dir, _GoString_ config) {
  TRITONBACKEND_Backend* b = calloc(1, sizeof(*b));
  b->magic = THOST_MAGIC_BACKEND;
  b->name = thost_strndup(_GoStringPtr(name), _GoStringLen(name));
  b->artifacts = thost_strndup(_GoStringPtr(dir), _GoStringLen(dir));
  b->config = thost_message_new(_GoStringPtr(config), _GoStringLen(config), true);
  b->policy = TRITONBACKEND_EXECUTION_BLOCKING;
  b->memory_manager = calloc(1, sizeof(*b->memory_manager));
  b->memory_manager->magic = THOST_MAGIC_MEMMGR;
  return b;
}

static void thost_backend_free(TRITONBACKEND_Backend* b) {
  b->magic = THOST_MAGIC_DEAD;
  free(b->name);
  free(b->artifacts);
  thost_message_free(b->config);
  b->memory_manager->magic = THOST_MAGIC_DEAD;
  free(b->memory_manager);
  free(b);
}

static TRITONBACKEND_BackendAttribute* thost_attr_new(void) {
  TRITONBACKEND_BackendAttribute* a = calloc(1, sizeof(*a));
  a->magic = THOST_MAGIC_ATTR;
  return a;
}

static void thost_attr_free(TRITONBACKEND_BackendAttribute* a) {
  for (uint32_t i = 0; i < a->group_count; i++) free(a->groups[i].device_ids);
  a->magic = THOST_MAGIC_DEAD;
  free(a);
}

static TRITONBACKEND_Model* thost_model_new(uint64_t key, _GoString_ name, uint64_t version, _GoString_ repo,
                                            TRITONBACKEND_Backend* backend, bool auto_complete) {
  TRITONBACKEND_Model* m = calloc(1, sizeof(*m));
  m->magic = THOST_MAGIC_MODEL;
  m->key = key;
  m->name = thost_strndup(_GoStringPtr(name), _GoStringLen(name));
  m->version = version;
  m->repository = thost_strndup(_GoStringPtr(repo), _GoStringLen(repo));
  m->backend = backend;
  m->auto_complete = auto_complete;
  pthread_mutex_init(&m->config_mu, NULL);
  return m;
}

static void thost_model_free(TRITONBACKEND_Model* m) {
  m->magic = THOST_MAGIC_DEAD;
  free(m->name);
  free(m->repository);
  free(m->config_json);
  pthread_mutex_destroy(&m->config_mu);
  free(m);
}

static TRITONBACKEND_ModelInstance* thost_instance_new(uint64_t key, _GoString_ name, int kind, int32_t device,
                                                       bool passive, TRITONBACKEND_Model* model,
                                                       _GoString_ host_policy, uint32_t profile_count) {
  TRITONBACKEND_ModelInstance* i = calloc(1, sizeof(*i));
  i->magic = THOST_MAGIC_INSTANCE;
  i->key = key;
  i->name = thost_strndup(_GoStringPtr(name), _GoStringLen(name));
  i->kind = (TRITONSERVER_InstanceGroupKind)kind;
  i->device_id = device;
  i->passive = passive;
  i->model = model;
  i->host_policy = thost_message_new(_GoStringPtr(host_policy), _GoStringLen(host_policy), true);
  i->profile_count = profile_count;
  i->profiles = calloc(profile_count + 1, sizeof(char*));
  return i;
}

static void thost_instance_set_profile(TRITONBACKEND_ModelInstance* i, uint32_t idx, _GoString_ name) {
  i->profiles[idx] = thost_strndup(_GoStringPtr(name), _GoStringLen(name));
}

static void thost_instance_free(TRITONBACKEND_ModelInstance* i) {
  i->magic = THOST_MAGIC_DEAD;
  free(i->name);
  thost_message_free(i->host_policy);
  for (uint32_t k = 0; k < i->profile_count; k++) free(i->profiles[k]);
  free(i->profiles);
  free(i);
}
*/
import "C"

import (
	"encoding/json"
	"fmt"
	"sync/atomic"
	"unsafe"

	"tritonhost/core"
)

// Backend is the TRITONBACKEND_Backend handle of one loaded backend library.
// Create it before TRITONBACKEND_Initialize and free it after Finalize.
type Backend struct {
	c    *C.TRITONBACKEND_Backend
	live atomic.Int64 // requests of its models a backend still holds
}

// NewBackend creates the handle. artifacts is the backend's directory and
// cmdline its --backend-config settings, handed out as {"cmdline":{...}}.
func NewBackend(name, artifacts string, cmdline map[string]string) *Backend {
	if cmdline == nil {
		cmdline = map[string]string{}
	}
	js, _ := json.Marshal(map[string]map[string]string{"cmdline": cmdline})
	return &Backend{c: C.thost_backend_new(name, artifacts, string(js))}
}

// LiveRequests returns how many requests of the backend's models it still
// holds something of (a request handle, a factory, an unsent response).
// The library must not be closed while this is not zero.
func (b *Backend) LiveRequests() int64 { return b.live.Load() }

// DeviceBlocking reports whether the backend chose
// TRITONBACKEND_EXECUTION_DEVICE_BLOCKING.
func (b *Backend) DeviceBlocking() bool {
	return b.c.policy == C.TRITONBACKEND_EXECUTION_DEVICE_BLOCKING
}

// Free releases the handle; nothing may use it afterwards.
func (b *Backend) Free() { C.thost_backend_free(b.c) }

// BackendAttributes is the TRITONBACKEND_BackendAttribute handle passed to
// TRITONBACKEND_GetBackendAttribute.
type BackendAttributes struct {
	c *C.TRITONBACKEND_BackendAttribute
}

// PreferredGroup is an instance group a backend prefers when the model
// configuration names none.
type PreferredGroup struct {
	Kind      core.InstanceKind
	Count     uint64
	DeviceIDs []uint64
}

// NewBackendAttributes creates an empty attribute set.
func NewBackendAttributes() *BackendAttributes { return &BackendAttributes{c: C.thost_attr_new()} }

// ParallelInstanceLoading reports what the backend set with
// TRITONBACKEND_BackendAttributeSetParallelModelInstanceLoading.
func (a *BackendAttributes) ParallelInstanceLoading() bool {
	return bool(a.c.parallel_instance_loading)
}

// PreferredGroups returns the groups the backend added.
func (a *BackendAttributes) PreferredGroups() []PreferredGroup {
	out := make([]PreferredGroup, int(a.c.group_count))
	for i := range out {
		g := &a.c.groups[i]
		out[i] = PreferredGroup{Kind: core.InstanceKind(g.kind), Count: uint64(g.count)}
		if g.device_count > 0 {
			for _, id := range unsafe.Slice((*uint64)(unsafe.Pointer(g.device_ids)), int(g.device_count)) {
				out[i].DeviceIDs = append(out[i].DeviceIDs, id)
			}
		}
	}
	return out
}

// Free releases the handle.
func (a *BackendAttributes) Free() { C.thost_attr_free(a.c) }

var models table[*core.Model]

// Model is the TRITONBACKEND_Model handle of one model version.
type Model struct {
	c       *C.TRITONBACKEND_Model
	key     uint64
	backend *Backend
}

// NewModel creates the handle of m, owned by backend. autoComplete is what
// TRITONBACKEND_ModelAutoCompleteConfig reports.
func NewModel(m *core.Model, backend *Backend, autoComplete bool) *Model {
	key := models.add(m)
	h := &Model{key: key, backend: backend, c: C.thost_model_new(C.uint64_t(key), m.Name(), C.uint64_t(m.Version()), m.Path(), backend.c, C.bool(autoComplete))}
	js := m.ConfigJSON()
	C.thost_model_set_config_json(h.c, (*C.char)(unsafe.Pointer(unsafe.SliceData(js))), C.size_t(len(js)))
	return h
}

// Retire makes the handle refuse further use (INVALID_ARG) once the model
// was finalized. Its memory stays valid until Free, so a straggling backend
// thread gets an error rather than reading freed memory.
func (m *Model) Retire() {
	models.take(m.key)
	m.c.magic = C.THOST_MAGIC_DEAD
}

// Free releases the handle's memory; call it when the library is closed.
func (m *Model) Free() {
	m.Retire()
	C.thost_model_free(m.c)
}

var instances table[*core.Instance]

// Instance is the TRITONBACKEND_ModelInstance handle of one model instance.
type Instance struct {
	c       *C.TRITONBACKEND_ModelInstance
	key     uint64
	model   *Model
	scratch []*C.TRITONBACKEND_Request // request pointers passed to Execute
}

// NewInstance creates the handle of inst, belonging to model.
func NewInstance(inst *core.Instance, model *Model) *Instance {
	key := instances.add(inst)
	policy := fmt.Sprintf("{%q:{}}", inst.HostPolicyName())
	profiles := inst.Profiles()
	c := C.thost_instance_new(C.uint64_t(key), inst.Name(), C.int(inst.Kind()), C.int32_t(inst.DeviceID()),
		C.bool(inst.Passive()), model.c, policy, C.uint32_t(len(profiles)))
	for i, p := range profiles {
		C.thost_instance_set_profile(c, C.uint32_t(i), p)
	}
	return &Instance{c: c, key: key, model: model}
}

// Retire makes the handle refuse further use once the instance was
// finalized; see Model.Retire.
func (i *Instance) Retire() {
	instances.take(i.key)
	i.c.magic = C.THOST_MAGIC_DEAD
}

// Free releases the handle's memory; call it when the library is closed.
func (i *Instance) Free() {
	i.Retire()
	C.thost_instance_free(i.c)
}

// CallBackend calls TRITONBACKEND_Initialize or _Finalize at fn.
func CallBackend(fn unsafe.Pointer, b *Backend) error {
	return takeError(C.thost_call_backend(fn, b.c))
}

// CallBackendAttribute calls TRITONBACKEND_GetBackendAttribute at fn.
func CallBackendAttribute(fn unsafe.Pointer, b *Backend, a *BackendAttributes) error {
	return takeError(C.thost_call_attr(fn, b.c, a.c))
}

// CallModel calls TRITONBACKEND_ModelInitialize or _ModelFinalize at fn.
func CallModel(fn unsafe.Pointer, m *Model) error {
	return takeError(C.thost_call_model(fn, m.c))
}

// CallInstance calls TRITONBACKEND_ModelInstanceInitialize, _Finalize or
// _Ready at fn.
func CallInstance(fn unsafe.Pointer, i *Instance) error {
	return takeError(C.thost_call_instance(fn, i.c))
}

// Execute calls TRITONBACKEND_ModelInstanceExecute at fn with a block for
// each request. It must be called from the instance's goroutine only. If
// the backend returns an error, the blocks it did not release are freed and
// the error is returned: the caller then owns (fails and releases) the
// requests, as core.BackendInstance.Execute documents.
func (i *Instance) Execute(fn unsafe.Pointer, batch []*core.Request) error {
	if len(batch) == 0 {
		return nil
	}
	states := make([]*requestState, len(batch))
	i.scratch = i.scratch[:0]
	for k, r := range batch {
		st := stateFor(r, i.model.backend)
		st.mu.Lock()
		blk := st.buildBlock(r, i)
		st.block = blk
		st.mu.Unlock()
		states[k] = st
		i.scratch = append(i.scratch, blk)
	}
	cerr := C.thost_call_execute(fn, i.c, &i.scratch[0], C.uint32_t(len(batch)))
	if cerr == nil {
		return nil
	}
	err := takeError(cerr)
	for k, st := range states {
		st.mu.Lock()
		held := st.block == i.scratch[k]
		if held {
			st.block = nil
			st.pinner.Unpin()
		}
		st.mu.Unlock()
		if held {
			C.thost_request_free(i.scratch[k])
		}
	}
	return err
}
