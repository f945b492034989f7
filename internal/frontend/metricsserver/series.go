package metricsserver

import (
	"slices"
	"strconv"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/metrics"
)

// modelSeries is one series of the per-model families: the loaded model
// versions that share its labels, model and version. There is one of them
// unless the server runs with --model-namespacing and several repositories
// hold a model of that name; their counts then add up in the one series,
// as Triton's metric reporters of equal labels are one reporter.
type modelSeries struct {
	name, version string
	models        []*core.Model
}

// seriesOf groups models, sorted by name and version (Server.LoadedModels),
// into their series.
func seriesOf(models []*core.Model) []modelSeries {
	var out []modelSeries
	for _, m := range models {
		name, version := m.Name(), strconv.FormatInt(m.Version(), 10)
		if n := len(out); n > 0 && out[n-1].name == name && out[n-1].version == version {
			out[n-1].models = append(out[n-1].models, m)
			continue
		}
		out = append(out, modelSeries{name: name, version: version, models: []*core.Model{m}})
	}
	return out
}

// counters returns the sum of the counters of the series' models that
// keep (nil: all).
func (s modelSeries) counters(keep func(*core.Model) bool) (sum core.ModelCounters, restarts uint64) {
	for _, m := range s.models {
		if keep != nil && !keep(m) {
			continue
		}
		k := m.Counters()
		for _, p := range []struct{ to, from *core.Duration }{
			{&sum.Success, &k.Success}, {&sum.Fail, &k.Fail}, {&sum.Queue, &k.Queue},
			{&sum.ComputeInput, &k.ComputeInput}, {&sum.ComputeInfer, &k.ComputeInfer}, {&sum.ComputeOutput, &k.ComputeOutput},
			{&sum.CacheHit, &k.CacheHit}, {&sum.CacheMiss, &k.CacheMiss},
		} {
			p.to.Count += p.from.Count
			p.to.Ns += p.from.Ns
		}
		for i := range sum.Failures {
			sum.Failures[i] += k.Failures[i]
		}
		sum.InferenceCount += k.InferenceCount
		sum.ExecutionCount += k.ExecutionCount
		sum.Pending += k.Pending
		sum.CacheInsertFailures += k.CacheInsertFailures
		restarts += m.BackendRestarts()
	}
	return sum, restarts
}

// firstResponses returns the time-to-first-response histogram of the
// series' models, added up (the models whose buckets differ from the
// first one's are left out); false when none has one.
func (s modelSeries) firstResponses() (metrics.Sample, bool) {
	var sum metrics.Sample
	found := false
	for _, m := range s.models {
		h := m.FirstResponseHistogram()
		if h == nil {
			continue
		}
		var one metrics.Sample
		h.Collect(&one)
		switch {
		case !found:
			sum, found = one, true
			sum.Counts = slices.Clone(one.Counts)
		case slices.Equal(sum.Bounds, one.Bounds) && len(sum.Counts) == len(one.Counts):
			for i, c := range one.Counts {
				sum.Counts[i] += c
			}
			sum.Sum += one.Sum
		}
	}
	return sum, found
}
