package core

import (
	"sort"

	"github.com/tritonhost/tritonhost/core/metrics"
)

// FailureReason classifies a failed request, as the reason label of
// Triton's nv_inference_request_failure metric.
type FailureReason int

// Failure reasons.
const (
	// FailureRejected: the scheduler refused the request (its queue was
	// full, or it timed out waiting there).
	FailureRejected FailureReason = iota
	// FailureCanceled: the client cancelled the request.
	FailureCanceled
	// FailureBackend: the backend failed the request (an error response, or
	// an execution that returned an error).
	FailureBackend
	// FailureOther: anything else (the model unloaded before the request
	// ran, a sequence that could not continue, ...).
	FailureOther
	numFailureReasons
)

var failureReasonNames = [numFailureReasons]string{"REJECTED", "CANCELED", "BACKEND", "OTHER"}

// String returns the reason as Triton's metric label spells it.
func (r FailureReason) String() string {
	if r >= 0 && r < numFailureReasons {
		return failureReasonNames[r]
	}
	return "OTHER"
}

// FailureReasons lists every reason, in label order.
func FailureReasons() []FailureReason {
	return []FailureReason{FailureRejected, FailureCanceled, FailureBackend, FailureOther}
}

func failureReasonOf(err error) FailureReason {
	if CodeOf(err) == CodeCancelled {
		return FailureCanceled
	}
	return FailureOther
}

// FirstResponseBucketsMs are the bucket bounds, in milliseconds, of a
// decoupled model's time-to-first-response histogram (Triton's defaults
// for nv_inference_first_response_histogram_ms).
var FirstResponseBucketsMs = []float64{100, 500, 2000, 5000}

// ModelCounters are the cumulative counters of one model version that a
// metrics endpoint serves: a few words read under the statistics lock,
// without the per-batch and per-response tables ModelStatistics copies.
type ModelCounters struct {
	// Success and Fail count requests and sum their durations (ns);
	// Failures splits Fail.Count by reason (index: FailureReason).
	Success, Fail                                    Duration
	Failures                                         [numFailureReasons]uint64
	Queue, ComputeInput, ComputeInfer, ComputeOutput Duration
	InferenceCount                                   uint64 // inferences, a batch of n counting n
	ExecutionCount                                   uint64 // backend executions
	// Pending is how many requests wait in the model's queues, received but
	// not yet handed to the backend.
	Pending int64
	// CacheHit and CacheMiss count the response cache's hits and misses
	// and sum their durations (ns: a hit's lookup; a miss's lookup and its
	// response's insert); CacheInsertFailures counts responses the cache
	// did not store (it failed, or Options.CacheMaxBytes was reached).
	CacheHit, CacheMiss Duration
	CacheInsertFailures uint64
}

// Counters returns the version's counters now.
func (m *Model) Counters() ModelCounters {
	st := &m.stats
	st.mu.Lock()
	inf := &st.s.Inference
	c := ModelCounters{Success: inf.Success, Fail: inf.Fail, Failures: st.failures,
		Queue: inf.Queue, ComputeInput: inf.ComputeInput, ComputeInfer: inf.ComputeInfer, ComputeOutput: inf.ComputeOutput,
		InferenceCount: st.s.InferenceCount, ExecutionCount: st.s.ExecutionCount,
		CacheHit: inf.CacheHit, CacheMiss: inf.CacheMiss, CacheInsertFailures: st.insertFailures}
	st.mu.Unlock()
	c.Pending = m.pending.Load()
	return c
}

// FirstResponseHistogram returns the histogram of the time from accepting
// a request to its first response, in milliseconds (bounds
// FirstResponseBucketsMs, or those its configuration's model_metrics
// sets: model_metrics.go), for a decoupled model; nil for the others.
func (m *Model) FirstResponseHistogram() *metrics.Histogram {
	if !m.decoupled {
		return nil
	}
	return m.firstResp
}

func (m *Model) observeFirstResponse(start uint64) {
	if !m.decoupled || m.firstResp == nil || start == 0 {
		return
	}
	m.firstResp.Observe(float64(span(start, Nanotime())) / 1e6)
}

func newFirstResponseHistogram() *metrics.Histogram {
	h, err := metrics.NewHistogram(FirstResponseBucketsMs)
	if err != nil {
		panic(err) // the bounds are constants
	}
	return h
}

// enterQueue counts r in its model's pending requests.
func (r *Request) enterQueue() {
	if !r.queued.Swap(true) {
		r.model.pending.Add(1)
	}
}

// leaveQueue ends what enterQueue counted: r was handed to the backend, or
// failed without reaching it.
func (r *Request) leaveQueue() {
	if r.queued.Swap(false) {
		r.model.pending.Add(-1)
	}
}

// LoadedModels returns every loaded model version, sorted by name and
// version. The models may unload at any time after; their counters stay
// readable.
func (s *Server) LoadedModels() []*Model {
	s.mu.RLock()
	var out []*Model
	for _, e := range s.models {
		for _, m := range e.versions {
			out = append(out, m)
		}
	}
	s.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool {
		if out[i].name != out[j].name {
			return out[i].name < out[j].name
		}
		return out[i].version < out[j].version
	})
	return out
}
