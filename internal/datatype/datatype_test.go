package datatype_test

import (
	"testing"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/internal/datatype"
)

// TestTheTableHasTritonsTypes: the 14 element types, at the values of
// TRITONSERVER_DataType that core's constants carry, with their names and
// element sizes; names map back to the same values.
func TestTheTableHasTritonsTypes(t *testing.T) {
	want := []struct {
		v    core.DataType
		name string
		size int
	}{
		{core.TypeBool, "BOOL", 1}, {core.TypeUint8, "UINT8", 1}, {core.TypeUint16, "UINT16", 2},
		{core.TypeUint32, "UINT32", 4}, {core.TypeUint64, "UINT64", 8}, {core.TypeInt8, "INT8", 1},
		{core.TypeInt16, "INT16", 2}, {core.TypeInt32, "INT32", 4}, {core.TypeInt64, "INT64", 8},
		{core.TypeFP16, "FP16", 2}, {core.TypeFP32, "FP32", 4}, {core.TypeFP64, "FP64", 8},
		{core.TypeBytes, "BYTES", 0}, {core.TypeBF16, "BF16", 2},
	}
	n := 0
	for v := uint32(0); v < 64; v++ {
		if _, ok := datatype.Of(v); ok {
			n++
		}
	}
	if n != len(want) {
		t.Errorf("%d types, want Triton's %d", n, len(want))
	}
	for _, w := range want {
		typ, ok := datatype.Of(uint32(w.v))
		if !ok || typ.Name != w.name || typ.Size != w.size {
			t.Errorf("Of(%d) = %+v, %t; want %s of %d bytes", w.v, typ, ok, w.name, w.size)
		}
		if got := datatype.Value(w.name); got != uint32(w.v) {
			t.Errorf("Value(%q) = %d, want %d", w.name, got, w.v)
		}
		size, fixed := datatype.Size(w.name)
		if size != w.size || fixed != (w.size > 0) {
			t.Errorf("Size(%q) = %d, %t", w.name, size, fixed)
		}
	}
	if _, ok := datatype.Of(0); ok {
		t.Error("Of(0), TRITONSERVER_TYPE_INVALID, is a type")
	}
	if _, ok := datatype.Size("FP8"); ok || datatype.Value("FP8") != 0 {
		t.Error(`"FP8" is a type`)
	}
}
