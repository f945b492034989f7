package ensemble

import (
	"fmt"
	"strings"

	"github.com/tritonhost/tritonhost/core"
)

// How a requestRun sends its steps' requests, takes in their responses
// and ends. None of it holds run.mu while it calls out (Server.SubmitStep, a
// ResponseFunc, a limiter's wait): a step's response may arrive on any
// thread, and one step's callback may send the next steps' requests.

// send sends the step requests, in order, each once its step has a free
// slot (max_inflight_requests). Called without run.mu.
func (run *requestRun) send(calls []*stepCall) {
	for _, c := range calls {
		run.sendOne(c)
	}
}

func (run *requestRun) sendOne(c *stepCall) {
	run.mu.Lock()
	if run.err != nil {
		run.mu.Unlock()
		return // a step failed: no more are sent, as in Triton
	}
	run.live++
	run.mu.Unlock()
	lim := run.limiter(c.step.index)
	if lim != nil && !lim.acquire(run.ctx, run.sched.wait) {
		run.sched.model.Logger().Errorf("ensemble %q: step %d (model %q) had no free slot for %v (max_inflight_requests %d, %s); request %q goes on past the bound",
			run.plan.name, c.step.index, c.model.Name(), run.sched.wait, run.plan.maxInflight, run.sched.setting, c.req.ID)
	}
	err := run.submit(c)
	if err != nil && c.model.Readiness() != core.ModelReady {
		// The version the request started with is unloading (its model is
		// being reloaded): the step goes to the version that replaces it.
		if m, merr := run.sched.srv.ModelIn(c.step.ns, c.step.model, c.step.version); merr == nil && m != c.model {
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
func (run *requestRun) submit(c *stepCall) error {
	return run.sched.srv.SubmitStep(run.ctx, c.model, c.req, func(resp *core.Response, final bool) { run.stepResponse(c, resp, final) },
		&run.durations, run.release)
}

// limiter returns step i's limiter; nil without max_inflight_requests.
func (run *requestRun) limiter(i int) *stepLimiter {
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
func (run *requestRun) stepResponse(c *stepCall, resp *core.Response, final bool) {
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
func (run *requestRun) storeLocked(c *stepCall, resp *core.Response) []tensorKey {
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
		in := &core.Input{Name: tensor, DataType: out.DataType, Shape: out.Shape, Buffers: [][]byte{out.Data}}
		updated = run.putLocked(tensor, key, &tensorValue{in: in, batch: c.batch}, updated)
	}
	for _, o := range c.step.outputs {
		if !got[o.Tensor] {
			updated = run.putLocked(o.Tensor, key, &tensorValue{batch: c.batch}, updated)
		}
	}
	return updated
}

// respond sends a response of the ensemble: at once when the ensemble is
// decoupled; otherwise the Responder holds it until finish sends the final.
func (run *requestRun) respond(out *core.Response) {
	if out == nil {
		return
	}
	if err := run.req.Responder().Send(out, false); err != nil {
		run.mu.Lock()
		run.failLocked(err)
		run.mu.Unlock()
	}
}

// release ends one hold on the run: a step request finished, a send
// failed, or start returned. The last one finishes the run.
func (run *requestRun) release() {
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
// the request's statistics and releases it (Request.Fail does both for an
// error).
func (run *requestRun) finish() {
	run.hook.Remove()
	run.stop()
	r := run.req
	switch {
	case run.err != nil:
		r.Fail(core.FailureReasonOf(run.err), ensembleError(run.plan.name, run.err))
	case !run.plan.decoupled && !run.answered:
		r.Fail(core.FailureOther, core.Errorf(core.CodeInvalidArg, "in ensemble '%s', %sunexpected deadlock, at least one output is not set while no more ensemble steps can be made",
			run.plan.name, logRequest(r.ID())))
	default:
		r.RecordEnsembleSuccess(run.computeStart, core.Nanotime(), &run.durations)
		_ = r.Responder().SendFinal()
		_ = r.Release(core.ReleaseAll)
	}
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

// ensembleError is a failure of an ensemble request, as Triton reports it.
func ensembleError(name string, err error) error {
	return core.Errorf(core.CodeOf(err), "in ensemble '%s', %w", name, err)
}

// describeSteps names an ensemble's steps for logs.
func describeSteps(p *runPlan) string {
	parts := make([]string, len(p.steps))
	for i, st := range p.steps {
		parts[i] = fmt.Sprintf("%d:%s", i, st.model)
	}
	return strings.Join(parts, " ")
}
