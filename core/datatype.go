package core

import "github.com/tritonhost/tritonhost/internal/datatype"

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

// String returns the protocol name ("INT32", "BYTES", ...), or "INVALID".
func (d DataType) String() string {
	if t, ok := datatype.Of(uint32(d)); ok {
		return t.Name
	}
	return "INVALID"
}

// Valid reports whether d names a real element type.
func (d DataType) Valid() bool {
	_, ok := datatype.Of(uint32(d))
	return ok
}

// ByteSize returns the size of one element, or 0 for BYTES (variable) and
// invalid types.
func (d DataType) ByteSize() int {
	t, _ := datatype.Of(uint32(d))
	return t.Size
}

// ParseDataType maps a protocol name ("FP32") to its DataType; unknown names
// give TypeInvalid.
func ParseDataType(name string) DataType {
	return DataType(datatype.Value(name))
}
