package trace

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/serverlog"
)

// DefaultQueueSize is how many finished traces wait for the writer by
// default; past it, traces are dropped and counted (Manager.Dropped).
const DefaultQueueSize = 1024

// DefaultMaxFileBytes is Options.MaxFileBytes unless told otherwise.
const DefaultMaxFileBytes = 1 << 30

// Options configure a Manager.
type Options struct {
	// Setting is the server's trace setting at start (--trace-config):
	// what clearing a setting returns to.
	Setting Setting
	// ModeOptions are the options of the mode (--trace-config
	// <mode>,<key>=<value>), reported with the settings.
	ModeOptions map[string]string
	// Exporter takes the traces in ModeOpenTelemetry. Required in that
	// mode; unused in ModeTriton.
	Exporter Exporter
	// QueueSize bounds the finished traces waiting to be written or
	// exported (default DefaultQueueSize).
	QueueSize int
	// MaxFileBytes bounds the bytes of trace files the manager writes in
	// ModeTriton, every file together (the trace file itself and its
	// indexed files), and the traces it holds for indexed files not yet
	// written count against it too (default DefaultMaxFileBytes). A trace
	// that would take the files past it is dropped and counted
	// (Manager.Dropped), and the first one is logged: a server left
	// tracing tensors cannot fill its disk, nor its memory.
	MaxFileBytes int64
	// Logger receives the writer's errors (default: discarded).
	Logger *serverlog.Logger
}

// Exporter takes the traces of ModeOpenTelemetry.
type Exporter interface {
	// Start begins trace t of the request s describes, parent being what
	// Start returned for s.Parent (nil for a client's request). It runs on
	// the goroutine that submits the request, so it must not block. What
	// it returns is kept with the trace and handed to Export.
	Start(t *core.Trace, s core.TraceStart, parent any) any
	// Export takes a finished trace, on the manager's writer goroutine.
	Export(t *core.Trace, started any)
	// Close sends what is pending and stops, by the deadline of ctx.
	Close(ctx context.Context) error
}

// Manager is the server's tracer (a core.TraceStarter) and the state of the
// trace extension: the server's setting and each model's, which clients
// read and update. Traces finish into a bounded queue that one goroutine
// writes to the trace file or hands to the Exporter: neither sampling nor
// writing ever blocks a request or a backend thread; a trace that finds
// the queue full is dropped and counted. Safe for concurrent use.
type Manager struct {
	opts  Options
	log   *serverlog.Logger
	queue chan finished

	mu       sync.Mutex                 // updates
	global   atomic.Pointer[snapshot]   // the server's setting in force
	models   atomic.Pointer[modelTable] // each model's, copied on write
	fallback map[string]bool            // models whose setting follows the server's in part (guarded by mu)
	retired  []*snapshot                // settings replaced, for the writer to close (guarded by mu)
	poke     chan struct{}              // wakes the writer for retired settings
	dropped  atomic.Uint64
	done     chan struct{} // closed when the writer has stopped
	closing  sync.Once
	stop     chan struct{}
}

type modelTable map[string]*snapshot

// finished is a trace on its way to the writer.
type finished struct {
	t    *core.Trace
	data *traceData
}

// traceData is what the manager attaches to each of its traces.
type traceData struct {
	snap    *snapshot // the setting the trace was sampled under
	started any       // what the Exporter's Start returned
}

// snapshot is a setting in force, with the state of its sampling. An
// update replaces it: traces keep the one they were sampled under.
type snapshot struct {
	Setting
	specified fields // the fields set on this setting (not following the fallback)
	reason    string // why it traces nothing ("" when it traces)

	mu        sync.Mutex
	requests  uint64 // requests seen, for the rate
	remaining int32  // traces left to create (-1: no limit)
	created   uint64
	collected atomic.Uint64 // traces written (writer)
}

// fields is a set of Setting fields.
type fields uint8

const (
	fLevel fields = 1 << iota
	fRate
	fCount
	fLogFrequency
	fFile
	fAll = fLevel | fRate | fCount | fLogFrequency | fFile
)

func newSnapshot(s Setting, specified fields) *snapshot {
	return &snapshot{Setting: s, specified: specified, reason: s.invalidReason(), remaining: s.Count}
}

// New returns a manager with opts, its writer started. Close stops it.
func New(opts Options) (*Manager, error) {
	if opts.Setting.Mode == ModeOpenTelemetry && opts.Exporter == nil {
		return nil, errors.New("trace: mode opentelemetry needs an Exporter")
	}
	if opts.QueueSize <= 0 {
		opts.QueueSize = DefaultQueueSize
	}
	if opts.MaxFileBytes <= 0 {
		opts.MaxFileBytes = DefaultMaxFileBytes
	}
	if opts.Logger == nil {
		opts.Logger = serverlog.Discard()
	}
	m := &Manager{opts: opts, log: opts.Logger, queue: make(chan finished, opts.QueueSize),
		fallback: map[string]bool{}, poke: make(chan struct{}, 1), done: make(chan struct{}), stop: make(chan struct{})}
	m.global.Store(newSnapshot(opts.Setting, 0))
	m.models.Store(&modelTable{})
	w := newWriter(m)
	go w.run()
	return m, nil
}

var (
	_ core.Tracer       = (*Manager)(nil)
	_ core.TraceStarter = (*Manager)(nil)
)

// settingOf returns the setting in force for model.
func (m *Manager) settingOf(model string) *snapshot {
	if s := (*m.models.Load())[model]; s != nil {
		return s
	}
	return m.global.Load()
}

// Sample reports whether a request to model would be traced now, counting
// it as one of the requests the rate samples from. The server calls
// StartTrace instead; Sample serves callers of the plain core.Tracer.
func (m *Manager) Sample(model string, _ int64) bool {
	return m.settingOf(model).sample(false)
}

// StartTrace traces a request as its model's setting says: one request in
// Rate while Count lasts, at the setting's Level. A step of a traced
// request is traced as its child whatever the sampling; a request that
// brings the client's trace context is traced in ModeOpenTelemetry
// whatever the rate and count, as Triton's context propagation does.
func (m *Manager) StartTrace(s core.TraceStart) *core.Trace {
	var snap *snapshot
	var parentData *traceData
	if s.Parent != nil {
		if pd, ok := s.Parent.Data().(*traceData); ok {
			parentData, snap = pd, pd.snap
			// A child is one more trace the writer waits for before it
			// writes out a retired setting's last file.
			snap.mu.Lock()
			snap.created++
			snap.mu.Unlock()
		}
	}
	if snap == nil {
		snap = m.settingOf(s.Model)
		force := snap.Mode == ModeOpenTelemetry && s.Context.Parent != ""
		if !snap.sample(force) {
			return nil
		}
	}
	t := core.NewTrace(s, snap.Level)
	data := &traceData{snap: snap}
	if snap.Mode == ModeOpenTelemetry {
		var parent any
		if parentData != nil {
			parent = parentData.started
		}
		data.started = m.opts.Exporter.Start(t, s, parent)
	}
	t.SetData(data)
	return t
}

// sample decides for one request: one in Rate while the count lasts (a
// forced trace ignores the rate and the count, not the level).
func (s *snapshot) sample(force bool) bool {
	if s.reason != "" {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !force {
		s.requests++
		if s.requests%uint64(s.Rate) != 0 || s.remaining == 0 {
			return false
		}
		if s.remaining > 0 {
			s.remaining--
		}
	}
	s.created++
	return true
}

// Finish queues a finished trace for the writer, or drops it, counted,
// when the queue is full: it never waits.
func (m *Manager) Finish(t *core.Trace) {
	data, ok := t.Data().(*traceData)
	if !ok {
		return
	}
	select {
	case <-m.stop:
		m.dropped.Add(1)
		return
	default:
	}
	select {
	case m.queue <- finished{t: t, data: data}:
	default:
		m.dropped.Add(1)
		data.snap.collected.Add(1)
	}
}

// Dropped returns how many finished traces were dropped because the queue
// was full, or the trace files had reached Options.MaxFileBytes.
func (m *Manager) Dropped() uint64 { return m.dropped.Load() }

// Setting returns the setting in force for model ("" for the server's),
// its count being what is left of it, and the mode's options.
func (m *Manager) Setting(model string) (Setting, map[string]string) {
	snap := m.settingOf(model)
	s := snap.Setting
	s.Count = snap.left()
	return s, m.opts.ModeOptions
}

// Update changes the setting of model ("" for the server's) as Triton's
// trace manager does: a field set takes the new value, a field cleared
// follows its fallback again (a model's the server's setting, the
// server's its setting at start), other fields keep whether they were set.
// A model's setting with no field set is dropped: the model follows the
// server's. After an update of the server's setting, the models that
// follow it in part take the new values. A setting that would trace
// nothing for a reason other than its level being OFF is refused
// (CodeInvalidArg, "Attempting to set invalid trace setting :<why>").
func (m *Manager) Update(model string, u Update) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.updateLocked(model, u); err != nil {
		return err
	}
	if model == "" {
		for name := range m.fallback {
			if err := m.updateLocked(name, Update{}); err != nil {
				return err
			}
		}
	}
	return nil
}

func (m *Manager) updateLocked(model string, u Update) error {
	var current, fallback *snapshot
	if model != "" {
		current = (*m.models.Load())[model]
		fallback = m.global.Load()
	} else {
		current = m.global.Load()
		fallback = newSnapshot(m.opts.Setting, 0)
	}
	next := fallback.Setting
	next.Count = fallback.left()
	var specified fields
	keep := func(f fields, set, clear bool) bool {
		on := !clear && (set || (current != nil && current.specified&f != 0))
		if on {
			specified |= f
		}
		return on
	}
	if keep(fLevel, u.Level != nil, u.ClearLevel) {
		next.Level = pick(u.Level, current, func(s *snapshot) core.TraceLevel { return s.Level })
	}
	if keep(fRate, u.Rate != nil, u.ClearRate) {
		next.Rate = pick(u.Rate, current, func(s *snapshot) uint32 { return s.Rate })
	}
	if keep(fCount, u.Count != nil, u.ClearCount) {
		next.Count = pick(u.Count, current, (*snapshot).left)
	}
	if keep(fLogFrequency, u.LogFrequency != nil, u.ClearLogFrequency) {
		next.LogFrequency = pick(u.LogFrequency, current, func(s *snapshot) uint32 { return s.LogFrequency })
	}
	if current != nil && current.specified&fFile != 0 {
		specified |= fFile
		next.File = current.File
	}
	if model != "" {
		switch specified {
		case fAll &^ fFile, fAll:
			delete(m.fallback, model)
		case 0:
			m.replaceModel(model, nil)
			delete(m.fallback, model)
			return nil
		default:
			m.fallback[model] = true
		}
	}
	snap := newSnapshot(next, specified)
	if snap.reason != "" && next.Level != core.TraceLevelDisabled {
		return core.Errorf(core.CodeInvalidArg, "Attempting to set invalid trace setting :%s", snap.reason)
	}
	if model == "" {
		m.retire(m.global.Swap(snap))
	} else {
		m.replaceModel(model, snap)
	}
	return nil
}

// left is what is left of the setting's count (-1: no limit).
func (s *snapshot) left() int32 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.remaining
}

// pick is the value an update sets, or else the current one.
func pick[T any](v *T, current *snapshot, get func(*snapshot) T) T {
	if v != nil {
		return *v
	}
	return get(current)
}

// replaceModel installs (or, with nil, removes) a model's setting.
func (m *Manager) replaceModel(model string, snap *snapshot) {
	old := *m.models.Load()
	table := make(modelTable, len(old)+1)
	for k, v := range old {
		table[k] = v
	}
	if snap == nil {
		delete(table, model)
	} else {
		table[model] = snap
	}
	m.models.Store(&table)
	m.retire(old[model])
}

// retire hands a replaced setting to the writer, which writes what it
// holds of it once its traces are all in.
func (m *Manager) retire(s *snapshot) {
	if s == nil {
		return
	}
	m.retired = append(m.retired, s)
	select {
	case m.poke <- struct{}{}:
	default:
	}
}

func (m *Manager) takeRetired() []*snapshot {
	m.mu.Lock()
	defer m.mu.Unlock()
	r := m.retired
	m.retired = nil
	return r
}

// Close stops taking traces, writes or exports those queued, closes the
// trace files and the Exporter, by the deadline of ctx. Traces that finish
// after Close are dropped.
func (m *Manager) Close(ctx context.Context) error {
	m.closing.Do(func() { close(m.stop) })
	select {
	case <-m.done:
	case <-ctx.Done():
		return errors.New("trace: the writer did not finish before the deadline")
	}
	if m.opts.Exporter != nil && m.opts.Setting.Mode == ModeOpenTelemetry {
		return m.opts.Exporter.Close(ctx)
	}
	return nil
}

// DroppedMetric is the Prometheus counter of the traces dropped because
// the queue was full or the trace files had reached their bound.
const DroppedMetric = "tritonhost_traces_dropped_total"

// Collector returns the Prometheus collector of Dropped, for the metrics
// endpoint.
func (m *Manager) Collector() prometheus.Collector {
	return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: DroppedMetric,
		Help: "Finished traces dropped because the trace queue was full (--trace-queue-size) or the trace files had reached --trace-file-max-size"},
		func() float64 { return float64(m.Dropped()) })
}
