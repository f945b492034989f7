package core

import (
	"slices"

	"tritonhost/core/configpb"
)

// ensemblePlan is an ensemble's graph as its requests run it: built once
// when a version loads, from a configuration that modelconfig and
// checkEnsembleGraph have accepted, and only read afterwards.
type ensemblePlan struct {
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
	version int64       // <= 0: the newest ready version
	inputs  []tensorMap // the model's inputs, by name
	outputs []tensorMap // the model's outputs, by name
}

// tensorMap maps one input or output of a step's model (name) to an
// ensemble tensor.
type tensorMap struct{ name, tensor string }

// outputNames returns the outputs the step asks its model for.
func (st *planStep) outputNames() []string {
	names := make([]string, len(st.outputs))
	for i, o := range st.outputs {
		names[i] = o.name
	}
	return names
}

// outputTensor returns the ensemble tensor the model's output name maps
// to.
func (st *planStep) outputTensor(name string) (string, bool) {
	for _, o := range st.outputs {
		if o.name == name {
			return o.tensor, true
		}
	}
	return "", false
}

// newEnsemblePlan builds the plan of a validated ensemble configuration.
func newEnsemblePlan(cfg *configpb.ModelConfig) *ensemblePlan {
	es := cfg.GetEnsembleScheduling()
	p := &ensemblePlan{
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
		p.dims[out.GetName()] = configuredDims(out.GetDims(), out.GetReshape())
	}
	for i, s := range es.GetStep() {
		st := &planStep{index: i, model: s.GetModelName(), version: s.GetModelVersion()}
		st.inputs = sortedMaps(s.GetInputMap())
		st.outputs = sortedMaps(s.GetOutputMap())
		for _, in := range st.inputs {
			if !slices.Contains(p.consumers[in.tensor], i) {
				p.consumers[in.tensor] = append(p.consumers[in.tensor], i)
			}
		}
		for _, out := range st.outputs {
			p.producer[out.tensor] = i
		}
		p.steps = append(p.steps, st)
	}
	return p
}

// configuredDims returns the shape an ensemble tensor has inside the
// ensemble: the reshape when the configuration has one, as in Triton.
func configuredDims(dims []int64, rs *configpb.ModelTensorReshape) []int64 {
	if rs != nil {
		return rs.GetShape()
	}
	return dims
}

// sortedMaps returns a step's map as a list sorted by model tensor name.
func sortedMaps(m map[string]string) []tensorMap {
	out := make([]tensorMap, 0, len(m))
	for k, v := range m {
		out = append(out, tensorMap{name: k, tensor: v})
	}
	slices.SortFunc(out, func(a, b tensorMap) int {
		if a.name < b.name {
			return -1
		}
		if a.name > b.name {
			return 1
		}
		return 0
	})
	return out
}

// needs returns the steps a request that asks for outputs runs, and how
// many times each ensemble tensor is read: once by each of those steps
// that reads it, and once more when it is a requested output. Steps only
// the other outputs need are pruned, as Triton prunes them.
func (p *ensemblePlan) needs(outputs []string) (needed []bool, reads map[string]int) {
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
			reads[in.tensor]++
			if !seen[in.tensor] {
				seen[in.tensor] = true
				queue = append(queue, in.tensor)
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
		case batching && wildcardEqual(dims, shape):
			return append([]int64{1}, shape...)
		case !batching && !wildcardEqual(dims, shape) && batch == 1 && len(shape) > 0:
			return slices.Clone(shape[1:])
		}
	}
	return slices.Clone(shape)
}

// wildcardEqual is Triton's CompareDimsWithWildcard: the same rank, and
// each dimension equal unless either is -1.
func wildcardEqual(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] && a[i] != -1 && b[i] != -1 {
			return false
		}
	}
	return true
}
