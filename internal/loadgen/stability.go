package loadgen

import (
	"errors"
	"fmt"
	"time"
)

// The defaults of perf_analyzer's stability rule.
const (
	// DefaultStableWindows is how many consecutive windows must agree.
	DefaultStableWindows = 3
	// DefaultStabilityPercentage is how far apart they may be, in percent
	// (--stability-percentage).
	DefaultStabilityPercentage = 10
	// DefaultMaxTrials bounds the windows measured at one load
	// (--max-trials).
	DefaultMaxTrials = 10
)

// Stability is the rule perf_analyzer measures by: windows are measured
// one after another until the last Windows of them agree, that is, until in
// each of throughput and latency the largest of them is at most Percentage
// percent above the smallest (and every one of them completed requests),
// or until MaxTrials windows were measured without that happening.
type Stability struct {
	Windows    int
	Percentage float64
	MaxTrials  int
	// Percentile, when positive (below 100), compares that latency
	// percentile of the windows (perf_analyzer's --percentile); else their
	// mean latency.
	Percentile float64
}

// DefaultStability is perf_analyzer's default: 3 windows within 10%, at
// most 10 windows, by mean latency.
var DefaultStability = Stability{Windows: DefaultStableWindows, Percentage: DefaultStabilityPercentage,
	MaxTrials: DefaultMaxTrials}

// Validate checks the rule's numbers.
func (s Stability) Validate() error {
	switch {
	case s.Windows < 1:
		return fmt.Errorf("stability needs at least 1 window, got %d", s.Windows)
	case s.MaxTrials < s.Windows:
		return fmt.Errorf("at most %d windows cannot make %d stable ones", s.MaxTrials, s.Windows)
	case s.Percentage < 0:
		return fmt.Errorf("the stability percentage %g is negative", s.Percentage)
	case s.Percentile < 0 || s.Percentile >= 100:
		return fmt.Errorf("the percentile %g is not between 0 and 100", s.Percentile)
	}
	return nil
}

// Latency returns the latency of w that the rule compares.
func (s Stability) Latency(w Result) time.Duration {
	if s.Percentile > 0 {
		return w.LatencyAt(s.Percentile / 100)
	}
	return w.Latency.Mean
}

// Stable reports whether the last s.Windows of windows agree.
func (s Stability) Stable(windows []Result) bool {
	if s.Windows < 1 || len(windows) < s.Windows {
		return false
	}
	last := windows[len(windows)-s.Windows:]
	within := func(value func(Result) float64) bool {
		lo, hi := value(last[0]), value(last[0])
		for _, w := range last[1:] {
			lo, hi = min(lo, value(w)), max(hi, value(w))
		}
		return lo > 0 && hi/lo <= 1+s.Percentage/100
	}
	return within(Result.Throughput) && within(func(w Result) float64 { return float64(s.Latency(w)) })
}

// ErrUnstable is what Settle returns when MaxTrials windows were measured
// and the last ones still did not agree.
var ErrUnstable = errors.New("the measurements did not stabilize")

// Settle measures windows with next until the last s.Windows of them are
// stable, and returns every window it measured. When s.MaxTrials windows
// pass without that, it returns them with ErrUnstable; when next fails, with
// next's error.
func (s Stability) Settle(next func() (Result, error)) ([]Result, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	var windows []Result
	for len(windows) < s.MaxTrials {
		w, err := next()
		if err != nil {
			return windows, err
		}
		windows = append(windows, w)
		if s.Stable(windows) {
			return windows, nil
		}
	}
	return windows, ErrUnstable
}
