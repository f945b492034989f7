package modelconfig

import (
	"fmt"
	"slices"

	"github.com/tritonhost/tritonhost/core/configpb"
)

// The checks of an ensemble's own configuration, as Triton's
// ValidateModelConfig and ValidateEnsembleSchedulingConfig make them. The
// checks that need the configurations of the models the steps run (types,
// shapes, batch sizes, decoupled steps) are core's, once those models have
// loaded.
//
// Every message is Triton's text, so that a user who searches for it finds
// Triton's documentation and issues. Protobuf maps have no order; where
// Triton walks one (input_map, output_map) this package walks it by sorted
// key, so that the same configuration always gives the same error.

// tritonf builds an ErrInvalid whose message is Triton's text, which
// already names the model.
func tritonf(format string, args ...any) error {
	return &configError{msg: fmt.Sprintf(format, args...)}
}

// validateEnsembleModel is the model-level part of ValidateModelConfig for
// a model of platform "ensemble": no backend, and ensemble_scheduling set.
// (ensemble_scheduling on another platform is refused by
// validateEnsembleScheduling.)
func validateEnsembleModel(cfg *configpb.ModelConfig) error {
	name := cfg.GetName()
	switch {
	case cfg.GetBackend() != "":
		return tritonf("Ensemble model '%s' must have platform type '%s' and empty backend type", name, cfg.GetPlatform())
	case cfg.GetEnsembleScheduling() == nil:
		return tritonf("ensemble scheduling must be set for ensemble %s whose platform is %s", name, platformEnsemble)
	}
	return nil
}

// validateEnsembleScheduling is Triton's ValidateEnsembleSchedulingConfig:
// what an ensemble may not have, every step complete, no tensor produced
// twice, and data flowing from the ensemble's inputs through every step to
// every output (a cycle among the steps shows as an output not written or
// a tensor unused).
func validateEnsembleScheduling(cfg *configpb.ModelConfig) error {
	es := cfg.GetEnsembleScheduling()
	if es == nil {
		return nil
	}
	name := cfg.GetName()
	switch {
	case cfg.GetPlatform() != platformEnsemble:
		return tritonf("ensemble scheduling cannot be set for model '%s' whose platform is not %s", name, platformEnsemble)
	case len(cfg.GetInstanceGroup()) != 0:
		return tritonf("instance group should not be specified for ensemble '%s'", name)
	case cfg.GetOptimization() != nil:
		return tritonf("optimization should not be specified for ensemble '%s'", name)
	case len(cfg.GetModelWarmup()) != 0:
		return tritonf("model_warmup can not be specified for ensemble '%s'", name)
	case len(es.GetStep()) == 0:
		return tritonf("must specify 'step' for ensemble '%s'", name)
	}
	g, err := buildEnsembleGraph(cfg)
	if err != nil {
		return err
	}
	return g.checkDataFlow(cfg)
}

// ensembleTensor is a node of an ensemble's data flow: an ensemble tensor,
// with the tensors it is computed from (the inputs of the step that writes
// it) and those computed from it.
type ensembleTensor struct {
	name     string
	isOutput bool // a step writes it
	ready    bool
	prev     []*ensembleTensor
	next     []*ensembleTensor
}

// ensembleGraph is Triton's BuildEnsembleGraph result, by tensor name.
type ensembleGraph map[string]*ensembleTensor

func (g ensembleGraph) node(name string) *ensembleTensor {
	t := g[name]
	if t == nil {
		t = &ensembleTensor{name: name}
		g[name] = t
	}
	return t
}

// buildEnsembleGraph links every step's input tensors to its output
// tensors, refusing incomplete steps and a tensor two output maps write.
func buildEnsembleGraph(cfg *configpb.ModelConfig) (ensembleGraph, error) {
	name := cfg.GetName()
	g := ensembleGraph{}
	for i, step := range cfg.GetEnsembleScheduling().GetStep() {
		switch {
		case step.GetModelName() == "":
			return nil, tritonf("must specify 'model_name' in step %d of ensemble '%s'", i, name)
		case len(step.GetInputMap()) == 0:
			return nil, tritonf("must specify 'input_map' in step %d of ensemble '%s'", i, name)
		case len(step.GetOutputMap()) == 0:
			return nil, tritonf("must specify 'output_map' in step %d of ensemble '%s'", i, name)
		}
		var written []*ensembleTensor
		for _, key := range sortedKeys(step.GetOutputMap()) {
			t := g.node(step.GetOutputMap()[key])
			if t.isOutput {
				return nil, tritonf("ensemble tensor '%s' can appear in an output map only once for ensemble '%s' step %d", t.name, name, i)
			}
			t.isOutput = true
			written = append(written, t)
		}
		for _, key := range sortedKeys(step.GetInputMap()) {
			in := g.node(step.GetInputMap()[key])
			for _, out := range written {
				out.prev = append(out.prev, in)
				in.next = append(in.next, out)
			}
		}
	}
	return g, nil
}

// checkDataFlow marks the tensors the ensemble's inputs make computable
// and requires every output to be one of them and every other tensor to be
// computable and used.
func (g ensembleGraph) checkDataFlow(cfg *configpb.ModelConfig) error {
	name := cfg.GetName()
	var queue []*ensembleTensor
	for _, in := range cfg.GetInput() {
		t := g[in.GetName()]
		if t == nil {
			// Triton's text, with its stray quote.
			return tritonf("ensemble input '%s' for ensemble %s' is not used", in.GetName(), name)
		}
		t.ready = true
		queue = append(queue, t)
	}
	for len(queue) > 0 {
		t := queue[0]
		queue = queue[1:]
		for _, next := range t.next {
			if next.ready {
				continue
			}
			next.ready = !slices.ContainsFunc(next.prev, func(p *ensembleTensor) bool { return !p.ready })
			if next.ready {
				queue = append(queue, next)
			}
		}
	}
	outputs := map[string]bool{}
	for _, out := range cfg.GetOutput() {
		t := g[out.GetName()]
		if t == nil {
			return tritonf("ensemble output '%s' for ensemble %s' is not used", out.GetName(), name)
		}
		if !t.ready {
			msg := fmt.Sprintf("output '%s' for ensemble '%s' is not written", out.GetName(), name)
			if src := unconnectedSource(t); src != t {
				msg += fmt.Sprintf(": at least one of its depending tensors, '%s', is not connected", src.name)
			}
			return tritonf("%s", msg)
		}
		outputs[out.GetName()] = true
	}
	for _, key := range sortedKeys(g) {
		if t := g[key]; !outputs[key] && (!t.ready || len(t.next) == 0) {
			return tritonf("ensemble tensor '%s' is unused in ensemble '%s'", key, name)
		}
	}
	return nil
}

// unconnectedSource follows not-computable tensors upstream, the first
// one of each step's inputs at a time, and returns the last one reached:
// the tensor nothing computes. A cycle ends the walk where it closes.
func unconnectedSource(t *ensembleTensor) *ensembleTensor {
	last, seen := t, map[string]bool{}
	for prev := t.prev; len(prev) > 0; {
		next := prev
		prev = nil
		for _, p := range next {
			if !p.ready && !seen[p.name] {
				seen[p.name] = true
				last, prev = p, p.prev
				break
			}
		}
	}
	return last
}
