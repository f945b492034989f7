package core

import (
	"fmt"
	"slices"

	"github.com/tritonhost/tritonhost/core/configpb"
	"github.com/tritonhost/tritonhost/core/modelconfig"
)

// The check of an ensemble against the configurations of the models its
// steps run, once those have loaded: Triton's ValidateEnsembleConfig, with
// its messages. Maps are walked by sorted key (Triton's order is that of a
// hash map), so one repository always gives one error.

// graphTensor is an ensemble tensor as the check sees it: the data type
// and shape inferred for it, the model they were inferred from, and its
// place in the data flow.
type graphTensor struct {
	model     string // where the type and shape were inferred
	dataType  configpb.DataType
	dims      []int64
	fullDims  []int64 // dims with a leading -1 when the model batches
	decoupled bool    // a decoupled step writes it
	label     int     // which decoupled step its data comes from (0: none)
	visited   bool
	prev      []*graphTensor
	next      []*graphTensor
	sibling   *graphTensor // shared by the outputs of one step: they get one label
}

func newGraphTensor(model string, batching bool, dt configpb.DataType, dims []int64) *graphTensor {
	t := &graphTensor{model: model, dataType: dt, dims: dims}
	if batching {
		t.fullDims = append([]int64{-1}, dims...)
	} else {
		t.fullDims = dims
	}
	return t
}

// consistentWith is Triton's ValidateTensorConsistency: one data type, and
// shapes that agree (with wildcards), either as dims or as full dims (a
// batching model's [d...] meets a non-batching model's [-1, d...]).
func (t *graphTensor) consistentWith(o *graphTensor, prefix string) error {
	if t.dataType != o.dataType {
		return Errorf(CodeInvalidArg, "%sinconsistent data type: %s is inferred from model %s while %s is inferred from model %s",
			prefix, t.dataType, t.model, o.dataType, o.model)
	}
	if !modelconfig.WildcardEqual(t.dims, o.dims) && !modelconfig.WildcardEqual(t.fullDims, o.fullDims) {
		return Errorf(CodeInvalidArg, "%sinconsistent shape: %s is inferred from model %s while %s is inferred from model %s",
			prefix, dimsString(t.fullDims), t.model, dimsString(o.fullDims), o.model)
	}
	return nil
}

// checkEnsembleGraph checks the ensemble cfg against the configurations
// of its steps' models (stepConfig returns the one step i runs) and
// reports whether the ensemble is decoupled: whether a decoupled step's
// responses reach it. It refuses a step model that batches less than the
// ensemble, a map naming an input or output the model lacks, a required
// input left unmapped, a tensor whose type or shape differ between the
// models that meet at it, and a step whose inputs come from different
// decoupled steps.
func checkEnsembleGraph(cfg *configpb.ModelConfig, stepConfig func(i int) *configpb.ModelConfig) (decoupled bool, err error) {
	name := cfg.GetName()
	batching := cfg.GetMaxBatchSize() > 0
	tensors := map[string]*graphTensor{}
	var inputs []*graphTensor
	for _, in := range cfg.GetInput() {
		t := newGraphTensor(name, batching, in.GetDataType(), modelconfig.EnsembleDims(in.GetDims(), in.GetReshape()))
		tensors[in.GetName()] = t
		inputs = append(inputs, t)
	}
	sink := &graphTensor{model: name}
	for _, out := range cfg.GetOutput() {
		t := tensors[out.GetName()]
		if t == nil {
			t = newGraphTensor(name, batching, out.GetDataType(), modelconfig.EnsembleDims(out.GetDims(), out.GetReshape()))
			tensors[out.GetName()] = t
		}
		sink.prev = append(sink.prev, t)
		t.next = append(t.next, sink)
	}
	for i, step := range cfg.GetEnsembleScheduling().GetStep() {
		mc := stepConfig(i)
		if mb := mc.GetMaxBatchSize(); mb != 0 && mb < cfg.GetMaxBatchSize() {
			return false, Errorf(CodeInvalidArg, "ensemble %s allows maximum batch size %d, but it contains model %s which only allows maximum batch size to be %d",
				name, cfg.GetMaxBatchSize(), step.GetModelName(), mb)
		}
		if err := mapStepTensors(name, step, mc, tensors); err != nil {
			return false, err
		}
	}
	return labelDecoupled(name, inputs)
}

// mapStepTensors is Triton's ValidateTensorMapping: it checks one step's
// maps against its model's configuration, records the type and shape of
// the tensors the step meets, and links its inputs to its outputs.
func mapStepTensors(ensemble string, step *configpb.ModelEnsembling_Step, mc *configpb.ModelConfig, tensors map[string]*graphTensor) error {
	model := step.GetModelName()
	batching := mc.GetMaxBatchSize() > 0
	inputs, outputs := modelconfig.StepMaps(step.GetInputMap()), modelconfig.StepMaps(step.GetOutputMap())
	for _, m := range inputs {
		if !slices.ContainsFunc(mc.GetInput(), func(in *configpb.ModelInput) bool { return in.GetName() == m.Name }) {
			return Errorf(CodeInvalidArg, "in ensemble %s, ensemble tensor %s is mapping to non-existing input %s in model %s", ensemble, m.Tensor, m.Name, model)
		}
	}
	for _, in := range mc.GetInput() {
		i := slices.IndexFunc(inputs, func(m modelconfig.TensorMap) bool { return m.Name == in.GetName() })
		if i < 0 {
			if in.GetOptional() {
				continue
			}
			return Errorf(CodeInvalidArg, "in ensemble %s, input %s in model %s is not mapped to any ensemble tensors", ensemble, in.GetName(), model)
		}
		if err := meet(ensemble, inputs[i].Tensor, newGraphTensor(model, batching, in.GetDataType(), in.GetDims()), tensors); err != nil {
			return err
		}
	}
	sibling := &graphTensor{model: model}
	decoupled := mc.GetModelTransactionPolicy().GetDecoupled()
	for _, m := range outputs {
		i := slices.IndexFunc(mc.GetOutput(), func(out *configpb.ModelOutput) bool { return out.GetName() == m.Name })
		if i < 0 {
			return Errorf(CodeInvalidArg, "in ensemble %s, ensemble tensor %s is mapped from non-existing output %s in model %s", ensemble, m.Tensor, m.Name, model)
		}
		out := mc.GetOutput()[i]
		if err := meet(ensemble, m.Tensor, newGraphTensor(model, batching, out.GetDataType(), out.GetDims()), tensors); err != nil {
			return err
		}
		t := tensors[m.Tensor]
		t.sibling, t.decoupled = sibling, decoupled
		for _, in := range inputs {
			prev := tensors[in.Tensor]
			t.prev = append(t.prev, prev)
			prev.next = append(prev.next, t)
		}
	}
	return nil
}

// meet records what the model says of tensor, or checks it against what
// was inferred before.
func meet(ensemble, tensor string, seen *graphTensor, tensors map[string]*graphTensor) error {
	if t := tensors[tensor]; t != nil {
		return t.consistentWith(seen, fmt.Sprintf("in ensemble %s, ensemble tensor %s: ", ensemble, tensor))
	}
	tensors[tensor] = seen
	return nil
}

// labelDecoupled walks the data flow from the inputs, giving each tensor
// the label of the decoupled step its data comes from (a new one at each
// decoupled step, shared by that step's outputs), and refuses a step, or
// the ensemble's outputs, fed from two different labels: their responses
// could not be matched up. The ensemble is decoupled when any label was
// given.
func labelDecoupled(ensemble string, inputs []*graphTensor) (bool, error) {
	labels := 0
	queue := slices.Clone(inputs)
	for _, t := range inputs {
		t.visited = true
	}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		for _, next := range cur.next {
			if next.visited || slices.ContainsFunc(next.prev, func(p *graphTensor) bool { return !p.visited }) {
				continue
			}
			label := next.prev[0].label
			for _, p := range next.prev {
				if p.label != label {
					return false, Errorf(CodeInvalidArg, "in ensemble %s, step of model '%s' receives inputs originated from different decoupled models", ensemble, next.model)
				}
			}
			switch {
			case next.sibling != nil && next.sibling.visited:
				next.label = next.sibling.label
			case next.decoupled:
				labels++
				next.label = labels
			default:
				next.label = label
			}
			if next.sibling != nil {
				next.sibling.label, next.sibling.visited = next.label, true
			}
			next.visited = true
			queue = append(queue, next)
		}
	}
	return labels != 0, nil
}
