// Package datatype is the table of tensor element types that Triton's
// protocols and C API share: each type's protocol name and the size of
// one element, by its TRITONSERVER_DataType value. It imports nothing, so
// that the server, the client and the command-line tools read the one
// table.
package datatype

// Type is one element type.
type Type struct {
	Name string // the protocol's name: "FP32"
	Size int    // bytes of one element; 0 for BYTES, whose elements vary
}

// types are the element types by TRITONSERVER_DataType value; 0 is
// TRITONSERVER_TYPE_INVALID.
var types = [...]Type{
	{}, {"BOOL", 1}, {"UINT8", 1}, {"UINT16", 2}, {"UINT32", 4}, {"UINT64", 8},
	{"INT8", 1}, {"INT16", 2}, {"INT32", 4}, {"INT64", 8},
	{"FP16", 2}, {"FP32", 4}, {"FP64", 8}, {"BYTES", 0}, {"BF16", 2},
}

// Of returns the type of TRITONSERVER_DataType value v, and false when v
// names none.
func Of(v uint32) (Type, bool) {
	if v == 0 || v >= uint32(len(types)) {
		return Type{}, false
	}
	return types[v], true
}

// Size returns the bytes of one element of the type named name, and false
// for BYTES (elements of any size) and for a name that is no type.
func Size(name string) (int, bool) {
	for _, t := range types[1:] {
		if t.Name == name {
			return t.Size, t.Size > 0
		}
	}
	return 0, false
}

// Value returns the TRITONSERVER_DataType value of the type named name,
// and 0 (TRITONSERVER_TYPE_INVALID) for a name that is no type.
func Value(name string) uint32 {
	for v, t := range types[1:] {
		if t.Name == name {
			return uint32(v + 1)
		}
	}
	return 0
}
