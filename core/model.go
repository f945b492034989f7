package core

import (
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tritonhost/tritonhost/core/configpb"
	"github.com/tritonhost/tritonhost/core/metrics"
	"github.com/tritonhost/tritonhost/core/modelconfig"
	"github.com/tritonhost/tritonhost/core/serverlog"
)

// ModelReadiness is the readiness of a model version, as the repository index
// reports it.
type ModelReadiness int

// Readiness values.
const (
	ModelUnavailable ModelReadiness = iota
	ModelLoading
	ModelReady
	ModelUnloading
)

// String returns the readiness as Triton's repository index spells it.
func (s ModelReadiness) String() string {
	return [...]string{"UNAVAILABLE", "LOADING", "READY", "UNLOADING"}[s]
}

// Model is one loaded version of a model.
type Model struct {
	name    string
	version int64
	dir     string // <repository>/<model>
	log     *serverlog.Logger
	gpus    []int
	// maxTensor is Options.MaxTensorBytes: the largest input, output or
	// state value the model takes or keeps.
	maxTensor tensorLimit
	// callTimeout is Options.BackendCallTimeout, and lifecycles the
	// server's unfinished loads and unloads (see lifecycle).
	callTimeout        time.Duration
	callTimeoutSetting string
	lifecycles         *lifecycleSet
	srv                *Server // loads the version; its Options.Schedulers makes m.sched

	// The configuration may change only while the backend initializes the
	// model (auto-complete through SetConfig); it is frozen once loaded.
	cfgMu     sync.Mutex
	frozen    bool
	raw       *configpb.ModelConfig // as written in config.pbtxt
	cfg       *configpb.ModelConfig
	cfgJSON   []byte
	decoupled bool
	maxBatch  int64
	inputs    map[string]*configpb.ModelInput
	outputs   map[string]*configpb.ModelOutput
	// inputNames and inputConfigs are the configuration's inputs in order,
	// as outputNames and outputConfigs are its outputs. inputCount is how
	// many of them a request may send (those the sequence batcher does not
	// provide), requiredInputs the names of those it must.
	inputNames     []string
	inputConfigs   []*configpb.ModelInput
	inputCount     int
	requiredInputs []string
	// outputNames are the configuration's outputs in order: what a request
	// that names none asks for. Shared by those requests: never modified.
	// outputConfigs are their configurations, in the same order.
	outputNames   []string
	outputConfigs []*configpb.ModelOutput

	backend   BackendModel
	instances []*Instance
	sched     Scheduler
	stats     statsRecorder
	pending   atomic.Int64       // requests queued and not yet handed to the backend
	firstResp *metrics.Histogram // decoupled models: ms to the first response
	memory    memoryUsage
	readiness atomic.Int32
	// backendRestarts counts the restarts of its backend's worker process.
	backendRestarts atomic.Uint64

	// droppedResponses counts the responses past the first that the
	// backend sent to requests of this version while it is not decoupled.
	droppedResponses atomic.Uint64
}

// modelEnv is what a model version takes from its server's options.
type modelEnv struct {
	gpus               []int
	log                *serverlog.Logger
	maxTensor          tensorLimit
	callTimeout        time.Duration
	callTimeoutSetting string
	lifecycles         *lifecycleSet
	srv                *Server
}

func newModel(name string, version int64, dir string, raw, cfg *configpb.ModelConfig, env modelEnv) (*Model, error) {
	m := &Model{name: name, version: version, dir: dir, gpus: env.gpus, log: env.log, raw: raw,
		maxTensor: env.maxTensor, callTimeout: env.callTimeout, callTimeoutSetting: env.callTimeoutSetting, lifecycles: env.lifecycles, srv: env.srv,
		firstResp: newFirstResponseHistogram()}
	if err := m.applyConfig(cfg); err != nil {
		return nil, err
	}
	return m, nil
}

// Name returns the model name.
func (m *Model) Name() string { return m.name }

// Version returns the model version.
func (m *Model) Version() int64 { return m.version }

// Path returns the model's directory in the repository, <repository>/<model>.
func (m *Model) Path() string { return m.dir }

// VersionPath returns the version's directory, <repository>/<model>/<version>.
func (m *Model) VersionPath() string { return filepath.Join(m.dir, fmt.Sprint(m.version)) }

// Logger returns the server's logger.
func (m *Model) Logger() *serverlog.Logger { return m.log }

// Config returns the model configuration. Callers must not modify it.
func (m *Model) Config() *configpb.ModelConfig {
	m.cfgMu.Lock()
	defer m.cfgMu.Unlock()
	return m.cfg
}

// ConfigJSON returns the configuration as Triton hands it to backends
// (TRITONBACKEND_ModelConfig). Callers must not modify it.
func (m *Model) ConfigJSON() []byte {
	m.cfgMu.Lock()
	defer m.cfgMu.Unlock()
	return m.cfgJSON
}

// InputDataType returns the data type of the model's input name, and
// whether the model has such an input. A frontend uses it to spend nothing
// converting data that validation will refuse.
func (m *Model) InputDataType(name string) (DataType, bool) {
	in := m.InputConfig(name)
	if in == nil {
		return TypeInvalid, false
	}
	return DataType(in.GetDataType()), true
}

// InputConfig returns the configuration of the model's input name, or nil
// when the model has no such input. Callers must not modify it.
func (m *Model) InputConfig(name string) *configpb.ModelInput {
	return configNamed(name, m.inputNames, m.inputConfigs, m.inputs)
}

// OutputConfig returns the configuration of the model's output name, or
// nil when the model has no such output. Callers must not modify it.
func (m *Model) OutputConfig(name string) *configpb.ModelOutput {
	return configNamed(name, m.outputNames, m.outputConfigs, m.outputs)
}

// configNamed returns the configuration of the tensor name: configs[i] is
// that of names[i], byName has them all by name. Nil when there is none.
func configNamed[T *configpb.ModelInput | *configpb.ModelOutput](name string, names []string, configs []T, byName map[string]T) T {
	if len(names) <= outputScanMax {
		for i, n := range names {
			if n == name {
				return configs[i]
			}
		}
		return nil
	}
	return byName[name]
}

// outputScanMax is the most outputs OutputConfig (and inputs InputConfig)
// looks through in order rather than hashing the name: every output of
// every response is looked up, and comparing a few names (a backend's are
// often the very strings it was given) costs less than a hash.
const outputScanMax = 8

// Decoupled reports whether the model may send any number of responses per
// request (model_transaction_policy { decoupled: true }).
func (m *Model) Decoupled() bool { return m.decoupled }

// MaxBatchSize returns max_batch_size (0: the model does not batch).
func (m *Model) MaxBatchSize() int64 { return m.maxBatch }

// MaxTensorBytes returns the largest input, output or state value, in
// bytes, that the server holds for this model (Options.MaxTensorBytes). A
// backend layer that allocates for a backend (an output buffer, a state
// value) refuses a larger size before allocating.
func (m *Model) MaxTensorBytes() int64 { return m.maxTensor.bytes }

// InputBuffer returns a buffer of n bytes for a request's inputs from the
// version's backend when it shares memory with the server (InputMemory)
// and has one to give; nil otherwise, and while the version is not ready.
func (m *Model) InputBuffer(n int) InputBuffer {
	if m.Readiness() != ModelReady { // ready is stored after backend
		return nil
	}
	if im, ok := m.backend.(InputMemory); ok {
		return im.InputBuffer(n)
	}
	return nil
}

// Instances returns the model's instances.
func (m *Model) Instances() []*Instance { return m.instances }

// Readiness returns whether the version is loading, ready, unloading or unavailable.
func (m *Model) Readiness() ModelReadiness { return ModelReadiness(m.readiness.Load()) }

// NoteBackendRestart counts a restart of the process that hosts the
// version's backend (an isolated backend whose worker died);
// BackendRestarts returns the count.
func (m *Model) NoteBackendRestart() { m.backendRestarts.Add(1) }

// BackendRestarts returns how many times the version's backend process
// was restarted.
func (m *Model) BackendRestarts() uint64 { return m.backendRestarts.Load() }

// DroppedResponses returns how many responses past a request's first the
// backend sent while the model is not decoupled: the server dropped them
// (see Responder.Send).
func (m *Model) DroppedResponses() uint64 { return m.droppedResponses.Load() }

// Statistics returns a snapshot of the version's statistics.
func (m *Model) Statistics() ModelStatistics {
	s := m.stats.snapshot(m.name, m.version)
	s.MemoryUsage = m.memory.total()
	return s
}

// SetConfig replaces the configuration while the backend initializes the
// model (Triton's auto-complete). The new configuration is normalized and
// validated; after the model has loaded, SetConfig fails.
func (m *Model) SetConfig(cfg *configpb.ModelConfig) error {
	if err := modelconfig.Normalize(cfg, modelconfig.Defaults{ModelName: m.name, GPUs: m.gpus}); err != nil {
		return Errorf(CodeInvalidArg, "model %q: set config: %w", m.name, err)
	}
	if err := modelconfig.Validate(cfg); err != nil {
		return Errorf(CodeInvalidArg, "model %q: set config: %w", m.name, err)
	}
	return m.applyConfig(cfg)
}

// SetPreferredInstanceGroups re-derives the instance groups with the groups
// the backend prefers (TRITONBACKEND_BackendAttributeAddPreferredInstanceGroup):
// they seed a configuration that names no instance_group, and fill in the
// GPUs and counts that groups of the same kind leave unset, as in Triton.
// The backend provider calls it before the model initializes.
func (m *Model) SetPreferredInstanceGroups(groups []*configpb.ModelInstanceGroup) error {
	if len(groups) == 0 || m.raw == nil {
		return nil
	}
	cfg, err := normalizedConfig(m.raw, modelconfig.Defaults{ModelName: m.name, GPUs: m.gpus, PreferredGroups: groups})
	if err != nil {
		return Errorf(CodeInvalidArg, "model %q: with the backend's preferred instance groups: %w", m.name, err)
	}
	return m.applyConfig(cfg)
}

// Ready reports whether the version takes requests: it is loaded and every
// instance whose backend can tell (TRITONBACKEND_ModelInstanceReady) says so.
func (m *Model) Ready() error {
	if st := m.Readiness(); st != ModelReady {
		return Errorf(CodeUnavailable, "model %q version %d is %s", m.name, m.version, st)
	}
	for _, inst := range m.instances {
		if rc, ok := inst.backend.(interface{ Ready() error }); ok {
			if err := rc.Ready(); err != nil {
				return Errorf(CodeUnavailable, "model %q version %d instance %q is not ready: %w", m.name, m.version, inst.name, err)
			}
		}
	}
	return nil
}

func (m *Model) applyConfig(cfg *configpb.ModelConfig) error {
	if err := m.checkTensorDims(cfg); err != nil {
		return err
	}
	if err := m.checkTensorSizes(cfg); err != nil {
		return err
	}
	js, err := modelconfig.ToJSON(cfg)
	if err != nil {
		return Errorf(CodeInternal, "model %q: render config: %w", m.name, err)
	}
	firstResp, err := m.firstResponseHistogram(cfg) // model_metrics.go
	if err != nil {
		return err
	}
	m.cfgMu.Lock()
	defer m.cfgMu.Unlock()
	if m.frozen {
		return Errorf(CodeUnsupported, "model %q: the configuration can only change while the model initializes", m.name)
	}
	m.cfg, m.cfgJSON = cfg, js
	m.firstResp = firstResp
	m.decoupled = cfg.GetModelTransactionPolicy().GetDecoupled()
	m.maxBatch = int64(cfg.GetMaxBatchSize())
	m.inputs = make(map[string]*configpb.ModelInput, len(cfg.GetInput()))
	m.inputNames = make([]string, 0, len(cfg.GetInput()))
	m.inputConfigs = make([]*configpb.ModelInput, 0, len(cfg.GetInput()))
	m.inputCount, m.requiredInputs = 0, nil
	for _, in := range cfg.GetInput() {
		m.inputs[in.GetName()] = in
		m.inputNames = append(m.inputNames, in.GetName())
		m.inputConfigs = append(m.inputConfigs, in)
		if m.sequenceInput(in.GetName()) {
			continue
		}
		m.inputCount++
		if !in.GetOptional() {
			m.requiredInputs = append(m.requiredInputs, in.GetName())
		}
	}
	m.outputs = make(map[string]*configpb.ModelOutput, len(cfg.GetOutput()))
	m.outputNames = make([]string, 0, len(cfg.GetOutput()))
	m.outputConfigs = make([]*configpb.ModelOutput, 0, len(cfg.GetOutput()))
	for _, out := range cfg.GetOutput() {
		m.outputs[out.GetName()] = out
		m.outputNames = append(m.outputNames, out.GetName())
		m.outputConfigs = append(m.outputConfigs, out)
	}
	return nil
}

func (m *Model) freezeConfig() {
	m.cfgMu.Lock()
	m.frozen = true
	m.cfgMu.Unlock()
}

// requeue takes back a request its backend rescheduled.
func (m *Model) requeue(r *Request) error {
	if m.sched == nil {
		return Errorf(CodeUnavailable, "model %q version %d is not ready", m.name, m.version)
	}
	r.enterQueue()
	err := m.sched.Requeue(r)
	if err != nil {
		r.leaveQueue()
	}
	return err
}

func (m *Model) enqueue(r *Request) error {
	if m.sched == nil || m.Readiness() != ModelReady && m.Readiness() != ModelUnloading {
		return Errorf(CodeUnavailable, "model %q version %d is not ready", m.name, m.version)
	}
	r.enterQueue()
	err := m.sched.Enqueue(r)
	if err != nil {
		r.leaveQueue()
		m.stats.failure(r.requestStart, Nanotime(), FailureRejected)
	}
	return err
}

// reshape maps a client shape (config dims, with -1 wildcards) onto the
// configuration's reshape: each -1 of the reshape takes the next wildcard
// dimension's actual value, in order.
func reshape(shape []int64, batched bool, dims, to []int64) []int64 {
	return mapWildcards(shape, batched, dims, to)
}

// unreshape maps a backend output shape (the reshape) back to the configured
// dims, the inverse of reshape.
func unreshape(shape []int64, batched bool, from, dims []int64) []int64 {
	return mapWildcards(shape, batched, from, dims)
}

func mapWildcards(shape []int64, batched bool, from, to []int64) []int64 {
	offset := 0
	out := make([]int64, 0, len(to)+1)
	if batched && len(shape) > 0 {
		out = append(out, shape[0])
		offset = 1
	}
	var wild []int64
	for i, d := range from {
		if d == -1 && i+offset < len(shape) {
			wild = append(wild, shape[i+offset])
		}
	}
	for _, d := range to {
		if d == -1 && len(wild) > 0 {
			d, wild = wild[0], wild[1:]
		}
		out = append(out, d)
	}
	return out
}
