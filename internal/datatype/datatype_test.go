package datatype_test

import (
	"testing"

	"tritonhost/core"
	"tritonhost/internal/datatype"
)

// TestTheTableIsTheServers: every element type the server knows has its
// name and size here, and nothing else is here.
func TestTheTableIsTheServers(t *testing.T) {
	n := 0
	for v := uint32(0); v < 64; v++ {
		d := core.DataType(v)
		typ, ok := datatype.Of(v)
		if ok != d.Valid() {
			t.Errorf("value %d: in the table %t, a type of the server's %t", v, ok, d.Valid())
			continue
		}
		if !ok {
			continue
		}
		n++
		if typ.Name != d.String() || typ.Size != d.ByteSize() {
			t.Errorf("value %d: %+v, the server's %s of %d bytes", v, typ, d, d.ByteSize())
		}
		size, fixed := datatype.Size(typ.Name)
		if size != d.ByteSize() || fixed != (d != core.TypeBytes) {
			t.Errorf("Size(%q) = %d, %t", typ.Name, size, fixed)
		}
	}
	if n != 14 {
		t.Errorf("%d types, want Triton's 14", n)
	}
	if _, ok := datatype.Size("FP8"); ok {
		t.Error(`Size("FP8") is a type`)
	}
}
