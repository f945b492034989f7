package ensemble

import (
	"slices"

	"github.com/tritonhost/tritonhost/core/configpb"
	"github.com/tritonhost/tritonhost/core/modelconfig"
)

// runPlan is an ensemble's graph as its requests run it: built once
// when a version loads, from a configuration that modelconfig and core
// (its check against the steps' models) have accepted; only read afterwards.
type runPlan struct {
	name  string
	steps []*planStep
	// consumers lists, for each ensemble tensor, the steps that read it
	// (ascending); producer names the step that writes it.
	consumers map[string][]int
	producer  map[string]int
	optional  []string           // the ensemble's optional inputs
	outputs   []string           // the ensemble's outputs, in configuration order
	dims      map[string][]int64 // each output's dims (its reshape when it has one)
	batching  bool               // the ensemble batches (max_batch_size > 0)
	decoupled bool               // a step is decoupled: so is the ensemble
	// maxInflight is max_inflight_requests: how many requests of one step
	// may be in flight at once across the ensemble's requests (0: no bound).
	maxInflight int
}

// planStep is one step: a model and how its tensors map onto the
// ensemble's.
type planStep struct {
	index   int
	model   string
	ns      string                  // the model's namespace (model_namespace, set when the ensemble loads)
	version int64                   // <= 0: the newest ready version
	inputs  []modelconfig.TensorMap // the model's inputs, by name
	outputs []modelconfig.TensorMap // the model's outputs, by name
}

// outputNames returns the outputs the step asks its model for.
func (st *planStep) outputNames() []string {
	names := make([]string, len(st.outputs))
	for i, o := range st.outputs {
		names[i] = o.Name
	}
	return names
}

// outputTensor returns the ensemble tensor the model's output name maps
// to.
func (st *planStep) outputTensor(name string) (string, bool) {
	for _, o := range st.outputs {
		if o.Name == name {
			return o.Tensor, true
		}
	}
	return "", false
}

// newRunPlan builds the plan of a validated ensemble configuration.
func newRunPlan(cfg *configpb.ModelConfig) *runPlan {
	es := cfg.GetEnsembleScheduling()
	p := &runPlan{
		name:        cfg.GetName(),
		consumers:   map[string][]int{},
		producer:    map[string]int{},
		dims:        map[string][]int64{},
		batching:    cfg.GetMaxBatchSize() > 0,
		decoupled:   cfg.GetModelTransactionPolicy().GetDecoupled(),
		maxInflight: int(es.GetMaxInflightRequests()),
	}
	for _, in := range cfg.GetInput() {
		if in.GetOptional() {
			p.optional = append(p.optional, in.GetName())
		}
	}
	for _, out := range cfg.GetOutput() {
		p.outputs = append(p.outputs, out.GetName())
		p.dims[out.GetName()] = modelconfig.EnsembleDims(out.GetDims(), out.GetReshape())
	}
	for i, s := range es.GetStep() {
		st := &planStep{index: i, model: s.GetModelName(), ns: s.GetModelNamespace(), version: s.GetModelVersion()}
		st.inputs = modelconfig.StepMaps(s.GetInputMap())
		st.outputs = modelconfig.StepMaps(s.GetOutputMap())
		for _, in := range st.inputs {
			if !slices.Contains(p.consumers[in.Tensor], i) {
				p.consumers[in.Tensor] = append(p.consumers[in.Tensor], i)
			}
		}
		for _, out := range st.outputs {
			p.producer[out.Tensor] = i
		}
		p.steps = append(p.steps, st)
	}
	return p
}

// needs returns the steps a request that asks for outputs runs, and how
// many times each ensemble tensor is read: once by each of those steps
// that reads it, and once more when it is a requested output. Steps only
// the other outputs need are pruned, as Triton prunes them.
func (p *runPlan) needs(outputs []string) (needed []bool, reads map[string]int) {
	needed = make([]bool, len(p.steps))
	reads = map[string]int{}
	seen := map[string]bool{}
	queue := slices.Clone(outputs)
	for _, o := range outputs {
		reads[o]++
		seen[o] = true
	}
	for len(queue) > 0 {
		t := queue[0]
		queue = queue[1:]
		i, ok := p.producer[t]
		if !ok || needed[i] {
			continue
		}
		needed[i] = true
		for _, in := range p.steps[i].inputs {
			reads[in.Tensor]++
			if !seen[in.Tensor] {
				seen[in.Tensor] = true
				queue = append(queue, in.Tensor)
			}
		}
	}
	return needed, reads
}

// batchAdjusted is Triton's ReshapeTensorDims: a tensor goes between a
// model that batches and one that does not when their full shapes agree.
// shape is the tensor's full shape, batch the batch size of the request
// that made it (0 when its model does not batch), dims and batching those
// of the input (or ensemble output) it goes to. A tensor from a model that
// does not batch gets a batch dimension of 1 when its shape fits dims
// without one; a batch of 1 loses its batch dimension when the shape does
// not fit dims with it. The result is a new slice.
func batchAdjusted(dims []int64, batching bool, batch int64, shape []int64) []int64 {
	if batching != (batch != 0) {
		switch {
		case batching && modelconfig.WildcardEqual(dims, shape):
			return append([]int64{1}, shape...)
		case !batching && !modelconfig.WildcardEqual(dims, shape) && batch == 1 && len(shape) > 0:
			return slices.Clone(shape[1:])
		}
	}
	return slices.Clone(shape)
}
