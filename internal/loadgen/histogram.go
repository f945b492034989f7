package loadgen

import (
	"math"
	"math/bits"
	"time"
)

// subBuckets is the number of buckets per power of two of nanoseconds: a
// recorded duration is off by at most 1/subBuckets (about 1.6%).
const subBuckets = 64

// Histogram records durations in log-linear buckets: constant memory
// whatever the count, percentiles within 1/subBuckets of the truth. The
// zero value is empty and ready. Not safe for concurrent use.
type Histogram struct {
	counts   [64 * subBuckets]uint64
	n        uint64
	sum      time.Duration
	min, max time.Duration
}

func bucketOf(d time.Duration) int {
	v := uint64(max(d, 1))
	exp := bits.Len64(v) - 1 // v in [2^exp, 2^(exp+1))
	if exp < 6 {
		return int(v) // small values exactly (v < 64)
	}
	sub := (v >> (exp - 6)) & (subBuckets - 1)
	return exp*subBuckets + int(sub)
}

// lowerBound returns the smallest duration of bucket b.
func lowerBound(b int) time.Duration {
	exp, sub := b/subBuckets, b%subBuckets
	if exp < 6 {
		return time.Duration(b)
	}
	return time.Duration((uint64(subBuckets) + uint64(sub)) << (exp - 6))
}

// Record adds one duration.
func (h *Histogram) Record(d time.Duration) {
	if h.n == 0 || d < h.min {
		h.min = d
	}
	if d > h.max {
		h.max = d
	}
	h.counts[bucketOf(d)]++
	h.n++
	h.sum += d
}

// Merge adds o's durations to h.
func (h *Histogram) Merge(o *Histogram) {
	if o.n == 0 {
		return
	}
	if h.n == 0 || o.min < h.min {
		h.min = o.min
	}
	h.max = max(h.max, o.max)
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.n += o.n
	h.sum += o.sum
}

// Count returns how many durations were recorded.
func (h *Histogram) Count() uint64 { return h.n }

// Percentile returns the duration below which the fraction p (0 to 1) of
// the recorded durations fall (0 when empty).
func (h *Histogram) Percentile(p float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	rank := uint64(math.Ceil(p * float64(h.n)))
	rank = min(max(rank, 1), h.n)
	var seen uint64
	for b, c := range h.counts {
		if seen += c; seen >= rank {
			return min(max(lowerBound(b), h.min), h.max)
		}
	}
	return h.max
}

// Summary returns the histogram's percentiles.
func (h *Histogram) Summary() Percentiles {
	if h.n == 0 {
		return Percentiles{}
	}
	return Percentiles{Min: h.min, Max: h.max, Mean: h.sum / time.Duration(h.n),
		P50: h.Percentile(0.50), P90: h.Percentile(0.90), P95: h.Percentile(0.95), P99: h.Percentile(0.99)}
}

// Percentiles summarize a set of durations.
type Percentiles struct {
	Min, Mean, P50, P90, P95, P99, Max time.Duration
}
