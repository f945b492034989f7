package ensemble

import (
	"github.com/tritonhost/tritonhost/core"

	"context"
	"slices"
	"sync"
)

// requestRun is one request of an ensemble in flight: the ensemble
// tensors computed so far, and the steps' requests it has sent.
//
// A step runs once every tensor it reads exists. Tensors carry a key: the
// ensemble's inputs have key 0; a step's outputs keep the key of its
// inputs, except a decoupled step's, which get a new key per response. So
// each response of a decoupled step runs the steps after it once, and the
// ensemble answers once per key that reaches its outputs (the graph check
// guarantees that a step's inputs, and the ensemble's outputs, come from
// one decoupled step at most).
//
// Tensors are not copied. The ensemble's inputs are the client's buffers;
// a step's output becomes the buffer of the tensor it maps to, once its
// response is delivered to the run (stepResponse), which from then on
// owns it. A tensor's buffers are handed on, read-only, as the input
// buffers of the steps that read it and as the data of the ensemble's
// response outputs; the run drops its reference once every reader has
// taken the tensor (tensorValue.left), and each reader keeps the buffers
// for as long as it holds the request or response it put them in. No one
// writes them, so they are never copied, and the garbage collector frees
// them when the last reader is done.
type requestRun struct {
	sched *Scheduler
	plan  *runPlan
	req   *core.Request
	ctx   context.Context // cancelled with the request: every step request in flight is cancelled
	stop  context.CancelFunc
	hook  core.CancelHook

	durations    core.StepTimes
	computeStart uint64

	mu        sync.Mutex
	needed    []bool         // the steps the requested outputs need
	reads     map[string]int // how many readers each tensor value has
	requested map[string]bool
	models    []*core.Model // the version each needed step runs, fixed at the start (unless it unloads meanwhile: see sendOne)
	tensors   map[string]map[uint64]*tensorValue
	nextKey   uint64
	live      int   // step requests sent and not finished, plus one until start returns
	err       error // the first failure; no step is sent after it
	answered  bool  // a response was sent
}

// tensorValue is one value of an ensemble tensor.
type tensorValue struct {
	in    *core.Input // nil: absent (an optional input not given, an output a step did not produce)
	batch int64       // the batch size of the request that made it; 0 when its model does not batch
	left  int         // readers that have not taken it yet
}

// stepCall is one request of a step, ready to send.
type stepCall struct {
	step      *planStep
	model     *core.Model
	key       uint64
	batch     int64
	decoupled bool
	req       *core.Submission
}

func newRequestRun(s *Scheduler, r *core.Request) *requestRun {
	ctx, stop := context.WithCancel(context.Background())
	run := &requestRun{sched: s, plan: s.plan, req: r, ctx: ctx, stop: stop, live: 1, nextKey: 1,
		requested: map[string]bool{}, tensors: map[string]map[uint64]*tensorValue{}}
	for _, o := range r.RequestedOutputs() {
		run.requested[o] = true
	}
	run.needed, run.reads = s.plan.needs(r.RequestedOutputs())
	return run
}

// cancel cancels every step request in flight, and those not sent yet.
func (run *requestRun) cancel() { run.stop() }

// start resolves the step models, stores the inputs and sends the steps
// they make ready.
func (run *requestRun) start() {
	run.hook = run.req.Responder().OnCancel(run.cancel)
	run.computeStart = core.Nanotime()
	run.req.LeaveQueue() // no longer pending: its steps run from now on
	run.mu.Lock()
	if err := run.resolveLocked(); err != nil {
		run.failLocked(err)
		run.mu.Unlock()
		run.release()
		return
	}
	var updated []tensorKey
	inputs := run.req.Inputs()
	for i := range inputs {
		in := &inputs[i]
		batch := int64(0)
		if run.plan.batching && len(in.Shape) > 0 {
			batch = in.Shape[0]
		}
		updated = run.putLocked(in.Name, 0, &tensorValue{in: in, batch: batch}, updated)
	}
	for _, name := range run.plan.optional {
		if run.tensors[name][0] == nil {
			updated = run.putLocked(name, 0, &tensorValue{}, updated)
		}
	}
	calls, out := run.advanceLocked(updated)
	run.mu.Unlock()
	run.respond(out)
	run.send(calls)
	run.release()
}

// resolveLocked picks the version of each model the request's steps run:
// they stay the same for the whole request.
func (run *requestRun) resolveLocked() error {
	run.models = make([]*core.Model, len(run.plan.steps))
	for i, st := range run.plan.steps {
		if !run.needed[i] {
			continue
		}
		m, err := run.sched.srv.ModelIn(st.ns, st.model, st.version)
		if err != nil {
			return err
		}
		run.models[i] = m
	}
	return nil
}

// tensorKey names one tensor value.
type tensorKey struct {
	tensor string
	key    uint64
}

// putLocked stores a tensor value, if anything reads it, and adds it to
// updated.
func (run *requestRun) putLocked(tensor string, key uint64, v *tensorValue, updated []tensorKey) []tensorKey {
	v.left = run.reads[tensor]
	if v.left == 0 {
		return updated
	}
	if run.tensors[tensor] == nil {
		run.tensors[tensor] = map[uint64]*tensorValue{}
	}
	run.tensors[tensor][key] = v
	return append(updated, tensorKey{tensor, key})
}

// takeLocked hands a tensor value to one of its readers, and forgets it
// after the last.
func (run *requestRun) takeLocked(tensor string, key uint64) *tensorValue {
	v := run.tensors[tensor][key]
	if v.left--; v.left == 0 {
		delete(run.tensors[tensor], key)
	}
	return v
}

// advanceLocked returns the step requests and the response that the
// updated tensor values make ready, taking the values they use.
func (run *requestRun) advanceLocked(updated []tensorKey) ([]*stepCall, *core.Response) {
	if run.err != nil {
		return nil, nil
	}
	type stepKey struct {
		step int
		key  uint64
	}
	var calls []*stepCall
	seen := map[stepKey]bool{} // two inputs of a step may come in one update
	for _, u := range updated {
		for _, i := range run.plan.consumers[u.tensor] {
			k := stepKey{i, u.key}
			if !run.needed[i] || seen[k] || !run.readyLocked(run.plan.steps[i], u.key) {
				continue
			}
			seen[k] = true
			calls = append(calls, run.callLocked(run.plan.steps[i], u.key))
		}
	}
	return calls, run.outputLocked(updated)
}

// readyLocked reports whether every tensor step reads has a value of key.
func (run *requestRun) readyLocked(step *planStep, key uint64) bool {
	for _, in := range step.inputs {
		if run.tensors[in.Tensor][key] == nil {
			return false
		}
	}
	return true
}

// callLocked builds the request of step for the tensor values of key.
func (run *requestRun) callLocked(step *planStep, key uint64) *stepCall {
	m := run.models[step.index]
	r := run.req
	req := &core.Submission{Model: m.Name(), Version: m.Version(), ID: r.ID(), CorrelationID: r.CorrelationID(), Flags: r.Flags(),
		Priority: r.Priority(), Timeout: r.Timeout(), Parameters: r.Parameters(), Outputs: step.outputNames(),
		ParentTrace: r.Trace()} // a traced ensemble request traces its steps as its children
	for _, in := range step.inputs {
		v := run.takeLocked(in.Tensor, key)
		if v.in == nil {
			continue // absent: the input is optional
		}
		cfg := m.InputConfig(in.Name)
		req.Inputs = append(req.Inputs, core.Input{Name: in.Name, DataType: v.in.DataType,
			Shape: batchAdjusted(cfg.GetDims(), m.MaxBatchSize() > 0, v.batch, v.in.Shape), Buffers: v.in.Buffers})
	}
	call := &stepCall{step: step, model: m, key: key, decoupled: m.Decoupled(), req: req}
	if m.MaxBatchSize() > 0 && len(req.Inputs) > 0 && len(req.Inputs[0].Shape) > 0 {
		call.batch = req.Inputs[0].Shape[0]
	}
	return call
}

// outputLocked builds the ensemble's response when the updated values
// complete a value of every requested output with one key.
func (run *requestRun) outputLocked(updated []tensorKey) *core.Response {
	for _, u := range updated {
		if !run.requested[u.tensor] {
			continue
		}
		complete := true
		for o := range run.requested {
			complete = complete && run.tensors[o][u.key] != nil
		}
		if !complete {
			continue
		}
		resp := &core.Response{}
		for _, o := range run.plan.outputs {
			if !run.requested[o] {
				continue
			}
			v := run.takeLocked(o, u.key)
			if v.in == nil {
				continue // the step did not produce it
			}
			var data []byte
			switch len(v.in.Buffers) {
			case 0:
			case 1:
				data = v.in.Buffers[0]
			default:
				data = slices.Concat(v.in.Buffers...) // an input passed through in several buffers
			}
			resp.Outputs = append(resp.Outputs, core.Output{Name: o, DataType: v.in.DataType,
				Shape: batchAdjusted(run.plan.dims[o], run.plan.batching, v.batch, v.in.Shape), Data: data})
		}
		run.answered = true
		return resp
	}
	return nil
}

func (run *requestRun) failLocked(err error) {
	if run.err == nil {
		run.err = err
	}
}
