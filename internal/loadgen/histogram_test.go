package loadgen

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

func TestHistogramPercentilesAreWithinItsPrecision(t *testing.T) {
	for _, tc := range []struct {
		name string
		gen  func(*rand.Rand) time.Duration
	}{
		{"uniform microseconds", func(r *rand.Rand) time.Duration { return time.Duration(r.IntN(1000)+1) * time.Microsecond }},
		{"exponential", func(r *rand.Rand) time.Duration { return time.Duration(r.ExpFloat64() * float64(time.Millisecond)) }},
		{"nanoseconds", func(r *rand.Rand) time.Duration { return time.Duration(r.IntN(100)) }},
		{"seconds", func(r *rand.Rand) time.Duration { return time.Duration(r.IntN(60)+1) * time.Second }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, 2))
			var h Histogram
			all := make([]time.Duration, 100000)
			for i := range all {
				all[i] = tc.gen(r)
				h.Record(all[i])
			}
			slices.Sort(all)
			for _, p := range []float64{0.5, 0.9, 0.95, 0.99, 1} {
				exact := all[max(int(p*float64(len(all)))-1, 0)]
				got := h.Percentile(p)
				if diff := float64(got-exact) / float64(max(exact, 1)); diff > 1.0/subBuckets+1e-9 || diff < -1.0/subBuckets-1e-9 {
					t.Errorf("p%.0f = %v, exact %v (off by %.2f%%)", 100*p, got, exact, 100*diff)
				}
			}
			s := h.Summary()
			if s.Min != all[0] || s.Max != all[len(all)-1] || h.Count() != uint64(len(all)) {
				t.Errorf("min %v max %v count %d; want %v %v %d", s.Min, s.Max, h.Count(), all[0], all[len(all)-1], len(all))
			}
		})
	}
}

func TestHistogramMergeEqualsRecordingEverything(t *testing.T) {
	var a, b, all Histogram
	for i := range 1000 {
		d := time.Duration(i*i) * time.Microsecond
		all.Record(d)
		if i%2 == 0 {
			a.Record(d)
		} else {
			b.Record(d)
		}
	}
	a.Merge(&b)
	if a.Summary() != all.Summary() || a.Count() != all.Count() {
		t.Fatalf("merged %+v, want %+v", a.Summary(), all.Summary())
	}
	var empty Histogram
	if empty.Summary() != (Percentiles{}) || empty.Percentile(0.5) != 0 {
		t.Fatal("an empty histogram has percentiles")
	}
}
