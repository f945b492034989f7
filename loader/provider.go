package loader

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"tritonhost/abi"
	"tritonhost/core"
	"tritonhost/core/configpb"
	"tritonhost/core/serverlog"
)

// Options configure a Provider.
type Options struct {
	// BackendDirectory holds one directory per backend,
	// <dir>/<backend>/libtriton_<backend>.so (Triton's --backend-directory).
	BackendDirectory string
	// BackendConfig holds --backend-config settings: per backend name, and
	// under "" the settings that apply to every backend.
	BackendConfig map[string]map[string]string
	// DisableAutoComplete is --disable-auto-complete-config: backends are
	// told not to complete model configurations.
	DisableAutoComplete bool
	// Logger receives the loader's log and the backends' TRITONSERVER_LogMessage.
	Logger *serverlog.Logger
	// CloseGrace is how long closing a library waits for its backend to let
	// go of its last requests (default 10s).
	CloseGrace time.Duration
}

// Provider implements core.BackendProvider for shared-library backends.
type Provider struct {
	opts Options
	log  *serverlog.Logger

	mu   sync.Mutex
	libs map[string]*library // by library path
	open map[string]*sync.Mutex
}

var _ core.BackendProvider = (*Provider)(nil)

// New returns a provider. Libraries are opened when a model first needs them.
func New(opts Options) *Provider {
	if opts.Logger == nil {
		opts.Logger = serverlog.Discard()
	}
	if opts.CloseGrace <= 0 {
		opts.CloseGrace = 10 * time.Second
	}
	abi.SetLogger(opts.Logger)
	return &Provider{opts: opts, log: opts.Logger, libs: map[string]*library{}, open: map[string]*sync.Mutex{}}
}

// LibraryFile returns the file name of a model's backend library: the
// configuration's runtime if set, else libtriton_<backend>.so.
func LibraryFile(backend, runtime string) string {
	if runtime != "" {
		return runtime
	}
	return "libtriton_" + backend + ".so"
}

// findLibrary applies Triton's search order for a model's backend library.
func (p *Provider) findLibrary(m *core.Model) (string, string, error) {
	cfg := m.Config()
	name := cfg.GetBackend()
	if name == "" {
		return "", "", core.Errorf(core.CodeInvalidArg, "model %q: the configuration names no backend (platform %q models are not supported)", m.Name(), cfg.GetPlatform())
	}
	file := LibraryFile(name, cfg.GetRuntime())
	if strings.ContainsRune(file, '/') {
		return "", "", core.Errorf(core.CodeInvalidArg, "model %q: runtime %q must be a file name, not a path", m.Name(), file)
	}
	candidates := []string{
		filepath.Join(m.VersionPath(), file),
		filepath.Join(m.Path(), file),
	}
	if p.opts.BackendDirectory != "" {
		candidates = append(candidates, filepath.Join(p.opts.BackendDirectory, name, file))
	}
	for _, c := range candidates {
		if st, err := os.Stat(c); err == nil && !st.IsDir() {
			abs, err := filepath.Abs(c)
			if err != nil {
				return "", "", core.Errorf(core.CodeInternal, "model %q: %w", m.Name(), err)
			}
			return abs, name, nil
		}
	}
	return "", "", core.Errorf(core.CodeNotFound, "model %q: backend %q: %s not found in %s", m.Name(), name, file, strings.Join(candidates, ", "))
}

func (p *Provider) cmdline(backend string) map[string]string {
	out := map[string]string{
		"auto-complete-config":   fmt.Sprint(!p.opts.DisableAutoComplete),
		"backend-directory":      p.opts.BackendDirectory,
		"default-max-batch-size": "4",
		"min-compute-capability": "6.000000",
	}
	for k, v := range p.opts.BackendConfig[""] {
		out[k] = v
	}
	for k, v := range p.opts.BackendConfig[backend] {
		out[k] = v
	}
	return out
}

// acquire returns the library at path, opening it on first use, and takes a
// reference on it. Opening one library does not block others.
func (p *Provider) acquire(path, name string) (*library, error) {
	p.mu.Lock()
	gate := p.open[path]
	if gate == nil {
		gate = &sync.Mutex{}
		p.open[path] = gate
	}
	p.mu.Unlock()

	gate.Lock()
	defer gate.Unlock()
	p.mu.Lock()
	lib := p.libs[path]
	if lib != nil {
		lib.refs++
		p.mu.Unlock()
		return lib, nil
	}
	p.mu.Unlock()
	lib, err := openLibrary(path, name, p.cmdline(name))
	if err != nil {
		return nil, err
	}
	p.log.Infof("loaded backend %q from %s", name, path)
	p.mu.Lock()
	lib.refs = 1
	p.libs[path] = lib
	p.mu.Unlock()
	return lib, nil
}

// release drops a reference; the last one closes the library.
func (p *Provider) release(lib *library) {
	gate := p.gate(lib.path)
	gate.Lock()
	defer gate.Unlock()
	p.mu.Lock()
	lib.refs--
	last := lib.refs == 0
	if last {
		delete(p.libs, lib.path)
	}
	p.mu.Unlock()
	if last {
		lib.close(p.log, p.opts.CloseGrace)
		p.log.Infof("unloaded backend %q (%s)", lib.name, lib.path)
	}
}

func (p *Provider) gate(path string) *sync.Mutex {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.open[path]
}

// LoadModel opens the model's backend library if needed and runs
// TRITONBACKEND_ModelInitialize.
func (p *Provider) LoadModel(m *core.Model) (core.BackendModel, error) {
	path, name, err := p.findLibrary(m)
	if err != nil {
		return nil, err
	}
	lib, err := p.acquire(path, name)
	if err != nil {
		return nil, core.Errorf(core.CodeUnavailable, "model %q: %w", m.Name(), err)
	}
	if err := m.SetPreferredInstanceGroups(preferredGroups(lib.attrs.PreferredGroups())); err != nil {
		p.release(lib)
		return nil, err
	}
	am := abi.NewModel(m, lib.backend, !p.opts.DisableAutoComplete)
	if lib.ep.modelInit != nil {
		if err := abi.CallModel(lib.ep.modelInit, am); err != nil {
			p.retireModel(lib, am)
			p.release(lib)
			return nil, fmt.Errorf("model %q: %s: TRITONBACKEND_ModelInitialize failed: %w", m.Name(), path, err)
		}
	}
	return &sharedModel{p: p, lib: lib, m: m, am: am}, nil
}

// preferredGroups turns a backend's preferred instance groups into
// configuration instance groups.
func preferredGroups(groups []abi.PreferredGroup) []*configpb.ModelInstanceGroup {
	var out []*configpb.ModelInstanceGroup
	for _, g := range groups {
		kind := configpb.ModelInstanceGroup_KIND_AUTO
		switch g.Kind {
		case core.KindCPU:
			kind = configpb.ModelInstanceGroup_KIND_CPU
		case core.KindGPU:
			kind = configpb.ModelInstanceGroup_KIND_GPU
		case core.KindModel:
			kind = configpb.ModelInstanceGroup_KIND_MODEL
		}
		cg := &configpb.ModelInstanceGroup{Kind: kind, Count: int32(min(g.Count, 1<<30))}
		for _, id := range g.DeviceIDs {
			cg.Gpus = append(cg.Gpus, int32(id))
		}
		out = append(out, cg)
	}
	return out
}

func (p *Provider) retireModel(lib *library, am *abi.Model) {
	am.Retire()
	p.mu.Lock()
	lib.retiredModels = append(lib.retiredModels, am)
	p.mu.Unlock()
}

func (p *Provider) retireInstance(lib *library, ai *abi.Instance) {
	ai.Retire()
	p.mu.Lock()
	lib.retiredInsts = append(lib.retiredInsts, ai)
	p.mu.Unlock()
}

// Close reports libraries still in use; each library is already closed when
// its last model is finalized.
func (p *Provider) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	var errs []error
	for path, lib := range p.libs {
		errs = append(errs, fmt.Errorf("backend %q (%s) is still used by %d model(s)", lib.name, path, lib.refs))
	}
	return errors.Join(errs...)
}

// sharedModel is a model initialized in a shared-library backend.
type sharedModel struct {
	p   *Provider
	lib *library
	m   *core.Model
	am  *abi.Model
}

var _ core.BackendModel = (*sharedModel)(nil)

// NewInstance runs TRITONBACKEND_ModelInstanceInitialize.
func (sm *sharedModel) NewInstance(inst *core.Instance) (core.BackendInstance, error) {
	ai := abi.NewInstance(inst, sm.am)
	if sm.lib.ep.instanceInit != nil {
		if err := abi.CallInstance(sm.lib.ep.instanceInit, ai); err != nil {
			sm.p.retireInstance(sm.lib, ai)
			return nil, fmt.Errorf("%s: TRITONBACKEND_ModelInstanceInitialize failed: %w", sm.lib.path, err)
		}
	}
	return &sharedInstance{sm: sm, ai: ai}, nil
}

// DeviceBlocking reports whether the backend chose
// TRITONBACKEND_EXECUTION_DEVICE_BLOCKING.
func (sm *sharedModel) DeviceBlocking() bool { return sm.lib.backend.DeviceBlocking() }

// ParallelInstanceLoading reports the backend's attribute.
func (sm *sharedModel) ParallelInstanceLoading() bool { return sm.lib.attrs.ParallelInstanceLoading() }

// Finalize runs TRITONBACKEND_ModelFinalize and drops the library reference.
func (sm *sharedModel) Finalize() error {
	var err error
	if sm.lib.ep.modelFini != nil {
		if ferr := abi.CallModel(sm.lib.ep.modelFini, sm.am); ferr != nil {
			err = fmt.Errorf("model %q: %s: TRITONBACKEND_ModelFinalize failed: %w", sm.m.Name(), sm.lib.path, ferr)
		}
	}
	sm.p.retireModel(sm.lib, sm.am)
	sm.p.release(sm.lib)
	return err
}

// sharedInstance is a model instance in a shared-library backend.
type sharedInstance struct {
	sm *sharedModel
	ai *abi.Instance
}

var _ core.BackendInstance = (*sharedInstance)(nil)

// Execute runs TRITONBACKEND_ModelInstanceExecute.
func (si *sharedInstance) Execute(batch []*core.Request) error {
	return si.ai.Execute(si.sm.lib.ep.execute, batch)
}

// Ready runs TRITONBACKEND_ModelInstanceReady when the backend exports it.
func (si *sharedInstance) Ready() error {
	if si.sm.lib.ep.instanceReady == nil {
		return nil
	}
	return abi.CallInstance(si.sm.lib.ep.instanceReady, si.ai)
}

// Finalize runs TRITONBACKEND_ModelInstanceFinalize.
func (si *sharedInstance) Finalize() error {
	var err error
	if si.sm.lib.ep.instanceFini != nil {
		if ferr := abi.CallInstance(si.sm.lib.ep.instanceFini, si.ai); ferr != nil {
			err = fmt.Errorf("%s: TRITONBACKEND_ModelInstanceFinalize failed: %w", si.sm.lib.path, ferr)
		}
	}
	si.sm.p.retireInstance(si.sm.lib, si.ai)
	return err
}
