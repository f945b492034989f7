package modelconfig

import (
	"cmp"
	"slices"

	"github.com/tritonhost/tritonhost/core/configpb"
)

// What both the check of an ensemble against its steps' models (core) and
// the ensemble scheduler (core/ensemble) read from an ensemble's
// configuration in the same way.

// TensorMap maps one input or output of a step's model (Name) to an
// ensemble tensor (Tensor).
type TensorMap struct{ Name, Tensor string }

// StepMaps returns a step's input_map or output_map as a list sorted by
// model tensor name: where Triton walks the map in hash order, walking it
// sorted gives one configuration one outcome.
func StepMaps(m map[string]string) []TensorMap {
	out := make([]TensorMap, 0, len(m))
	for k, v := range m {
		out = append(out, TensorMap{Name: k, Tensor: v})
	}
	slices.SortFunc(out, func(a, b TensorMap) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

// EnsembleDims returns the shape an ensemble input or output has inside
// the ensemble: its reshape when it has one, as in Triton.
func EnsembleDims(dims []int64, rs *configpb.ModelTensorReshape) []int64 {
	if rs != nil {
		return rs.GetShape()
	}
	return dims
}

// WildcardEqual is Triton's CompareDimsWithWildcard: the same rank, and
// each dimension equal unless either is -1.
func WildcardEqual(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] && a[i] != wildcardDim && b[i] != wildcardDim {
			return false
		}
	}
	return true
}
