// Package isolation runs backends in worker processes, so that a backend
// that crashes (a segfault, an abort, an exit, the memory it may not have)
// takes down its own model only, which restarts, while every other model
// keeps serving.
//
// Provider is a core.BackendProvider: a model whose isolation is "process"
// (Options.Default, or the model's own parameter IsolationParameter) gets
// a worker of its own, the same binary started with its worker command
// (RunWorker), which loads the model's backend library with the same abi
// and loader the server uses in process; other models go to the
// in-process provider. One worker per model version: a crash costs that
// version alone, and the restart reloads exactly what it served.
//
// The server and a worker talk over unix SOCK_SEQPACKET sockets, one each
// way (package wire); tensor bytes above 64 KiB travel in sealed shared memory beside
// the messages. The server schedules, validates and answers as for any
// model; the worker executes each batch as it stands
// (core.Model.NewForwarded) and hands back every response, release, state
// update and statistics report, so that clients see the same protocols,
// statistics, errors, decoupled streams and cancellation either way.
//
// When a worker dies, every request it held fails with UNAVAILABLE,
// naming the model and how the process ended; the model reports not ready
// (its instances' Ready) and its requests fail at once until a new worker
// has loaded it again, after a backoff that doubles from RestartBackoff to
// RestartBackoffMax while restarts fail. An execution that does not
// return within ExecuteTimeout kills the worker, the same way. A worker
// dies with the server (its parent-death signal, and the socket's end).
package isolation

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/tritonhost/tritonhost/abi"
	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/configpb"
	"github.com/tritonhost/tritonhost/core/modelconfig"
	"github.com/tritonhost/tritonhost/core/serverlog"
)

// Mode is where a model's backend runs.
type Mode string

// Modes.
const (
	ModeNone    Mode = "none"    // in the server's process
	ModeProcess Mode = "process" // in a worker process of its own
)

// IsolationParameter is the model configuration parameter that chooses a
// model's mode over the server's default:
// parameters { key: "tritonhost_isolation" value: { string_value: "process" } }.
const IsolationParameter = "tritonhost_isolation"

// ParseMode reads a mode as the flag and the parameter spell it.
func ParseMode(s string) (Mode, error) {
	switch Mode(s) {
	case ModeNone, ModeProcess:
		return Mode(s), nil
	}
	return "", fmt.Errorf("backend isolation %q: want %q or %q", s, ModeNone, ModeProcess)
}

// Options configure a Provider.
type Options struct {
	// Default is the mode of models whose configuration does not choose.
	Default Mode
	// WorkerCommand starts a worker: a program and its arguments; its
	// sockets are its descriptors 3 (what it reads) and 4 (what it writes)
	// (default: this executable, "worker").
	WorkerCommand []string
	// Logger receives the workers' log lines and the provider's own.
	Logger *serverlog.Logger
	// What the workers load backends with, as the in-process loader does.
	BackendDirectory     string
	BackendConfig        map[string]map[string]string
	DisableAutoComplete  bool
	MinComputeCapability float64
	GPUs                 []int
	// The CUDA driver library and memory pools a worker whose model has
	// GPU instances opens the GPUs with (gpu.OpenDriver, gpu.NewDevices):
	// each such worker holds pools of its own, of these sizes.
	CUDADriverLibrary string
	CUDAPoolBytes     map[int]uint64
	PinnedPoolBytes   uint64
	LogVerbose        int
	MaxTensorBytes    int64
	// HostPolicies are the server's host policies, handed to the workers
	// so that their instances run under them as in process.
	HostPolicies map[string]core.HostPolicy
	// CallTimeout bounds a worker's start and load, and its unload.
	CallTimeout time.Duration
	// RestartBackoff is the wait before the first restart of a dead
	// worker (default 100 ms); it doubles, up to RestartBackoffMax
	// (default 30 s), while restarts fail.
	RestartBackoff, RestartBackoffMax time.Duration
	// PipelineDepth is how many batches of one instance a worker may hold
	// where its model pipelines (isolatedModel.depth; default
	// DefaultPipelineDepth): one runs, the others wait in the worker to
	// run in turn. 1 sends the next batch only once the last returned.
	PipelineDepth int
	// ExecuteTimeout, when positive, kills a worker whose execution has
	// not returned by then (a hung backend), which then restarts.
	ExecuteTimeout time.Duration
	// MemoryLimit, when positive, bounds each worker's address space
	// (RLIMIT_AS), in bytes: a backend that allocates past it fails its
	// allocations, or dies, alone.
	MemoryLimit int64
	// GCPercent, when positive, is each worker's GOGC (the server's
	// --gc-percent), over any in the server's environment: a worker's
	// live heap is small and every batch leaves garbage, as the server's
	// does. 0 leaves the worker the GOGC of the server's environment, or
	// Go's default.
	GCPercent int
	// What bounds a worker's backend's own requests to the server (BLS):
	// each tensor's bytes (default abi.DefaultInProcessMaxTensorBytes),
	// the responses of one waiting for its callback and how long a sender
	// waits for room (abi.HostOptions), and how many requests and calls
	// it may have in flight at once (default
	// DefaultMaxUpstreamRequests).
	InProcessMaxTensorBytes int64
	InProcessMaxPending     int
	InProcessStallTimeout   time.Duration
	MaxUpstreamRequests     int
	// ServerInfo, if set, describes the server to the workers' backends
	// (TRITONSERVER_ServerMetadata, TRITONSERVER_MetricsFormatted): the
	// in-process host's abi.Host.ServerInfo.
	ServerInfo func() abi.ServerInfo
}

// DefaultPipelineDepth is Options.PipelineDepth unless told otherwise:
// with 8 batches of a single-instance identity model waiting in its worker
// (16 clients), the isolated model served 0.57 of the requests per second
// in process against 0.35 with 2 (docs/serving.md).
const DefaultPipelineDepth = 8

// MaxPipelineDepth bounds Options.PipelineDepth.
const MaxPipelineDepth = 1024

// Provider loads each model in process or in a worker, as its mode says.
type Provider struct {
	inproc core.BackendProvider
	opts   Options
	server atomic.Pointer[core.Server] // AttachServer

	mu     sync.Mutex
	models map[*isolatedModel]struct{} // loaded, for their metric families
}

// serverInfo describes the server (Options.ServerInfo; abi's defaults
// without it).
func (p *Provider) serverInfo() abi.ServerInfo {
	if p.opts.ServerInfo != nil {
		return p.opts.ServerInfo()
	}
	return abi.ServerInfo{Name: "triton", Version: "dev"}
}

// AttachServer makes srv the server that answers the workers' backends'
// own requests and calls (their BLS requests, model queries, loads);
// until then those fail with UNAVAILABLE "Server not ready".
func (p *Provider) AttachServer(srv *core.Server) { p.server.Store(srv) }

// New returns a provider that sends models in ModeNone to inproc.
func New(inproc core.BackendProvider, opts Options) (*Provider, error) {
	if opts.Default == "" {
		opts.Default = ModeNone
	}
	if len(opts.WorkerCommand) == 0 {
		self, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("backend isolation: find this program to start workers: %w", err)
		}
		opts.WorkerCommand = []string{self, "worker"}
	}
	if opts.Logger == nil {
		opts.Logger = serverlog.Discard()
	}
	if opts.CallTimeout <= 0 {
		opts.CallTimeout = 10 * time.Minute
	}
	if opts.InProcessMaxTensorBytes <= 0 {
		opts.InProcessMaxTensorBytes = abi.DefaultInProcessMaxTensorBytes
	}
	if opts.MaxUpstreamRequests <= 0 {
		opts.MaxUpstreamRequests = DefaultMaxUpstreamRequests
	}
	if opts.PipelineDepth <= 0 {
		opts.PipelineDepth = DefaultPipelineDepth
	}
	opts.PipelineDepth = min(opts.PipelineDepth, MaxPipelineDepth)
	if opts.RestartBackoff <= 0 {
		opts.RestartBackoff = 100 * time.Millisecond
	}
	if opts.RestartBackoffMax < opts.RestartBackoff {
		opts.RestartBackoffMax = max(30*time.Second, opts.RestartBackoff)
	}
	return &Provider{inproc: inproc, opts: opts, models: map[*isolatedModel]struct{}{}}, nil
}

// ModeOf returns the mode of a model with configuration cfg.
func (p *Provider) ModeOf(cfg *configpb.ModelConfig) (Mode, error) {
	if v, ok := cfg.GetParameters()[IsolationParameter]; ok {
		mode, err := ParseMode(v.GetStringValue())
		if err != nil {
			return "", fmt.Errorf("parameters[%q]: %w", IsolationParameter, err)
		}
		return mode, nil
	}
	return p.opts.Default, nil
}

// LoadModel loads m in process, or starts its worker and has it load m
// there; the configuration the worker's backend completed becomes m's.
func (p *Provider) LoadModel(m *core.Model) (core.BackendModel, error) {
	mode, err := p.ModeOf(m.Config())
	if err != nil {
		return nil, core.Errorf(core.CodeInvalidArg, "model %q: %w", m.Name(), err)
	}
	if mode == ModeNone {
		return p.inproc.LoadModel(m)
	}
	mod := &isolatedModel{p: p, m: m}
	pr, loaded, err := startProcess(mod)
	if err != nil {
		return nil, err
	}
	cfg, err := modelconfig.FromJSON(loaded.Config)
	if err == nil {
		cfg.VersionPolicy = m.Config().GetVersionPolicy() // the worker's was pinned to this version
		err = m.SetConfig(cfg)
	}
	if err != nil {
		pr.stop(p.opts.CallTimeout)
		return nil, core.Errorf(core.CodeInternal, "model %q: the configuration its worker loaded with: %w", m.Name(), err)
	}
	mod.instances = loaded.Instances
	mod.outputNames = map[string]string{}
	for _, o := range m.Config().GetOutput() {
		mod.outputNames[o.GetName()] = o.GetName()
	}
	mod.depth = 1
	if pipelinable(m.Config(), p.opts.ExecuteTimeout) {
		mod.depth = max(p.opts.PipelineDepth, 1)
	}
	mod.cur = pr
	p.mu.Lock()
	p.models[mod] = struct{}{}
	p.mu.Unlock()
	p.opts.Logger.Infof("model %q version %d: its backend runs in worker process %d", m.Name(), m.Version(), pr.pid)
	return mod, nil
}

// Close closes the in-process provider; the workers ended with their
// models.
func (p *Provider) Close() error { return p.inproc.Close() }

// isolatedModel is a model version whose backend runs in a worker.
type isolatedModel struct {
	p *Provider
	m *core.Model

	instances []string // the worker's instances, in order
	// outputNames holds the configuration's output names, by name: a
	// response's outputs share these strings (decodeResponse).
	outputNames map[string]string
	// depth is how many batches of one instance the worker holds at most:
	// 1, or Options.PipelineDepth where the model pipelines. A model
	// pipelines, the server sending an instance's next batches before its
	// last one returned (process.execute), when nothing the server does
	// between two executions of the model depends on the first's end: no
	// batcher forms the next batch, no sequence's state or rate limiter's
	// resources carry over, no device lock is held, no execute timeout
	// counts (pipelinable). The batches then wait in the worker, not a
	// round trip away, and the worker reads several in one wake-up. The
	// price: a batch that an instance's scheduler took while the worker
	// holds depth of its batches waits for that instance, even when
	// another became free meanwhile.
	depth int

	mu       sync.Mutex
	cur      *process // nil while restarting
	down     error    // why it is not serving, while cur is nil
	closing  bool
	restarts int
	backoff  time.Duration
}

var _ core.BackendModel = (*isolatedModel)(nil)

// loadMsg is what a worker of the version is asked to load: the version's
// configuration, pinned to it.
func (mod *isolatedModel) loadMsg() *loadMsg {
	o := &mod.p.opts
	cfg := proto.Clone(mod.m.Config()).(*configpb.ModelConfig)
	cfg.VersionPolicy = &configpb.ModelVersionPolicy{PolicyChoice: &configpb.ModelVersionPolicy_Specific_{
		Specific: &configpb.ModelVersionPolicy_Specific{Versions: []int64{mod.m.Version()}}}}
	js, _ := modelconfig.ToJSON(cfg)
	return &loadMsg{
		Name: mod.m.Name(), Version: mod.m.Version(), Dir: mod.m.Path(), Config: js,
		BackendDir: o.BackendDirectory, BackendConfig: o.BackendConfig, DisableAutoComplete: o.DisableAutoComplete,
		MinComputeCapability: o.MinComputeCapability, GPUs: o.GPUs, LogVerbose: o.LogVerbose,
		MaxTensorBytes: o.MaxTensorBytes, CallTimeoutMs: o.CallTimeout.Milliseconds(),
		InProcessMaxTensorBytes: o.InProcessMaxTensorBytes, InProcessMaxPending: o.InProcessMaxPending,
		InProcessStallTimeoutMs: o.InProcessStallTimeout.Milliseconds(),
		HostPolicies:            o.HostPolicies,
		PipelineDepth:           o.PipelineDepth,
		CUDADriver:              o.CUDADriverLibrary,
		CUDAPoolBytes:           o.CUDAPoolBytes,
		PinnedPoolBytes:         o.PinnedPoolBytes,
	}
}

// NewInstance returns the worker's instance of the same name.
func (mod *isolatedModel) NewInstance(inst *core.Instance) (core.BackendInstance, error) {
	for i, name := range mod.instances {
		if name == inst.Name() {
			return &isolatedInstance{mod: mod, index: i}, nil
		}
	}
	return nil, core.Errorf(core.CodeInternal, "model %q: the worker has no instance %q", mod.m.Name(), inst.Name())
}

// ParallelInstanceLoading is true: the worker created the instances.
func (mod *isolatedModel) ParallelInstanceLoading() bool { return true }

// Finalize unloads the version in its worker, which then exits.
func (mod *isolatedModel) Finalize() error {
	mod.p.mu.Lock()
	delete(mod.p.models, mod)
	mod.p.mu.Unlock()
	mod.mu.Lock()
	mod.closing = true
	pr := mod.cur
	mod.cur = nil
	mod.mu.Unlock()
	if pr != nil {
		pr.stop(mod.p.opts.CallTimeout)
	}
	return nil
}

// current returns the serving worker, or the reason there is none.
func (mod *isolatedModel) current() (*process, error) {
	mod.mu.Lock()
	defer mod.mu.Unlock()
	if mod.cur == nil {
		if mod.down != nil {
			return nil, mod.down
		}
		return nil, core.Errorf(core.CodeUnavailable, "model '%s' version %d is unloading", mod.m.Name(), mod.m.Version())
	}
	return mod.cur, nil
}

// InputBuffer gives a request's received message a region of the serving
// worker's input pool (core.InputMemory), so that its inputs reach the
// worker where they lie, with no copy: for a message of at least
// minPooledBytes, while the pool has room; nil otherwise.
func (mod *isolatedModel) InputBuffer(n int) core.InputBuffer {
	if n < minPooledBytes {
		return nil
	}
	pr, err := mod.current()
	if err != nil {
		return nil
	}
	r, forget, err := pr.inputs.take(n)
	for _, id := range forget {
		e := getEncoder()
		encodeKey(e, msgForget, id, 0)
		_ = pr.conn.Send(e.Bytes()) // a dead worker needs it no more
		putEncoder(e)
	}
	if r == nil || err != nil {
		return nil
	}
	pr.inputs.lease(r)
	return &inputLease{pool: pr.inputs, r: r, buf: r.region.Bytes()[:n:n]}
}

// inputLease is a region of a worker's input pool that a request's
// received message lies in (isolatedModel.InputBuffer).
type inputLease struct {
	pool     *regionPool
	r        *pooledRegion
	buf      []byte
	released atomic.Bool
}

// Bytes returns the message's buffer.
func (l *inputLease) Bytes() []byte { return l.buf }

// Release gives the region back to its pool (a second call does nothing).
func (l *inputLease) Release() {
	if !l.released.Swap(true) {
		l.pool.unlease(l.r)
	}
}

func (mod *isolatedModel) executeTimeout() time.Duration { return mod.p.opts.ExecuteTimeout }

// pipelinable reports whether a model of configuration cfg, served with
// an execute timeout of timeout, pipelines (isolatedModel.depth).
func pipelinable(cfg *configpb.ModelConfig, timeout time.Duration) bool {
	if timeout > 0 || cfg.GetDynamicBatching() != nil || cfg.GetSequenceBatching() != nil || cfg.GetEnsembleScheduling() != nil {
		return false
	}
	for _, g := range cfg.GetInstanceGroup() {
		if g.GetRateLimiter() != nil || g.GetKind() == configpb.ModelInstanceGroup_KIND_GPU {
			return false
		}
	}
	return true
}

func (mod *isolatedModel) instanceName(i int) string {
	if i < len(mod.instances) {
		return mod.instances[i]
	}
	return fmt.Sprint(i)
}

// died takes the dead worker pr out of service and restarts the model's
// worker, unless the version unloads.
func (mod *isolatedModel) died(pr *process, err error) {
	mod.mu.Lock()
	if mod.cur != pr || mod.closing {
		mod.mu.Unlock()
		return
	}
	mod.cur = nil
	mod.down = err
	if mod.backoff == 0 {
		mod.backoff = mod.p.opts.RestartBackoff
	}
	mod.mu.Unlock()
	go mod.restart()
}

// restart starts new workers, backing off, until one has loaded the
// version or the version unloads.
func (mod *isolatedModel) restart() {
	o := &mod.p.opts
	for {
		mod.mu.Lock()
		wait := mod.backoff
		mod.mu.Unlock()
		time.Sleep(wait)
		mod.mu.Lock()
		closing := mod.closing
		mod.mu.Unlock()
		if closing {
			return
		}
		pr, loaded, err := startProcess(mod)
		if err == nil && !sameInstances(loaded.Instances, mod.instances) {
			pr.stop(o.CallTimeout)
			err = errors.New("the restarted worker has other instances")
		}
		mod.mu.Lock()
		if mod.closing {
			mod.mu.Unlock()
			if pr != nil {
				pr.stop(o.CallTimeout)
			}
			return
		}
		if err != nil {
			mod.backoff = min(2*mod.backoff, o.RestartBackoffMax)
			mod.down = core.Errorf(core.CodeUnavailable, "model '%s' version %d: its worker is restarting (the last try failed: %v)",
				mod.m.Name(), mod.m.Version(), err)
			mod.mu.Unlock()
			o.Logger.Errorf("%v; next try in %v", mod.down, mod.backoff)
			continue
		}
		// Counted before the new worker takes a request: a client its
		// answer reaches finds the restart in the metrics.
		mod.m.NoteBackendRestart()
		mod.cur, mod.down = pr, nil
		mod.restarts++
		mod.backoff = o.RestartBackoff
		mod.mu.Unlock()
		o.Logger.Infof("model %q version %d: restarted in worker process %d (restart %d)", mod.m.Name(), mod.m.Version(), pr.pid, mod.restarts)
		return
	}
}

func sameInstances(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// isolatedInstance is one instance of an isolated model.
type isolatedInstance struct {
	mod   *isolatedModel
	index int
}

var _ core.BackendInstance = (*isolatedInstance)(nil)

// Execute runs the batch in the worker; while the worker restarts, it
// fails at once with why.
func (in *isolatedInstance) Execute(batch []*core.Request) error {
	pr, err := in.mod.current()
	if err != nil {
		return err
	}
	return pr.execute(in.index, batch)
}

// Finalize does nothing: the worker finalizes its instances as it unloads.
func (in *isolatedInstance) Finalize() error { return nil }

// Ready reports whether the model's worker serves.
func (in *isolatedInstance) Ready() error {
	_, err := in.mod.current()
	return err
}
