package loader

import (
	"cmp"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/configpb"
	"github.com/tritonhost/tritonhost/core/serverlog"
)

// Options configure a Provider.
type Options struct {
	// Opener opens the libraries (abi.Host). Required.
	Opener Opener
	// BackendDirectory holds one directory per backend,
	// <dir>/<backend>/libtriton_<backend>.so (Triton's --backend-directory).
	BackendDirectory string
	// BackendConfig holds --backend-config settings: per backend name, and
	// under "" the settings that apply to every backend.
	BackendConfig map[string]map[string]string
	// DisableAutoComplete is --disable-auto-complete-config: backends are
	// told not to complete model configurations.
	DisableAutoComplete bool
	// Logger receives the loader's log (default: discarded).
	Logger *serverlog.Logger
	// CloseGrace is how long closing a library waits for its backend to let
	// go of its last requests (default 10s).
	CloseGrace time.Duration
	// MinComputeCapability is --min-supported-compute-capability, which
	// backends read as "min-compute-capability" (default 6.0, Triton's).
	MinComputeCapability float64
}

// Provider implements core.BackendProvider for shared-library backends. It
// is safe for concurrent use: opening one library does not block others.
type Provider struct {
	opts Options
	log  *serverlog.Logger

	mu    sync.Mutex
	libs  map[string]*sharedLibrary // by path, while some model uses it
	gates map[string]*sync.Mutex    // by path: serializes opening and closing it
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
	return &Provider{opts: opts, log: opts.Logger, libs: map[string]*sharedLibrary{}, gates: map[string]*sync.Mutex{}}
}

// sharedLibrary is an opened library and the count of model versions using
// it (guarded by the Provider's mutex).
type sharedLibrary struct {
	Library
	path, name string
	attrs      Attributes
	users      int
}

// LoadModel opens the model's backend library if needed (lifecycle steps 1
// and 2) and initializes the model in it (step 3).
func (p *Provider) LoadModel(m *core.Model) (core.BackendModel, error) {
	path, name, err := findLibrary(m, p.opts.BackendDirectory)
	if err != nil {
		return nil, err
	}
	lib, err := p.acquire(path, name)
	if err != nil {
		return nil, core.Errorf(core.CodeUnavailable, "model %q: %w", m.Name(), err)
	}
	if err := m.SetPreferredInstanceGroups(configGroups(lib.attrs.PreferredGroups)); err != nil {
		p.release(lib)
		return nil, err
	}
	h, err := lib.NewModel(m, !p.opts.DisableAutoComplete)
	if err != nil {
		p.release(lib)
		return nil, fmt.Errorf("model %q: %s: %w", m.Name(), path, err)
	}
	if err := h.Initialize(); err != nil {
		// Finalized all the same, as Triton does (see NewInstance).
		if ferr := h.Finalize(); ferr != nil {
			p.log.Errorf("model %q: %s: TRITONBACKEND_ModelFinalize after a failed initialize: %v", m.Name(), path, ferr)
		}
		h.Retire()
		p.release(lib)
		return nil, fmt.Errorf("model %q: %s: TRITONBACKEND_ModelInitialize failed: %w", m.Name(), path, err)
	}
	return &libraryModel{p: p, lib: lib, m: m, h: h}, nil
}

// Close reports libraries still in use; each library is already closed when
// its last model is finalized.
func (p *Provider) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	var errs []error
	for path, lib := range p.libs {
		errs = append(errs, fmt.Errorf("backend %q (%s) is still used by %d model(s)", lib.name, path, lib.users))
	}
	return errors.Join(errs...)
}

func (p *Provider) gate(path string) *sync.Mutex {
	p.mu.Lock()
	defer p.mu.Unlock()
	g := p.gates[path]
	if g == nil {
		g = &sync.Mutex{}
		p.gates[path] = g
	}
	return g
}

// acquire returns the library at path with one more user, opening and
// initializing it first if no model uses it.
func (p *Provider) acquire(path, name string) (*sharedLibrary, error) {
	g := p.gate(path)
	g.Lock()
	defer g.Unlock()
	p.mu.Lock()
	lib := p.libs[path]
	if lib != nil {
		lib.users++
	}
	p.mu.Unlock()
	if lib != nil {
		return lib, nil
	}
	lib, err := p.open(path, name)
	if err != nil {
		return nil, err
	}
	p.log.Infof("loaded backend %q from %s", name, path)
	p.mu.Lock()
	lib.users = 1
	p.libs[path] = lib
	p.mu.Unlock()
	return lib, nil
}

// open runs lifecycle steps 1 and 2.
func (p *Provider) open(path, name string) (*sharedLibrary, error) {
	l, err := p.opts.Opener.Open(path, name, p.backendConfig(name))
	if err != nil {
		return nil, fmt.Errorf("load backend library %s: %w", path, err)
	}
	if err := l.Initialize(); err != nil {
		// Finalized all the same, as Triton does (see NewInstance).
		if ferr := l.Finalize(); ferr != nil {
			p.log.Errorf("backend %q (%s): TRITONBACKEND_Finalize after a failed initialize: %v", name, path, ferr)
		}
		p.closeQuietly(l, path)
		return nil, fmt.Errorf("backend library %s: TRITONBACKEND_Initialize failed: %w", path, err)
	}
	attrs, err := l.Attributes()
	if err != nil {
		if ferr := l.Finalize(); ferr != nil {
			p.log.Errorf("backend %q (%s): TRITONBACKEND_Finalize failed: %v", name, path, ferr)
		}
		p.closeQuietly(l, path)
		return nil, fmt.Errorf("backend library %s: TRITONBACKEND_GetBackendAttribute failed: %w", path, err)
	}
	return &sharedLibrary{Library: l, path: path, name: name, attrs: attrs}, nil
}

func (p *Provider) closeQuietly(l Library, path string) {
	if err := l.Close(); err != nil {
		p.log.Warnf("close backend library %s: %v", path, err)
	}
}

// release drops a user; the last one closes the library (lifecycle step 6).
func (p *Provider) release(lib *sharedLibrary) {
	g := p.gate(lib.path)
	g.Lock()
	defer g.Unlock()
	p.mu.Lock()
	lib.users--
	last := lib.users == 0
	if last {
		delete(p.libs, lib.path)
	}
	p.mu.Unlock()
	if !last {
		return
	}
	if err := lib.Finalize(); err != nil {
		p.log.Errorf("backend %q (%s): TRITONBACKEND_Finalize failed: %v", lib.name, lib.path, err)
	}
	deadline := time.Now().Add(p.opts.CloseGrace)
	for lib.HeldRequests() > 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if n := lib.HeldRequests(); n > 0 {
		p.log.Warnf("backend %q (%s) still holds %d request(s) after finalization; keeping the library loaded", lib.name, lib.path, n)
		return
	}
	p.closeQuietly(lib, lib.path)
	p.log.Infof("unloaded backend %q (%s)", lib.name, lib.path)
}

// backendConfig is the backend's --backend-config settings with Triton's
// defaults, as TRITONBACKEND_BackendConfig hands them out under "cmdline".
func (p *Provider) backendConfig(backend string) map[string]string {
	out := map[string]string{
		"auto-complete-config":   fmt.Sprint(!p.opts.DisableAutoComplete),
		"backend-directory":      p.opts.BackendDirectory,
		"default-max-batch-size": "4",
		"min-compute-capability": fmt.Sprintf("%f", cmp.Or(p.opts.MinComputeCapability, 6.0)),
	}
	for k, v := range p.opts.BackendConfig[""] {
		out[k] = v
	}
	for k, v := range p.opts.BackendConfig[backend] {
		out[k] = v
	}
	return out
}

// configGroups turns a backend's preferred instance groups into
// configuration instance groups.
func configGroups(groups []PreferredGroup) []*configpb.ModelInstanceGroup {
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
