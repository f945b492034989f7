package core

import (
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// Duration counts events and sums their durations in nanoseconds.
type Duration struct {
	Count uint64
	Ns    uint64
}

func (d *Duration) add(ns uint64) { d.Count++; d.Ns += ns }

// merge adds o's events to d's.
func (d *Duration) merge(o Duration) { d.Count += o.Count; d.Ns += o.Ns }

// InferStatistics are the per-request statistics of a model version, as
// Triton's InferStatistics message has them.
type InferStatistics struct {
	Success, Fail, Queue, ComputeInput, ComputeInfer, ComputeOutput, CacheHit, CacheMiss Duration
}

// BatchStatistics are the statistics of executions of one batch size.
type BatchStatistics struct {
	BatchSize                                 uint64
	ComputeInput, ComputeInfer, ComputeOutput Duration
}

// ResponseStatistics are the statistics of the i-th responses of requests.
type ResponseStatistics struct {
	ComputeInfer, ComputeOutput, Success, Fail, EmptyResponse, Cancel Duration
}

// merge adds o's responses to r's.
func (r *ResponseStatistics) merge(o *ResponseStatistics) {
	r.ComputeInfer.merge(o.ComputeInfer)
	r.ComputeOutput.merge(o.ComputeOutput)
	r.Success.merge(o.Success)
	r.Fail.merge(o.Fail)
	r.EmptyResponse.merge(o.EmptyResponse)
	r.Cancel.merge(o.Cancel)
}

// ModelStatistics is a snapshot of one model version's statistics.
type ModelStatistics struct {
	Name    string
	Version int64
	// LastInference is when the last execution ended, in milliseconds since
	// the Unix epoch (0: never).
	LastInference  uint64
	InferenceCount uint64 // inferences, a batch of n counting n
	ExecutionCount uint64 // backend executions
	Inference      InferStatistics
	Batches        []BatchStatistics // ascending batch size
	// Responses maps the response index ("0", "1", ...) to the statistics
	// of the responses with that index, over every request, as Triton's
	// response_stats. The key set is bounded: indices 0 to
	// ResponseStatsCap-1 have a key each, and the key of ResponseStatsCap
	// ("1024") aggregates every response at that index or later. A request
	// with a million responses thus adds to at most 1025 keys.
	Responses map[string]ResponseStatistics
	// MemoryUsage is what the model and its instances report holding, summed
	// per memory type and device.
	MemoryUsage []MemoryUsage
}

// ResponseStatsCap bounds the keys of ModelStatistics.Responses: the
// statistics of the responses with index ResponseStatsCap or more are
// counted under the key of ResponseStatsCap itself. Per-index statistics
// help with the first responses of a stream (the time to the first, the
// second, ... response); past a thousand, one aggregate says as much, and
// the statistics of a model no longer grow with the responses of its
// requests (one request of a decoupled model can send millions). The key
// stays a decimal index, so Triton's clients read it as they read any
// other.
const ResponseStatsCap = 1024

// statsRecorder accumulates a model version's statistics; backends report
// into it from any thread. The statistics of responses, which a decoupled
// model reports once per response from as many threads as it streams
// requests, are kept in responseShards shards, each under its own lock
// and on cache lines of its own: a request's responses all go to one
// shard (Responder.statsShard), and a snapshot sums the shards. Each shard
// holds at most ResponseStatsCap+1 entries of 96 bytes, so a model whose
// streams run past ResponseStatsCap responses keeps about 770 KiB of them
// in all. Requests and executions, reported once each, share mu.
type statsRecorder struct {
	mu sync.Mutex
	s  ModelStatistics
	// lastExecution is when the last execution was recorded (Nanotime; 0:
	// never): s.LastInference, in wall-clock time, is made of it when read,
	// so that recording an execution reads one clock, not two.
	lastExecution uint64
	failures      [numFailureReasons]uint64 // failed requests by reason
	batches       map[uint64]*BatchStatistics
	// insertFailures counts responses the response cache did not store.
	insertFailures uint64

	nextShard atomic.Uint32 // the shard of the next request, round robin
	_         [cacheLine]byte
	shards    [responseShards]responseShard
}

// responseShards is how many shards a model's response statistics are
// kept in: enough that the backend threads of as many requests rarely
// meet on one, few enough that a snapshot sums them at once.
const responseShards = 8

// responseShard is one shard of a model's response statistics: those of
// the requests whose Responder.statsShard it is.
type responseShard struct {
	mu        sync.Mutex
	responses []ResponseStatistics // by response index (dense from 0), at most ResponseStatsCap+1
	// The rest of the line: the next shard's lock on a line of its own.
	_ [cacheLine - unsafe.Sizeof(sync.Mutex{}) - unsafe.Sizeof([]ResponseStatistics(nil))]byte
}

// cacheLine is the size of a cache line on the machines the server runs
// on (64 bytes on amd64 and arm64 server cores).
const cacheLine = 64

// shard returns the shard of the next request's response statistics.
func (st *statsRecorder) shard() uint8 {
	return uint8(st.nextShard.Add(1) % responseShards)
}

// span returns end-start, or 0 when the timestamps are out of order.
func span(start, end uint64) uint64 {
	if end < start {
		return 0
	}
	return end - start
}

func (st *statsRecorder) success(batch, requestStart, queueStart, execStart, computeStart, computeEnd, execEnd uint64) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.s.InferenceCount += max(batch, 1)
	st.s.Inference.Success.add(span(requestStart, execEnd))
	st.s.Inference.Queue.add(span(queueStart, execStart))
	st.s.Inference.ComputeInput.add(span(execStart, computeStart))
	st.s.Inference.ComputeInfer.add(span(computeStart, computeEnd))
	st.s.Inference.ComputeOutput.add(span(computeEnd, execEnd))
}

func (st *statsRecorder) failure(requestStart, end uint64, reason FailureReason) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.s.Inference.Fail.add(span(requestStart, end))
	st.failures[reason]++
}

func (st *statsRecorder) batch(size, execStart, computeStart, computeEnd, execEnd uint64) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.s.ExecutionCount++
	st.lastExecution = Nanotime()
	if st.batches == nil {
		st.batches = make(map[uint64]*BatchStatistics)
	}
	b := st.batches[size]
	if b == nil {
		b = &BatchStatistics{BatchSize: size}
		st.batches[size] = b
	}
	b.ComputeInput.add(span(execStart, computeStart))
	b.ComputeInfer.add(span(computeStart, computeEnd))
	b.ComputeOutput.add(span(computeEnd, execEnd))
}

// ResponseOutcome says how a reported response ended.
type ResponseOutcome int

// Response outcomes for Instance.ReportResponseStatistics.
const (
	ResponseSucceeded ResponseOutcome = iota
	ResponseFailed
	ResponseCancelled
)

// response records the statistics of the next response of p's request.
// The request's response index is guarded by its own model's lock, which
// is st's unless an instance of another model reports for the request.
func (st *statsRecorder) response(p *Responder, start, computeOutputStart, end uint64, outcome ResponseOutcome) {
	own := &p.model.stats == st
	var index uint64
	if !own {
		index = p.nextResponseIndex()
	}
	sh := &st.shards[p.statsShard]
	sh.mu.Lock() // unlocked without defer: this runs for every response
	if own {
		index = p.statsIndex
		p.statsIndex++
	}
	index = min(index, ResponseStatsCap)
	if index >= uint64(len(sh.responses)) {
		sh.responses = append(sh.responses, make([]ResponseStatistics, int(index)+1-len(sh.responses))...)
	}
	r := &sh.responses[index]
	total := span(start, end)
	switch {
	case outcome == ResponseCancelled:
		r.Cancel.add(total)
	case outcome == ResponseFailed:
		if computeOutputStart > 0 {
			r.ComputeInfer.add(span(start, computeOutputStart))
			r.ComputeOutput.add(span(computeOutputStart, end))
		}
		r.Fail.add(total)
	case computeOutputStart == 0:
		r.EmptyResponse.add(total)
	default:
		r.ComputeInfer.add(span(start, computeOutputStart))
		r.ComputeOutput.add(span(computeOutputStart, end))
		r.Success.add(total)
	}
	sh.mu.Unlock()
}

func (st *statsRecorder) snapshot(name string, version int64) ModelStatistics {
	st.mu.Lock()
	defer st.mu.Unlock()
	s := st.s
	s.Name, s.Version = name, version
	if st.lastExecution != 0 {
		ago := time.Duration(Nanotime() - st.lastExecution)
		s.LastInference = uint64(time.Now().Add(-ago).UnixMilli())
	}
	s.Batches = make([]BatchStatistics, 0, len(st.batches))
	for _, b := range st.batches {
		s.Batches = append(s.Batches, *b)
	}
	sort.Slice(s.Batches, func(i, j int) bool { return s.Batches[i].BatchSize < s.Batches[j].BatchSize })
	var responses []ResponseStatistics
	for i := range st.shards {
		sh := &st.shards[i]
		sh.mu.Lock()
		if n := len(sh.responses); n > len(responses) {
			responses = append(responses, make([]ResponseStatistics, n-len(responses))...)
		}
		for k := range sh.responses {
			responses[k].merge(&sh.responses[k])
		}
		sh.mu.Unlock()
	}
	s.Responses = make(map[string]ResponseStatistics, len(responses))
	for i, r := range responses {
		s.Responses[strconv.Itoa(i)] = r
	}
	return s
}
