package core

import "fmt"

// How an ensembleRun sends its steps' requests, takes in their responses
// and ends. None of it holds run.mu while it calls out (Server.submit, a
// ResponseFunc, a limiter's wait): a step's response may arrive on any
// thread, and one step's callback may send the next steps' requests.

// send sends the step requests, in order, each once its step has a free
// slot (max_inflight_requests). Called without run.mu.
func (run *ensembleRun) send(calls []*stepCall) {
	for _, c := range calls {
		run.sendOne(c)
	}
}

func (run *ensembleRun) sendOne(c *stepCall) {
	run.mu.Lock()
	if run.err != nil {
		run.mu.Unlock()
		return // a step failed: no more are sent, as in Triton
	}
	run.live++
	run.mu.Unlock()
	lim := run.limiter(c.step.index)
	if lim != nil && !lim.acquire(run.ctx, run.sched.wait) {
		run.sched.srv.log.Errorf("ensemble %q: step %d (model %q) had no free slot for %v (max_inflight_requests %d, %s); request %q goes on past the bound",
			run.plan.name, c.step.index, c.model.name, run.sched.wait, run.plan.maxInflight, run.sched.srv.opts.EnsembleStepWaitSetting, c.req.ID)
	}
	err := run.submit(c)
	if err != nil && c.model.Readiness() != ModelReady {
		// The version the request started with is unloading (its model is
		// being reloaded): the step goes to the version that replaces it.
		if m, merr := run.sched.srv.Model(c.step.model, c.step.version); merr == nil && m != c.model {
			c.model = m
			err = run.submit(c)
		}
	}
	if err != nil {
		if lim != nil {
			lim.release()
		}
		run.mu.Lock()
		run.failLocked(err)
		run.mu.Unlock()
		run.release()
	}
}

// submit sends the step's request to its model.
func (run *ensembleRun) submit(c *stepCall) error {
	link := &stepLink{durations: &run.durations, finished: run.release}
	return run.sched.srv.submit(run.ctx, c.model, c.req, func(resp *Response, final bool) { run.stepResponse(c, resp, final) }, link)
}

// limiter returns step i's limiter; nil without max_inflight_requests.
func (run *ensembleRun) limiter(i int) *stepLimiter {
	if run.sched.limiters == nil {
		return nil
	}
	return run.sched.limiters[i]
}

// stepResponse is the ResponseFunc of a step's request: it stores the
// outputs the response carries, then answers the client and sends the
// steps they make ready. It runs on the thread that delivered the
// response, so a step waiting for a slot holds up the step that produced
// its inputs: that is the back-pressure of max_inflight_requests.
func (run *ensembleRun) stepResponse(c *stepCall, resp *Response, final bool) {
	run.mu.Lock()
	var updated []tensorKey
	switch {
	case resp == nil:
	case resp.Err != nil:
		run.failLocked(resp.Err)
	case run.err == nil:
		updated = run.storeLocked(c, resp)
	}
	calls, out := run.advanceLocked(updated)
	run.mu.Unlock()
	if final {
		if lim := run.limiter(c.step.index); lim != nil {
			lim.release()
		}
	}
	run.respond(out)
	run.send(calls)
}

// storeLocked stores the outputs of a step's response as the tensors its
// output map names: under the key of the step's inputs, or a new key for
// each response of a decoupled step. An output the response lacks is
// stored absent, for a next step that reads it as an optional input.
func (run *ensembleRun) storeLocked(c *stepCall, resp *Response) []tensorKey {
	key := c.key
	if c.decoupled {
		key = run.nextKey
		run.nextKey++
	}
	var updated []tensorKey
	got := map[string]bool{}
	for i := range resp.Outputs {
		out := &resp.Outputs[i]
		tensor, ok := c.step.outputTensor(out.Name)
		if !ok || got[tensor] {
			continue
		}
		got[tensor] = true
		in := &Input{Name: tensor, DataType: out.DataType, Shape: out.Shape, Buffers: [][]byte{out.Data}}
		updated = run.putLocked(tensor, key, &tensorValue{in: in, batch: c.batch}, updated)
	}
	for _, o := range c.step.outputs {
		if !got[o.tensor] {
			updated = run.putLocked(o.tensor, key, &tensorValue{batch: c.batch}, updated)
		}
	}
	return updated
}

// respond sends a response of the ensemble: at once when the ensemble is
// decoupled; otherwise the Responder holds it until finish sends the final.
func (run *ensembleRun) respond(out *Response) {
	if out == nil {
		return
	}
	if err := run.req.responder.Send(out, false); err != nil {
		run.mu.Lock()
		run.failLocked(err)
		run.mu.Unlock()
	}
}

// release ends one hold on the run: a step request finished, a send
// failed, or start returned. The last one finishes the run.
func (run *ensembleRun) release() {
	run.mu.Lock()
	run.live--
	last := run.live == 0
	run.mu.Unlock()
	if last {
		run.finish()
	}
}

// finish completes the ensemble's request once every step request it sent
// has finished, so that no backend reads the client's buffers any more:
// with its first error, or Triton's deadlock error when a request that is
// not decoupled got no response, or else the final response. It records
// the request's statistics and releases it.
func (run *ensembleRun) finish() {
	run.hook.Remove()
	run.stop()
	r, m := run.req, run.req.model
	now := Nanotime()
	switch {
	case run.err != nil:
		m.stats.failure(r.requestStart, now, failureReasonOf(run.err))
		r.responder.Fail(ensembleError(run.plan.name, run.err))
	case !run.plan.decoupled && !run.answered:
		m.stats.failure(r.requestStart, now, FailureOther)
		r.responder.Fail(Errorf(CodeInvalidArg, "in ensemble '%s', %sunexpected deadlock, at least one output is not set while no more ensemble steps can be made",
			run.plan.name, logRequest(r.ID())))
	default:
		m.stats.ensembleSuccess(r.batchSize, r.requestStart, r.queueStart, run.computeStart, now, &run.durations)
		_ = r.responder.SendFinal()
	}
	_ = r.Release(ReleaseAll)
	run.sched.ended(run)
}

// logRequest is Triton's InferenceRequest::LogRequest: the request id in
// brackets, when there is one.
func logRequest(id string) string {
	if id == "" {
		return ""
	}
	return fmt.Sprintf("[request id: %s] ", id)
}
