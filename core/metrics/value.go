package metrics

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
)

// Counter is a Go-side counter series: a value that only goes up. The zero
// value is a counter at 0, ready to use from any goroutine.
type Counter struct{ bits atomic.Uint64 }

// Add adds v, which must not be negative (or NaN): Add panics otherwise, as
// a counter that goes down is a bug in the caller.
func (c *Counter) Add(v float64) {
	if !(v >= 0) {
		panic(fmt.Sprintf("metrics: counter increment %v is negative or NaN", v))
	}
	addFloat(&c.bits, v)
}

// Value returns the current value.
func (c *Counter) Value() float64 { return math.Float64frombits(c.bits.Load()) }

// Collect implements Collector.
func (c *Counter) Collect(s *Sample) { s.Value = c.Value() }

// Gauge is a Go-side gauge series: a value that goes up and down. The zero
// value is a gauge at 0, ready to use from any goroutine.
type Gauge struct{ bits atomic.Uint64 }

// Set sets the value.
func (g *Gauge) Set(v float64) { g.bits.Store(math.Float64bits(v)) }

// Add adds v, which may be negative.
func (g *Gauge) Add(v float64) { addFloat(&g.bits, v) }

// Value returns the current value.
func (g *Gauge) Value() float64 { return math.Float64frombits(g.bits.Load()) }

// Collect implements Collector.
func (g *Gauge) Collect(s *Sample) { s.Value = g.Value() }

func addFloat(bits *atomic.Uint64, v float64) {
	for {
		old := bits.Load()
		if bits.CompareAndSwap(old, math.Float64bits(math.Float64frombits(old)+v)) {
			return
		}
	}
}

// Histogram is a Go-side histogram series.
type Histogram struct {
	bounds []float64 // immutable

	mu     sync.Mutex
	counts []uint64
	sum    float64
}

// NewHistogram returns a histogram with the given bucket upper bounds,
// which must be strictly ascending and not NaN; a last +Inf bound is
// dropped, since the +Inf bucket is always there.
func NewHistogram(bounds []float64) (*Histogram, error) {
	b, err := CheckBounds(bounds)
	if err != nil {
		return nil, err
	}
	return &Histogram{bounds: b, counts: make([]uint64, len(b)+1)}, nil
}

// CheckBounds checks histogram bucket bounds (strictly ascending, not NaN)
// and returns them without a last +Inf bound.
func CheckBounds(bounds []float64) ([]float64, error) {
	for i, b := range bounds {
		if math.IsNaN(b) {
			return nil, fmt.Errorf("histogram bucket bound %d is NaN", i)
		}
		if i > 0 && !(b > bounds[i-1]) {
			return nil, fmt.Errorf("histogram bucket bounds must be strictly ascending: bound %d (%v) is not above bound %d (%v)", i, b, i-1, bounds[i-1])
		}
	}
	if n := len(bounds); n > 0 && math.IsInf(bounds[n-1], 1) {
		bounds = bounds[:n-1]
	}
	return slices.Clone(bounds), nil
}

// Observe records one observation, in the first bucket whose bound is not
// below v.
func (h *Histogram) Observe(v float64) {
	i := sort.SearchFloat64s(h.bounds, v)
	h.mu.Lock()
	h.counts[i]++
	h.sum += v
	h.mu.Unlock()
}

// Collect implements Collector.
func (h *Histogram) Collect(s *Sample) {
	s.Bounds = h.bounds
	h.mu.Lock()
	s.Counts = slices.Clone(h.counts)
	s.Sum = h.sum
	h.mu.Unlock()
}
