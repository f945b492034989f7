package modelconfig

import (
	"fmt"

	"github.com/tritonhost/tritonhost/core/configpb"
)

// boolControls are the sequence controls that carry a false/true pair.
var boolControls = []configpb.ModelSequenceBatching_Control_Kind{
	configpb.ModelSequenceBatching_Control_CONTROL_SEQUENCE_START,
	configpb.ModelSequenceBatching_Control_CONTROL_SEQUENCE_END,
	configpb.ModelSequenceBatching_Control_CONTROL_SEQUENCE_READY,
}

// corrIDTypes are the tensor types allowed for CONTROL_SEQUENCE_CORRID.
var corrIDTypes = []configpb.DataType{
	configpb.DataType_TYPE_UINT64,
	configpb.DataType_TYPE_INT64,
	configpb.DataType_TYPE_UINT32,
	configpb.DataType_TYPE_INT32,
	configpb.DataType_TYPE_STRING,
}

// validateSequenceBatching checks the sequence batcher the way Triton's
// ValidateModelConfig does, through GetBooleanSequenceControlProperties and
// GetTypedSequenceControlProperties.
func validateSequenceBatching(cfg *configpb.ModelConfig) error {
	sb := cfg.GetSequenceBatching()
	if sb == nil {
		return nil
	}
	name := cfg.Name
	if cfg.GetResponseCache().GetEnable() {
		return invalidf(name, "response_cache", "cannot be enabled for a model with sequence batching")
	}
	seen := map[string]bool{}
	for i, ci := range sb.ControlInput {
		if ci.GetName() == "" {
			return invalidf(name, fmt.Sprintf("sequence_batching.control_input[%d].name", i), "must be set")
		}
		if seen[ci.GetName()] {
			return invalidf(name, fmt.Sprintf("sequence_batching.control_input %q", ci.GetName()), "is listed more than once")
		}
		seen[ci.GetName()] = true
	}
	for _, kind := range boolControls {
		if err := checkBoolControl(name, sb, kind); err != nil {
			return err
		}
	}
	if err := checkCorrIDControl(name, sb); err != nil {
		return err
	}
	if oldest := sb.GetOldest(); oldest != nil {
		for _, size := range oldest.PreferredBatchSize {
			if size <= 0 {
				return invalidf(name, "sequence_batching.oldest.preferred_batch_size", "must be positive, got %d", size)
			}
			if size > cfg.MaxBatchSize {
				return invalidf(name, "sequence_batching.oldest.preferred_batch_size", "holds %d, which exceeds max_batch_size %d", size, cfg.MaxBatchSize)
			}
		}
	}
	if direct := sb.GetDirect(); direct != nil {
		if u := direct.MinimumSlotUtilization; u < 0 || u > 1 {
			return invalidf(name, "sequence_batching.direct.minimum_slot_utilization", "must be in [0, 1], got %g", u)
		}
	}
	return nil
}

// controlsOfKind returns the controls of the given kind, each with the name
// of the input that carries it.
func controlsOfKind(sb *configpb.ModelSequenceBatching, kind configpb.ModelSequenceBatching_Control_Kind) (inputs []string, controls []*configpb.ModelSequenceBatching_Control) {
	for _, ci := range sb.ControlInput {
		for _, c := range ci.GetControl() {
			if c.GetKind() == kind {
				inputs = append(inputs, ci.GetName())
				controls = append(controls, c)
			}
		}
	}
	return inputs, controls
}

// checkBoolControl checks a START, END or READY control: at most one, with
// exactly one of the false/true pairs, of exactly two entries.
func checkBoolControl(model string, sb *configpb.ModelSequenceBatching, kind configpb.ModelSequenceBatching_Control_Kind) error {
	inputs, controls := controlsOfKind(sb, kind)
	if len(controls) == 0 {
		return nil
	}
	where := fmt.Sprintf("sequence_batching.control_input %q: %s", inputs[0], kind)
	if len(controls) > 1 {
		return invalidf(model, where, "is specified more than once (also in %q)", inputs[1])
	}
	c := controls[0]
	pairs := map[string]int{
		"int32_false_true": len(c.Int32FalseTrue),
		"fp32_false_true":  len(c.Fp32FalseTrue),
		"bool_false_true":  len(c.BoolFalseTrue),
	}
	set := 0
	for _, n := range pairs {
		if n > 0 {
			set++
		}
	}
	if set != 1 {
		return invalidf(model, where, "must set exactly one of int32_false_true, fp32_false_true and bool_false_true")
	}
	for _, field := range []string{"int32_false_true", "fp32_false_true", "bool_false_true"} {
		if n := pairs[field]; n > 0 && n != 2 {
			return invalidf(model, where+"."+field, "must have exactly 2 entries (false, true), got %d", n)
		}
	}
	return nil
}

// checkCorrIDControl checks the CORRID control: at most one, typed by
// data_type only, with an integer or string type.
func checkCorrIDControl(model string, sb *configpb.ModelSequenceBatching) error {
	kind := configpb.ModelSequenceBatching_Control_CONTROL_SEQUENCE_CORRID
	inputs, controls := controlsOfKind(sb, kind)
	if len(controls) == 0 {
		return nil
	}
	where := fmt.Sprintf("sequence_batching.control_input %q: %s", inputs[0], kind)
	if len(controls) > 1 {
		return invalidf(model, where, "is specified more than once (also in %q)", inputs[1])
	}
	c := controls[0]
	if len(c.Int32FalseTrue) > 0 || len(c.Fp32FalseTrue) > 0 || len(c.BoolFalseTrue) > 0 {
		return invalidf(model, where, "must not set int32_false_true, fp32_false_true or bool_false_true")
	}
	for _, t := range corrIDTypes {
		if c.DataType == t {
			return nil
		}
	}
	return invalidf(model, where+".data_type", "must be TYPE_UINT64, TYPE_INT64, TYPE_UINT32, TYPE_INT32 or TYPE_STRING, got %s", c.DataType)
}
