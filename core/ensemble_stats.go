package core

import "sync/atomic"

// Statistics of an ensemble, as Triton keeps them: each step's request is
// a request of its model and counts in that model's statistics; the
// ensemble's own count its requests, their queue time (until the steps
// start) and, as compute times, the sums of the compute times of their
// steps (Triton's secondary statistics aggregator), with one execution of
// the request's batch size per successful request.

// StepTimes adds up the compute times of the steps of one ensemble
// request, reported from the steps' backend threads: the ensemble scheduler
// submits each step with the same StepTimes (Server.SubmitStep) and
// records its request's success with them (Request.RecordEnsembleSuccess).
// The zero value is ready to use.
type StepTimes struct {
	input, infer, output atomic.Uint64
}

// add records one step's successful execution (Instance.ReportStatistics
// calls it for the requests of ensemble steps; r.stepOf is nil otherwise).
func (d *StepTimes) add(execStart, computeStart, computeEnd, execEnd uint64) {
	if d == nil {
		return
	}
	d.input.Add(span(execStart, computeStart))
	d.infer.Add(span(computeStart, computeEnd))
	d.output.Add(span(computeEnd, execEnd))
}

// RecordEnsembleSuccess records the success of r, an ensemble's request
// whose steps started at computeStart and that ended at end (Nanotime
// values), its steps having computed for steps.
func (r *Request) RecordEnsembleSuccess(computeStart, end uint64, steps *StepTimes) {
	r.model.stats.ensembleSuccess(r.batchSize, r.requestStart, r.queueStart, computeStart, end, steps)
}

// ensembleSuccess records a successful ensemble request of batch size
// batch: accepted at requestStart, queued from queueStart until its steps
// started at computeStart, done at end, its steps having computed for d.
func (st *statsRecorder) ensembleSuccess(batch, requestStart, queueStart, computeStart, end uint64, d *StepTimes) {
	in, infer, out := d.input.Load(), d.infer.Load(), d.output.Load()
	batch = max(batch, 1)
	st.mu.Lock()
	defer st.mu.Unlock()
	st.s.InferenceCount += batch
	st.s.Inference.Success.add(span(requestStart, end))
	st.s.Inference.Queue.add(span(queueStart, computeStart))
	st.s.Inference.ComputeInput.add(in)
	st.s.Inference.ComputeInfer.add(infer)
	st.s.Inference.ComputeOutput.add(out)
	st.s.ExecutionCount++
	st.lastExecution = Nanotime()
	if st.batches == nil {
		st.batches = make(map[uint64]*BatchStatistics)
	}
	b := st.batches[batch]
	if b == nil {
		b = &BatchStatistics{BatchSize: batch}
		st.batches[batch] = b
	}
	b.ComputeInput.add(in)
	b.ComputeInfer.add(infer)
	b.ComputeOutput.add(out)
}
