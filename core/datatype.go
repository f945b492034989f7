package core

// DataType is a tensor element type, numbered as TRITONSERVER_DataType and as
// the model configuration's DataType enum (which share their values).
type DataType uint32

// Tensor element types.
const (
	TypeInvalid DataType = iota
	TypeBool
	TypeUint8
	TypeUint16
	TypeUint32
	TypeUint64
	TypeInt8
	TypeInt16
	TypeInt32
	TypeInt64
	TypeFP16
	TypeFP32
	TypeFP64
	TypeBytes
	TypeBF16
)

var dataTypeNames = [...]string{
	TypeBool: "BOOL", TypeUint8: "UINT8", TypeUint16: "UINT16", TypeUint32: "UINT32",
	TypeUint64: "UINT64", TypeInt8: "INT8", TypeInt16: "INT16", TypeInt32: "INT32",
	TypeInt64: "INT64", TypeFP16: "FP16", TypeFP32: "FP32", TypeFP64: "FP64",
	TypeBytes: "BYTES", TypeBF16: "BF16",
}

var dataTypeSizes = [...]int{
	TypeBool: 1, TypeUint8: 1, TypeUint16: 2, TypeUint32: 4, TypeUint64: 8,
	TypeInt8: 1, TypeInt16: 2, TypeInt32: 4, TypeInt64: 8, TypeFP16: 2,
	TypeFP32: 4, TypeFP64: 8, TypeBytes: 0, TypeBF16: 2,
}

// String returns the protocol name ("INT32", "BYTES", ...), or "INVALID".
func (d DataType) String() string {
	if d > TypeInvalid && int(d) < len(dataTypeNames) {
		return dataTypeNames[d]
	}
	return "INVALID"
}

// Valid reports whether d names a real element type.
func (d DataType) Valid() bool { return d > TypeInvalid && int(d) < len(dataTypeNames) }

// ByteSize returns the size of one element, or 0 for BYTES (variable) and
// invalid types.
func (d DataType) ByteSize() int {
	if int(d) < len(dataTypeSizes) {
		return dataTypeSizes[d]
	}
	return 0
}

// ParseDataType maps a protocol name ("FP32") to its DataType; unknown names
// give TypeInvalid.
func ParseDataType(name string) DataType {
	for i, n := range dataTypeNames {
		if n != "" && n == name {
			return DataType(i)
		}
	}
	return TypeInvalid
}
