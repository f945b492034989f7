package abi

/*
#include <stdlib.h>
#include "host.h"
*/
import "C"

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/loader"
)

// entryPoints are a backend library's TRITONBACKEND_* functions, nil where
// it does not export one.
type entryPoints struct {
	initialize, finalize, getAttribute unsafe.Pointer
	modelInit, modelFini               unsafe.Pointer
	instanceInit, instanceFini         unsafe.Pointer
	instanceReady, execute             unsafe.Pointer
}

func resolveEntryPoints(dl unsafe.Pointer) entryPoints {
	return entryPoints{
		initialize:    dlsym(dl, "TRITONBACKEND_Initialize"),
		finalize:      dlsym(dl, "TRITONBACKEND_Finalize"),
		getAttribute:  dlsym(dl, "TRITONBACKEND_GetBackendAttribute"),
		modelInit:     dlsym(dl, "TRITONBACKEND_ModelInitialize"),
		modelFini:     dlsym(dl, "TRITONBACKEND_ModelFinalize"),
		instanceInit:  dlsym(dl, "TRITONBACKEND_ModelInstanceInitialize"),
		instanceFini:  dlsym(dl, "TRITONBACKEND_ModelInstanceFinalize"),
		instanceReady: dlsym(dl, "TRITONBACKEND_ModelInstanceReady"),
		execute:       dlsym(dl, "TRITONBACKEND_ModelInstanceExecute"),
	}
}

// library is one opened backend library and its TRITONBACKEND_Backend; it
// implements loader.Library. Its model and instance handles are freed by
// Close, after the loader retired them.
type library struct {
	host    *Host
	path    string
	dl      unsafe.Pointer
	ep      entryPoints
	backend *C.struct_thost_backend
	attrs   *C.struct_thost_backend_attributes
	held    atomic.Int64 // requests of its models the backend holds anything of

	mu        sync.Mutex
	models    []*modelHandle
	instances []*instanceHandle
}

var _ loader.Library = (*library)(nil)

// Open implements loader.Opener: it loads the libtritonserver.so stub once
// per process, then the library with RTLD_NOW|RTLD_LOCAL, resolves its entry
// points and creates its backend handle with config as the backend's
// {"cmdline": ...} configuration.
func (h *Host) Open(path, name string, config map[string]string) (loader.Library, error) {
	if err := loadStub(); err != nil {
		return nil, err
	}
	dl, err := dlopen(path)
	if err != nil {
		return nil, err
	}
	ep := resolveEntryPoints(dl)
	if ep.execute == nil {
		_ = dlclose(dl)
		return nil, fmt.Errorf("%s does not export TRITONBACKEND_ModelInstanceExecute", path)
	}
	if config == nil {
		config = map[string]string{}
	}
	js, err := json.Marshal(map[string]map[string]string{"cmdline": config})
	if err != nil {
		_ = dlclose(dl)
		return nil, fmt.Errorf("backend config of %s: %w", path, err)
	}
	dir := filepath.Dir(path)
	lib := &library{host: h, path: path, dl: dl, ep: ep}
	lib.backend = C.thost_backend_new(h.c, cstr(name), C.size_t(len(name)), cstr(dir), C.size_t(len(dir)),
		cbytes(js), C.size_t(len(js)))
	lib.attrs = C.thost_attributes_new()
	if lib.backend == nil || lib.attrs == nil {
		_ = lib.Close()
		return nil, errors.New("out of memory creating the backend's handles")
	}
	return lib, nil
}

// Initialize implements loader.Library.
func (l *library) Initialize() error {
	if l.ep.initialize == nil {
		return nil
	}
	return takeError(C.thost_call_backend(l.ep.initialize, l.backend))
}

// Attributes implements loader.Library.
func (l *library) Attributes() (loader.Attributes, error) {
	if l.ep.getAttribute != nil {
		if err := takeError(C.thost_call_attribute(l.ep.getAttribute, l.backend, l.attrs)); err != nil {
			return loader.Attributes{}, err
		}
	}
	out := loader.Attributes{ParallelInstanceLoading: bool(l.attrs.parallel_instance_loading)}
	for _, g := range l.attrs.groups[:l.attrs.group_count] {
		pg := loader.PreferredGroup{Kind: core.InstanceKind(g.kind), Count: uint64(g.count)}
		if g.device_count > 0 {
			ids := unsafe.Slice((*uint64)(unsafe.Pointer(g.device_ids)), int(g.device_count))
			pg.DeviceIDs = append(pg.DeviceIDs, ids...)
		}
		out.PreferredGroups = append(out.PreferredGroups, pg)
	}
	return out, nil
}

// DeviceBlocking implements loader.Library.
func (l *library) DeviceBlocking() bool {
	return l.backend.policy == C.TRITONBACKEND_EXECUTION_DEVICE_BLOCKING
}

// Finalize implements loader.Library.
func (l *library) Finalize() error {
	if l.ep.finalize == nil {
		return nil
	}
	return takeError(C.thost_call_backend(l.ep.finalize, l.backend))
}

// HeldRequests implements loader.Library.
func (l *library) HeldRequests() int64 { return l.held.Load() }

// Close implements loader.Library: every handle of the library is freed,
// then the library is unloaded.
func (l *library) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, i := range l.instances {
		i.free()
	}
	for _, m := range l.models {
		m.free()
	}
	l.instances, l.models = nil, nil
	if l.attrs != nil {
		C.thost_attributes_free(l.attrs)
	}
	if l.backend != nil {
		C.thost_backend_free(l.backend)
	}
	l.attrs, l.backend = nil, nil
	return dlclose(l.dl)
}

// NewModel implements loader.Library.
func (l *library) NewModel(m *core.Model, autoComplete bool) (loader.Model, error) {
	key := l.host.models.add(m)
	name, repo := m.Name(), m.Path()
	c := C.thost_model_new(l.backend, C.uint64_t(key), cstr(name), C.size_t(len(name)), C.uint64_t(m.Version()),
		cstr(repo), C.size_t(len(repo)), C.bool(autoComplete))
	if c == nil {
		l.host.models.take(key)
		return nil, fmt.Errorf("model %q: out of memory creating its handle", name)
	}
	js := m.ConfigJSON()
	C.thost_model_set_config_json(c, cbytes(js), C.size_t(len(js)))
	h := &modelHandle{lib: l, c: c, key: key}
	l.mu.Lock()
	l.models = append(l.models, h)
	l.mu.Unlock()
	return h, nil
}

// modelHandle is the TRITONBACKEND_Model of one model version; it
// implements loader.Model.
type modelHandle struct {
	lib *library
	c   *C.struct_thost_model
	key uint64
}

var _ loader.Model = (*modelHandle)(nil)

// Initialize implements loader.Model.
func (m *modelHandle) Initialize() error {
	if m.lib.ep.modelInit == nil {
		return nil
	}
	return takeError(C.thost_call_model(m.lib.ep.modelInit, m.c))
}

// Finalize implements loader.Model.
func (m *modelHandle) Finalize() error {
	if m.lib.ep.modelFini == nil {
		return nil
	}
	return takeError(C.thost_call_model(m.lib.ep.modelFini, m.c))
}

// Retire implements loader.Model.
func (m *modelHandle) Retire() {
	m.lib.host.models.take(m.key)
	C.thost_model_retire(m.c)
}

func (m *modelHandle) free() {
	m.lib.host.models.take(m.key)
	C.thost_model_free(m.c)
}

// NewInstance implements loader.Model.
func (m *modelHandle) NewInstance(inst *core.Instance) (loader.Instance, error) {
	h := m.lib.host
	key := h.instances.add(inst)
	name := inst.Name()
	policy, err := hostPolicyMessage(inst)
	if err != nil {
		h.instances.take(key)
		return nil, fmt.Errorf("instance %q: %w", name, err)
	}
	profiles := inst.Profiles()
	c := C.thost_instance_new(m.c, C.uint64_t(key), cstr(name), C.size_t(len(name)), C.int(inst.Kind()),
		C.int32_t(inst.DeviceID()), C.bool(inst.Passive()), cstr(policy), C.size_t(len(policy)),
		C.uint32_t(len(profiles)))
	ok := c != nil
	for i := 0; ok && i < len(profiles); i++ {
		ok = bool(C.thost_instance_set_profile(c, C.uint32_t(i), cstr(profiles[i]), C.size_t(len(profiles[i]))))
	}
	if !ok {
		if c != nil {
			C.thost_instance_free(c)
		}
		h.instances.take(key)
		return nil, fmt.Errorf("instance %q: out of memory creating its handle", name)
	}
	if err := h.enterDeviceHook(inst, c); err != nil {
		C.thost_instance_free(c)
		h.instances.take(key)
		return nil, err
	}
	ih := &instanceHandle{lib: m.lib, c: c, key: key}
	m.lib.mu.Lock()
	m.lib.instances = append(m.lib.instances, ih)
	m.lib.mu.Unlock()
	return ih, nil
}

// enterDeviceHook gives a GPU instance the hook that makes its device
// current before each of its entry points (host.c), on a host with
// Devices. A GPU the Devices do not have fails the instance.
func (h *Host) enterDeviceHook(inst *core.Instance, c *C.struct_thost_instance) error {
	if h.devices == nil || inst.Kind() != core.KindGPU {
		return nil
	}
	fn, arg, ok := h.devices.ContextHook(int64(inst.DeviceID()))
	if !ok {
		return fmt.Errorf("instance %q: GPU %d has no CUDA context on this server", inst.Name(), inst.DeviceID())
	}
	c.ctx_fn, c.ctx_arg = pointer(fn), pointer(arg)
	return nil
}

// instanceHandle is the TRITONBACKEND_ModelInstance of one instance; it
// implements loader.Instance (Execute is in execute.go).
type instanceHandle struct {
	lib *library
	c   *C.struct_thost_instance
	key uint64
	// Reused by Execute (one goroutine): the request handles passed to the
	// backend (C memory), and the records and blocks behind them.
	scratch *C.uint64_t
	cap     int
	held    []*heldRequest
	blocks  []*C.struct_thost_request
}

var _ loader.Instance = (*instanceHandle)(nil)

// Initialize implements loader.Instance.
func (i *instanceHandle) Initialize() error {
	if i.lib.ep.instanceInit == nil {
		return nil
	}
	return takeError(C.thost_call_instance(i.lib.ep.instanceInit, i.c))
}

// Ready implements loader.Instance.
func (i *instanceHandle) Ready() error {
	if i.lib.ep.instanceReady == nil {
		return nil
	}
	return takeError(C.thost_call_instance(i.lib.ep.instanceReady, i.c))
}

// Finalize implements loader.Instance.
func (i *instanceHandle) Finalize() error {
	if i.lib.ep.instanceFini == nil {
		return nil
	}
	return takeError(C.thost_call_instance(i.lib.ep.instanceFini, i.c))
}

// Retire implements loader.Instance.
func (i *instanceHandle) Retire() {
	i.lib.host.instances.take(i.key)
	C.thost_instance_retire(i.c)
}

func (i *instanceHandle) free() {
	i.lib.host.instances.take(i.key)
	C.thost_instance_free(i.c)
	C.free(unsafe.Pointer(i.scratch))
}

// ---- dlopen -----------------------------------------------------------------

// dlopen opens a shared library with RTLD_NOW|RTLD_LOCAL.
func dlopen(path string) (unsafe.Pointer, error) {
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	var cerr *C.char
	dl := C.thost_dlopen(cpath, &cerr)
	if dl == nil {
		defer C.free(unsafe.Pointer(cerr))
		return nil, errors.New(C.GoString(cerr))
	}
	return dl, nil
}

// libraryLoaded reports whether an object of that file name or soname is
// loaded in the process.
func libraryLoaded(soname string) bool {
	cname := C.CString(soname)
	defer C.free(unsafe.Pointer(cname))
	return bool(C.thost_dl_loaded(cname))
}

// dlsym returns the address of a symbol, or nil if the library lacks it.
func dlsym(dl unsafe.Pointer, name string) unsafe.Pointer {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	return C.thost_dlsym(dl, cname)
}

// dlclose closes a library opened by dlopen.
func dlclose(dl unsafe.Pointer) error {
	var cerr *C.char
	if C.thost_dlclose(dl, &cerr) != 0 {
		defer C.free(unsafe.Pointer(cerr))
		return errors.New(C.GoString(cerr))
	}
	return nil
}

// cstr and cbytes pass a Go string or byte slice to a C function that copies
// it (with its length) during the call; C keeps no pointer to it.
func cstr(s string) *C.char { return (*C.char)(unsafe.Pointer(unsafe.StringData(s))) }

func cbytes(b []byte) *C.char { return (*C.char)(unsafe.Pointer(unsafe.SliceData(b))) }

// hostPolicyMessage is what TRITONBACKEND_ModelInstanceHostPolicy gives the
// backend, as Triton does: {"<policy name>": {"<setting>": "<value>", ...}},
// the settings of the server's host policy of that name (--host-policy),
// none when the server has no such policy.
func hostPolicyMessage(inst *core.Instance) (string, error) {
	settings := inst.HostPolicySettings()
	if settings == nil {
		settings = map[string]string{}
	}
	b, err := json.Marshal(map[string]map[string]string{inst.HostPolicyName(): settings})
	if err != nil {
		return "", fmt.Errorf("host policy %q: %w", inst.HostPolicyName(), err)
	}
	return string(b), nil
}
