package grpcserver

import (
	"encoding/binary"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/tritonhost/tritonhost/core"
)

// wireContents are an input's typed contents as encoded on the wire: the
// value of each occurrence of its InferTensorContents field, in order (the
// occurrences of a message field merge, and every field of
// InferTensorContents is repeated, so their values are read one after the
// other). Empty when the input has no contents field.
type wireContents [][]byte

// The fields of InferTensorContents, by number.
const (
	boolContents   protowire.Number = 1
	intContents    protowire.Number = 2
	int64Contents  protowire.Number = 3
	uintContents   protowire.Number = 4
	uint64Contents protowire.Number = 5
	fp32Contents   protowire.Number = 6
	fp64Contents   protowire.Number = 7
	bytesContents  protowire.Number = 8
)

// inputContents returns input i's typed contents, encoded: as received, or,
// for a request a Go caller built, its Contents field encoded.
func (in *inboundRequest) inputContents(i int) (wireContents, error) {
	if in.contents != nil {
		return in.contents[i], nil
	}
	c := in.msg.GetInputs()[i].GetContents()
	if c == nil {
		return nil, nil
	}
	b, err := proto.Marshal(c)
	if err != nil {
		return nil, core.Errorf(core.CodeInvalidArg, "model '%s': the contents of input '%s': %v", in.msg.GetModelName(), in.msg.GetInputs()[i].GetName(), err)
	}
	return wireContents{b}, nil
}

// contentsData converts an input's typed contents to its little-endian
// bytes, by Triton's rules (InferGRPCToInput): each contents field holds
// values of one data type (int_contents those of INT8, INT16 or INT32,
// after the input's; uint_contents likewise), which must be the input's,
// and only one field may hold values. Empty contents give no data. The
// rules are checked on the wire, before anything is allocated, and the
// values are then decoded straight into the tensor's bytes, so a request
// costs no more than its tensor (which checkRequestWire bounds).
func contentsData(model, input string, dt core.DataType, c wireContents) ([]byte, error) {
	field, n, err := contentsField(model, input, dt, c)
	if err != nil || field == 0 {
		return nil, err
	}
	return decodeContents(dt, field, n, c), nil
}

// contentsField checks an input's typed contents by Triton's rules (see
// contentsData) without decoding them, and returns the field that holds
// the values and how many there are (0, 0 for empty contents).
func contentsField(model, input string, dt core.DataType, c wireContents) (protowire.Number, int, error) {
	var counts [bytesContents + 1]int
	err := eachValue(c, 0, func(num protowire.Number, _ uint64, _ []byte) { counts[num]++ })
	if err != nil {
		return 0, 0, core.Errorf(core.CodeInvalidArg, "model '%s': the contents of input '%s' are not a valid InferTensorContents: %v", model, input, err)
	}
	intType, uintType := core.TypeInt32, core.TypeUint32
	switch dt {
	case core.TypeInt8, core.TypeInt16:
		intType = dt
	case core.TypeUint8, core.TypeUint16:
		uintType = dt
	}
	fieldTypes := [bytesContents + 1]core.DataType{boolContents: core.TypeBool, intContents: intType, int64Contents: core.TypeInt64,
		uintContents: uintType, uint64Contents: core.TypeUint64, fp32Contents: core.TypeFP32, fp64Contents: core.TypeFP64, bytesContents: core.TypeBytes}
	field := protowire.Number(0)
	for num := boolContents; num <= bytesContents; num++ {
		switch {
		case counts[num] == 0:
			continue
		case field != 0:
			return 0, 0, core.Errorf(core.CodeInvalidArg, "unexpected explicit tensor data for input tensor '%s' for model '%s', binary data was already supplied.", input, model)
		case fieldTypes[num] != dt:
			return 0, 0, core.Errorf(core.CodeInvalidArg, "unexpected explicit tensor data for input tensor '%s' for model '%s' of type '%s', expected datatype '%s'",
				input, model, fieldTypes[num], dt)
		}
		field = num
	}
	return field, counts[field], nil
}

// scalarType is the wire type of one value of an InferTensorContents
// field.
func scalarType(num protowire.Number) protowire.Type {
	switch num {
	case fp32Contents:
		return protowire.Fixed32Type
	case fp64Contents:
		return protowire.Fixed64Type
	case bytesContents:
		return protowire.BytesType
	}
	return protowire.VarintType
}

// decodeContents decodes the n values of field (checked by contentsData)
// into the little-endian bytes of a dt tensor (BYTES: each element
// preceded by its 4-byte length).
func decodeContents(dt core.DataType, field protowire.Number, n int, c wireContents) []byte {
	if dt == core.TypeBytes {
		size := 0
		_ = eachValue(c, field, func(_ protowire.Number, _ uint64, v []byte) { size += 4 + len(v) })
		out := make([]byte, 0, size)
		_ = eachValue(c, field, func(_ protowire.Number, _ uint64, v []byte) {
			out = binary.LittleEndian.AppendUint32(out, uint32(len(v)))
			out = append(out, v...)
		})
		return out
	}
	size := dt.ByteSize()
	out := make([]byte, n*size)
	i := 0
	_ = eachValue(c, field, func(_ protowire.Number, x uint64, _ []byte) {
		b := out[i*size:]
		i++
		switch {
		case dt == core.TypeBool:
			if x != 0 {
				b[0] = 1
			}
		case size == 1:
			b[0] = byte(x)
		case size == 2:
			binary.LittleEndian.PutUint16(b, uint16(x))
		case size == 4:
			binary.LittleEndian.PutUint32(b, uint32(x))
		default:
			binary.LittleEndian.PutUint64(b, x)
		}
	})
	return out
}

// eachValue calls f with every value of InferTensorContents' fields in c
// (only those of field only, unless it is 0), packed or not, in order: a
// scalar as its 64 bits (a varint as decoded, so an int32 keeps its bits
// in the low 32; fixed32 and fixed64 as their bits), a bytes value as v (a
// slice of c). A field with a wire type its values cannot have is unknown
// to protobuf, and skipped here too. A malformed value is an error.
func eachValue(c wireContents, only protowire.Number, f func(num protowire.Number, x uint64, v []byte)) error {
	for _, occ := range c {
		err := walkFields(occ, func(num protowire.Number, wt protowire.Type, v, field []byte) error {
			if num < boolContents || num > bytesContents || (only != 0 && num != only) {
				return nil
			}
			st := scalarType(num)
			switch {
			case st == protowire.BytesType:
				if wt == protowire.BytesType {
					f(num, 0, v)
				}
			case wt == protowire.BytesType: // packed
				for len(v) > 0 {
					x, n := consumeScalar(st, v)
					if n < 0 {
						return malformed(n)
					}
					f(num, x, nil)
					v = v[n:]
				}
			case wt == st:
				_, _, tagLen := protowire.ConsumeTag(field)
				x, _ := consumeScalar(st, field[tagLen:])
				f(num, x, nil)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// consumeScalar reads one value of wire type t.
func consumeScalar(t protowire.Type, b []byte) (uint64, int) {
	switch t {
	case protowire.Fixed32Type:
		x, n := protowire.ConsumeFixed32(b)
		return uint64(x), n
	case protowire.Fixed64Type:
		return protowire.ConsumeFixed64(b)
	}
	return protowire.ConsumeVarint(b)
}
