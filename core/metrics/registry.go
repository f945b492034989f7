// Package metrics is the server's metrics registry: metric families (a name,
// help text and kind) holding time series told apart by their labels. The
// frontend/metricsserver package serves them in Prometheus' text format.
//
// The registry does not own the values. Each series is read through a
// Collector when the registry is gathered, so a value may live in Go (the
// Counter, Gauge and Histogram of this package, for server-side metrics) or in
// C memory that backends update through the TRITONSERVER_Metric* API (package
// abi) without ever crossing into Go.
//
// All methods are safe for concurrent use.
package metrics

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
)

// Kind is a metric family's type, numbered as TRITONSERVER_MetricKind.
type Kind int

// The kinds of metric family.
const (
	KindCounter Kind = iota
	KindGauge
	KindHistogram
)

// String returns the kind's name in the text format ("counter", ...).
func (k Kind) String() string {
	switch k {
	case KindCounter:
		return "counter"
	case KindGauge:
		return "gauge"
	case KindHistogram:
		return "histogram"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Label is one label of a series.
type Label struct {
	Name, Value string
}

// Sample is one reading of a series.
type Sample struct {
	// Value is a counter's or a gauge's value.
	Value float64
	// Bounds are a histogram's bucket upper bounds, strictly ascending,
	// without +Inf. Counts has one entry per bound and a last one for the
	// observations above the largest bound; each counts only the
	// observations of its own bucket (not cumulative). Sum is the sum of
	// every observation.
	Bounds []float64
	Counts []uint64
	Sum    float64
}

// Collector reads the current value of one series.
type Collector interface {
	// Collect stores the value in s, which the registry hands over zeroed
	// and does not share. A histogram's Bounds may be a slice the collector
	// keeps (the registry never modifies it); Counts must be a new slice or
	// one owned by s. Collect runs while the series' family is locked
	// against Add and Remove, and must not call them.
	Collect(s *Sample)
}

// CollectorFunc adapts a function to Collector.
type CollectorFunc func(s *Sample)

// Collect calls f(s).
func (f CollectorFunc) Collect(s *Sample) { f(s) }

// Registry holds metric families by name.
type Registry struct {
	mu       sync.Mutex
	families map[string]*Family
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{families: map[string]*Family{}}
}

// Family is a named set of series of one kind.
type Family struct {
	name string
	help string
	kind Kind
	regs int // registrations not yet unregistered; guarded by the registry's mu

	mu     sync.RWMutex // guards series; read-held while they are collected
	series map[string]*Series
}

// Series is one time series of a family.
type Series struct {
	key    string
	labels []Label // sorted by name
	c      Collector
	refs   int // guarded by the family's mu
}

// Register returns the family called name, creating it with help and kind
// if the registry has none of that name. Registering an existing name with
// the same kind returns the existing family, whose help stays the first
// registration's (Prometheus client registries merge families the same
// way); with another kind it fails. Each successful Register must be
// matched by one Unregister. Every error is the caller's mistake (an
// invalid name or kind, or a kind conflict).
func (r *Registry) Register(name, help string, kind Kind) (*Family, error) {
	if !ValidMetricName(name) {
		return nil, fmt.Errorf("invalid metric name %q: want [a-zA-Z_:][a-zA-Z0-9_:]*, not starting with __", name)
	}
	if kind < KindCounter || kind > KindHistogram {
		return nil, fmt.Errorf("metric %q: unsupported kind %d", name, int(kind))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if f, ok := r.families[name]; ok {
		if f.kind != kind {
			return nil, fmt.Errorf("metric %q is already registered as a %v, not a %v", name, f.kind, kind)
		}
		f.regs++
		return f, nil
	}
	f := &Family{name: name, help: help, kind: kind, regs: 1, series: map[string]*Series{}}
	r.families[name] = f
	return f, nil
}

// Unregister drops one registration of f. After the last one f leaves the
// registry and its output, with whatever series it still has; a later
// Register of the same name makes a new family.
func (r *Registry) Unregister(f *Family) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.families[f.name] != f || f.regs == 0 {
		return
	}
	f.regs--
	if f.regs == 0 {
		delete(r.families, f.name)
	}
}

// Name returns the family's name.
func (f *Family) Name() string { return f.name }

// Help returns the family's help text.
func (f *Family) Help() string { return f.help }

// Kind returns the family's kind.
func (f *Family) Kind() Kind { return f.kind }

// Add returns f's series with labels, taking one more reference to it. A
// series is identified by its set of labels; their order does not matter.
// If f has no such series yet, newCollector makes the collector that reads
// it (called with f locked: it must not use f). Label names must be valid
// Prometheus label names, unique, not starting with "__", and not "le" in a
// histogram. Each successful Add must be matched by one Remove.
func (f *Family) Add(labels []Label, newCollector func() (Collector, error)) (*Series, error) {
	sorted := slices.Clone(labels)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	for i, l := range sorted {
		switch {
		case !ValidLabelName(l.Name):
			return nil, fmt.Errorf("metric %q: invalid label name %q: want [a-zA-Z_][a-zA-Z0-9_]*, not starting with __", f.name, l.Name)
		case f.kind == KindHistogram && l.Name == "le":
			return nil, fmt.Errorf("metric %q: a histogram's series may not have a label named \"le\"", f.name)
		case i > 0 && sorted[i-1].Name == l.Name:
			return nil, fmt.Errorf("metric %q: label %q given twice", f.name, l.Name)
		}
	}
	key := seriesKey(sorted)

	f.mu.Lock()
	defer f.mu.Unlock()
	if s, ok := f.series[key]; ok {
		s.refs++
		return s, nil
	}
	c, err := newCollector()
	if err != nil {
		return nil, err
	}
	s := &Series{key: key, labels: sorted, c: c, refs: 1}
	f.series[key] = s
	return s, nil
}

// Remove drops one reference to s, taken by Add, and reports whether it was
// the last. The series has then left f, and since Remove waits for any
// gathering in progress, its collector is not running and will never be
// called again: whatever it reads may be freed.
func (f *Family) Remove(s *Series) (last bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.series[s.key] != s || s.refs == 0 {
		return false
	}
	s.refs--
	if s.refs > 0 {
		return false
	}
	delete(f.series, s.key)
	return true
}

// Labels returns the series' labels, sorted by name.
func (s *Series) Labels() []Label { return slices.Clone(s.labels) }

// Collector returns the collector that reads the series.
func (s *Series) Collector() Collector { return s.c }

// FamilySnapshot is one family as gathered.
type FamilySnapshot struct {
	Name   string
	Help   string
	Kind   Kind
	Series []SeriesSnapshot // sorted by labels
}

// SeriesSnapshot is one series as gathered.
type SeriesSnapshot struct {
	Labels []Label // sorted by name
	Sample Sample
}

// Gather reads every series of every family: families sorted by name,
// series by their labels. Families without series are left out.
func (r *Registry) Gather() []FamilySnapshot {
	r.mu.Lock()
	families := make([]*Family, 0, len(r.families))
	for _, f := range r.families {
		families = append(families, f)
	}
	r.mu.Unlock()
	slices.SortFunc(families, func(a, b *Family) int { return strings.Compare(a.name, b.name) })

	out := make([]FamilySnapshot, 0, len(families))
	for _, f := range families {
		if snap := f.gather(); len(snap.Series) > 0 {
			out = append(out, snap)
		}
	}
	return out
}

func (f *Family) gather() FamilySnapshot {
	snap := FamilySnapshot{Name: f.name, Help: f.help, Kind: f.kind}
	f.mu.RLock()
	defer f.mu.RUnlock()
	snap.Series = make([]SeriesSnapshot, 0, len(f.series))
	for _, s := range f.series {
		ss := SeriesSnapshot{Labels: s.labels}
		s.c.Collect(&ss.Sample)
		snap.Series = append(snap.Series, ss)
	}
	slices.SortFunc(snap.Series, func(a, b SeriesSnapshot) int { return compareLabels(a.Labels, b.Labels) })
	return snap
}

func compareLabels(a, b []Label) int {
	return slices.CompareFunc(a, b, func(x, y Label) int {
		return cmp.Or(strings.Compare(x.Name, y.Name), strings.Compare(x.Value, y.Value))
	})
}

// seriesKey encodes sorted labels unambiguously.
func seriesKey(sorted []Label) string {
	var b strings.Builder
	for _, l := range sorted {
		fmt.Fprintf(&b, "%s=%q,", l.Name, l.Value)
	}
	return b.String()
}

// ValidMetricName reports whether name is a valid Prometheus metric name
// that is not reserved: [a-zA-Z_:][a-zA-Z0-9_:]*, not starting with "__".
func ValidMetricName(name string) bool {
	return validName(name, true)
}

// ValidLabelName reports whether name is a valid Prometheus label name that
// is not reserved: [a-zA-Z_][a-zA-Z0-9_]*, not starting with "__".
func ValidLabelName(name string) bool {
	return validName(name, false)
}

func validName(name string, colon bool) bool {
	if name == "" || strings.HasPrefix(name, "__") {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		ok := c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			(i > 0 && c >= '0' && c <= '9') || (colon && c == ':')
		if !ok {
			return false
		}
	}
	return true
}
