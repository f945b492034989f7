package loader

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/serverlog"
)

// DefaultRepoAgentDirectory is Triton's --repoagent-directory default.
const DefaultRepoAgentDirectory = "/opt/tritonserver/repoagents"

// RepoAgentOpener opens repository agent libraries (tritonrepoagent.h).
// Package abi implements it.
type RepoAgentOpener interface {
	// OpenRepoAgent loads the library at path for the agent named name and
	// resolves its entry points (a library without
	// TRITONREPOAGENT_ModelAction is refused). It runs none of the agent's
	// code.
	OpenRepoAgent(path, name string) (RepoAgentLibrary, error)
}

// RepoAgentLibrary is one opened agent library. RepoAgents calls
// Initialize once, then NewModel for each load of a model that names the
// agent (concurrently for different models), then, once no model uses it,
// Finalize and Close.
type RepoAgentLibrary interface {
	// Initialize runs TRITONREPOAGENT_Initialize, if the library exports it.
	Initialize() error
	// NewModel makes an agent model and runs
	// TRITONREPOAGENT_ModelInitialize, if exported; its Finalize runs
	// TRITONREPOAGENT_ModelFinalize and frees it.
	NewModel(spec core.RepoAgentModelSpec) (core.RepoAgentModel, error)
	// Finalize runs TRITONREPOAGENT_Finalize, if exported.
	Finalize() error
	// Close frees the agent's objects and unloads the library.
	Close() error
}

// RepoAgentLibraryFile returns the file name of agent name's library,
// libtritonrepoagent_<name>.so.
func RepoAgentLibraryFile(name string) string { return "libtritonrepoagent_" + name + ".so" }

// RepoAgents implements core.RepoAgentProvider for Triton's agent
// libraries, found as <dir>/<name>/libtritonrepoagent_<name>.so
// (--repoagent-directory). A library is opened (and initialized) for the
// first model that names it, shared by the models that use it at once, and
// finalized and closed when the last of them is finalized. Safe for
// concurrent use.
type RepoAgents struct {
	opener RepoAgentOpener
	dir    string
	log    *serverlog.Logger

	mu    sync.Mutex
	libs  map[string]*agentLibrary // by name, while an agent model uses it
	gates map[string]*sync.Mutex   // by name: serializes opening and closing
}

var _ core.RepoAgentProvider = (*RepoAgents)(nil)

// agentLibrary is an opened agent and the count of its agent models
// (guarded by RepoAgents.mu).
type agentLibrary struct {
	RepoAgentLibrary
	name, path string
	users      int
}

// NewRepoAgents returns a provider of the agents in dir; log receives what
// it logs (nil: discarded).
func NewRepoAgents(opener RepoAgentOpener, dir string, log *serverlog.Logger) *RepoAgents {
	if log == nil {
		log = serverlog.Discard()
	}
	return &RepoAgents{opener: opener, dir: dir, log: log, libs: map[string]*agentLibrary{}, gates: map[string]*sync.Mutex{}}
}

// NewModel implements core.RepoAgentProvider.
func (r *RepoAgents) NewModel(name string, spec core.RepoAgentModelSpec) (core.RepoAgentModel, error) {
	lib, err := r.acquire(name)
	if err != nil {
		return nil, err
	}
	m, err := lib.NewModel(spec)
	if err != nil {
		r.release(lib)
		return nil, fmt.Errorf("repository agent %q: TRITONREPOAGENT_ModelInitialize failed: %w", name, err)
	}
	return &agentModel{RepoAgentModel: m, r: r, lib: lib}, nil
}

// agentModel releases its library once finalized.
type agentModel struct {
	core.RepoAgentModel
	r    *RepoAgents
	lib  *agentLibrary
	once sync.Once
}

func (m *agentModel) Finalize() error {
	err := errors.New("repository agent model finalized twice")
	m.once.Do(func() {
		err = m.RepoAgentModel.Finalize()
		m.r.release(m.lib)
	})
	return err
}

func (r *RepoAgents) gate(name string) *sync.Mutex {
	r.mu.Lock()
	defer r.mu.Unlock()
	g := r.gates[name]
	if g == nil {
		g = &sync.Mutex{}
		r.gates[name] = g
	}
	return g
}

// acquire returns agent name with one more user, opening and initializing
// it first if no model uses it.
func (r *RepoAgents) acquire(name string) (*agentLibrary, error) {
	if !isFileName(name) {
		return nil, core.Errorf(core.CodeInvalidArg, "repository agent %q: the name must be a name, not a path", name)
	}
	g := r.gate(name)
	g.Lock()
	defer g.Unlock()
	r.mu.Lock()
	lib := r.libs[name]
	if lib != nil {
		lib.users++
	}
	r.mu.Unlock()
	if lib != nil {
		return lib, nil
	}
	file := RepoAgentLibraryFile(name)
	path := filepath.Join(r.dir, name, file)
	if st, err := os.Stat(path); err != nil || st.IsDir() {
		return nil, core.Errorf(core.CodeInvalidArg, "unable to find '%s' for repo agent '%s', searched: %s", file, name, r.dir)
	}
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	l, err := r.opener.OpenRepoAgent(path, name)
	if err != nil {
		return nil, fmt.Errorf("load repository agent library %s: %w", path, err)
	}
	if err := l.Initialize(); err != nil {
		if cerr := l.Close(); cerr != nil {
			r.log.Warnf("close repository agent library %s: %v", path, cerr)
		}
		return nil, fmt.Errorf("repository agent library %s: TRITONREPOAGENT_Initialize failed: %w", path, err)
	}
	r.log.Infof("loaded repository agent %q from %s", name, path)
	lib = &agentLibrary{RepoAgentLibrary: l, name: name, path: path, users: 1}
	r.mu.Lock()
	r.libs[name] = lib
	r.mu.Unlock()
	return lib, nil
}

// release drops a user; the last one finalizes and closes the library.
func (r *RepoAgents) release(lib *agentLibrary) {
	g := r.gate(lib.name)
	g.Lock()
	defer g.Unlock()
	r.mu.Lock()
	lib.users--
	last := lib.users == 0
	if last {
		delete(r.libs, lib.name)
	}
	r.mu.Unlock()
	if !last {
		return
	}
	if err := lib.Finalize(); err != nil {
		r.log.Errorf("repository agent %q (%s): TRITONREPOAGENT_Finalize failed: %v", lib.name, lib.path, err)
	}
	if err := lib.Close(); err != nil {
		r.log.Warnf("close repository agent library %s: %v", lib.path, err)
	}
	r.log.Infof("unloaded repository agent %q (%s)", lib.name, lib.path)
}

// Open reports how many agent libraries are open, for tests and
// diagnostics.
func (r *RepoAgents) Open() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.libs)
}
