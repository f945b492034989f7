package modelconfig

import (
	"fmt"
	"math"
	"strings"

	"github.com/tritonhost/tritonhost/core/configpb"
)

// wildcardDim marks a variable-size dimension.
const wildcardDim = -1

// tensorSpec is what ValidateIOShape looks at, common to inputs and outputs.
type tensorSpec struct {
	kind     string // "input" or "output"
	index    int
	name     string
	dataType configpb.DataType
	dims     []int64
	reshape  *configpb.ModelTensorReshape
	nonLin   bool
	shapeTen bool
}

// where names the tensor in errors: `input "IN"`, or `input[2]` when unnamed.
func (t tensorSpec) where() string {
	if t.name == "" {
		return fmt.Sprintf("%s[%d]:", t.kind, t.index)
	}
	return fmt.Sprintf("%s %q:", t.kind, t.name)
}

// validateInputs is ValidateModelInput for every input, plus unique names.
func validateInputs(cfg *configpb.ModelConfig) error {
	seen := map[string]bool{}
	for i, in := range cfg.Input {
		t := tensorSpec{kind: "input", index: i, name: in.GetName(), dataType: in.GetDataType(),
			dims: in.GetDims(), reshape: in.GetReshape(), nonLin: in.GetIsNonLinearFormatIo(), shapeTen: in.GetIsShapeTensor()}
		if err := validateTensor(cfg, t, seen); err != nil {
			return err
		}
		if f := in.GetFormat(); f != configpb.ModelInput_FORMAT_NONE {
			if _, known := configpb.ModelInput_Format_name[int32(f)]; !known {
				return invalidf(cfg.Name, t.where()+" format", "is %d, not a known format", f)
			}
			if len(t.dims) != 3 {
				return invalidf(cfg.Name, t.where()+" dims", "must have exactly 3 entries for format %s, got %d", f, len(t.dims))
			}
		}
	}
	return nil
}

// validateOutputs is ValidateModelOutput for every output, plus unique names.
func validateOutputs(cfg *configpb.ModelConfig) error {
	seen := map[string]bool{}
	for i, out := range cfg.Output {
		t := tensorSpec{kind: "output", index: i, name: out.GetName(), dataType: out.GetDataType(),
			dims: out.GetDims(), reshape: out.GetReshape(), nonLin: out.GetIsNonLinearFormatIo(), shapeTen: out.GetIsShapeTensor()}
		if err := validateTensor(cfg, t, seen); err != nil {
			return err
		}
	}
	return nil
}

// validateTensor is Triton's ValidateIOShape plus the shape-tensor and
// non-linear-format rules shared by inputs and outputs.
func validateTensor(cfg *configpb.ModelConfig, t tensorSpec, seen map[string]bool) error {
	model := cfg.Name
	if t.name == "" {
		return invalidf(model, t.where()+" name", "must be set")
	}
	if seen[t.name] {
		return invalidf(model, strings.TrimSuffix(t.where(), ":"), "is declared more than once")
	}
	seen[t.name] = true
	if t.dataType == configpb.DataType_TYPE_INVALID {
		return invalidf(model, t.where()+" data_type", "must be set")
	}
	if _, known := configpb.DataType_name[int32(t.dataType)]; !known {
		return invalidf(model, t.where()+" data_type", "is %d, not a known data type", t.dataType)
	}
	if len(t.dims) == 0 {
		return invalidf(model, t.where()+" dims", "must be set")
	}
	if err := checkDims(model, t.where()+" dims", t.dims); err != nil {
		return err
	}
	if t.reshape != nil {
		if len(t.reshape.Shape) == 0 && cfg.MaxBatchSize == 0 {
			return invalidf(model, t.where()+" reshape", "cannot be empty in a model that does not batch (max_batch_size 0): scalar tensors are not supported")
		}
		if err := checkDims(model, t.where()+" reshape.shape", t.reshape.Shape); err != nil {
			return err
		}
		if err := checkReshape(model, t); err != nil {
			return err
		}
	}
	if t.shapeTen && cfg.Platform != platformTensorRT {
		return invalidf(model, t.where()+" is_shape_tensor", "is only supported on the %s platform", platformTensorRT)
	}
	if t.nonLin {
		if cfg.Platform != platformTensorRT {
			return invalidf(model, t.where()+" is_non_linear_format_io", "is only supported on the %s platform", platformTensorRT)
		}
		if len(t.dims) != 3 {
			return invalidf(model, t.where()+" dims", "must have exactly 3 entries for a non-linear I/O format, got %d", len(t.dims))
		}
	}
	return nil
}

// checkDims requires every dimension to be >= 1 or -1 (variable size).
func checkDims(model, where string, dims []int64) error {
	for i, d := range dims {
		if d < 1 && d != wildcardDim {
			return invalidf(model, fmt.Sprintf("%s[%d]", where, i), "must be >= 1, or -1 for a variable-size dimension, got %d", d)
		}
	}
	return nil
}

// checkReshape requires dims and reshape to describe the same number of
// elements. With variable-size dimensions, the fixed-size runs between them
// must match pairwise ([2,4,-1,6] may become [8,-1,1,6]). An empty reshape
// (a scalar) needs dims with exactly one element.
func checkReshape(model string, t tensorSpec) error {
	dimsCount, err := elementCount(model, t.where()+" dims", t.dims)
	if err != nil {
		return err
	}
	reshapeCount, err := elementCount(model, t.where()+" reshape.shape", t.reshape.Shape)
	if err != nil {
		return err
	}
	if dimsCount != reshapeCount && (reshapeCount != 0 || dimsCount != 1) {
		return invalidf(model, t.where()+" reshape", "has a different element count than dims")
	}
	if dimsCount != wildcardDim {
		return nil
	}
	a, okA := fixedRuns(t.dims)
	b, okB := fixedRuns(t.reshape.Shape)
	if !okA || !okB {
		return invalidf(model, t.where()+" reshape", "or dims describe more elements between variable-size dimensions than a 64-bit integer holds")
	}
	if len(a) != len(b) {
		return invalidf(model, t.where()+" reshape", "has a different number of variable-size dimensions than dims")
	}
	for i := range a {
		if a[i] != b[i] {
			return invalidf(model, t.where()+" reshape", "has a different element count than dims")
		}
	}
	return nil
}

// elementCount is Triton's GetElementCount: -1 if any dimension is
// variable, 0 for no dimensions, the product otherwise (an overflow is an
// error).
func elementCount(model, where string, dims []int64) (int64, error) {
	var count int64
	for i, d := range dims {
		if d == wildcardDim {
			return wildcardDim, nil
		}
		if i == 0 {
			count = d
			continue
		}
		if d != 0 && count > math.MaxInt64/d {
			return 0, invalidf(model, where, "describe more elements than a 64-bit integer holds")
		}
		count *= d
	}
	return count, nil
}

// fixedRuns returns the element counts of the runs of fixed dimensions
// between variable-size ones, and false if one overflows an int64 (the
// dims were checked to be >= 1 or -1).
func fixedRuns(dims []int64) ([]int64, bool) {
	runs := []int64{}
	current := int64(1)
	for _, d := range dims {
		if d == wildcardDim {
			runs = append(runs, current)
			current = 1
			continue
		}
		if current > math.MaxInt64/d {
			return nil, false
		}
		current *= d
	}
	return append(runs, current), true
}

// validateBatchInputs is the batch_input half of Triton's ValidateBatchIO.
func validateBatchInputs(cfg *configpb.ModelConfig) error {
	inputs := tensorNames(cfg.Input)
	for i, bi := range cfg.BatchInput {
		where := fmt.Sprintf("batch_input[%d]", i)
		if _, known := configpb.BatchInput_Kind_name[int32(bi.GetKind())]; !known {
			return invalidf(cfg.Name, where+".kind", "is %d, not a known batch input kind", bi.GetKind())
		}
		if n := len(bi.GetSourceInput()); n != 1 {
			return invalidf(cfg.Name, where+".source_input", "must name exactly 1 input for kind %s, got %d", bi.GetKind(), n)
		}
		if dt := bi.GetDataType(); dt != configpb.DataType_TYPE_INT32 && dt != configpb.DataType_TYPE_FP32 {
			return invalidf(cfg.Name, where+".data_type", "must be TYPE_INT32 or TYPE_FP32, got %s", dt)
		}
		for _, src := range bi.GetSourceInput() {
			if !inputs[src] {
				return invalidf(cfg.Name, where+".source_input", "names %q, which is not an input of the model", src)
			}
		}
	}
	return nil
}

// validateBatchOutputs is the batch_output half of Triton's ValidateBatchIO.
func validateBatchOutputs(cfg *configpb.ModelConfig) error {
	inputs := tensorNames(cfg.Input)
	outputs := tensorNames(cfg.Output)
	for i, bo := range cfg.BatchOutput {
		where := fmt.Sprintf("batch_output[%d]", i)
		if _, known := configpb.BatchOutput_Kind_name[int32(bo.GetKind())]; !known {
			return invalidf(cfg.Name, where+".kind", "is %d, not a known batch output kind", bo.GetKind())
		}
		if n := len(bo.GetSourceInput()); n != 1 {
			return invalidf(cfg.Name, where+".source_input", "must name exactly 1 input for kind %s, got %d", bo.GetKind(), n)
		}
		for _, src := range bo.GetSourceInput() {
			if !inputs[src] {
				return invalidf(cfg.Name, where+".source_input", "names %q, which is not an input of the model", src)
			}
		}
		targets := map[string]bool{}
		for _, target := range bo.GetTargetName() {
			if !outputs[target] {
				return invalidf(cfg.Name, where+".target_name", "names %q, which is not an output of the model", target)
			}
			if targets[target] {
				return invalidf(cfg.Name, where+".target_name", "lists %q more than once", target)
			}
			targets[target] = true
		}
	}
	return nil
}

// named is an input or output.
type named interface{ GetName() string }

// tensorNames returns the set of names of inputs or outputs.
func tensorNames[T named](tensors []T) map[string]bool {
	names := make(map[string]bool, len(tensors))
	for _, t := range tensors {
		names[t.GetName()] = true
	}
	return names
}
