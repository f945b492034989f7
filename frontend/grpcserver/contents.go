package grpcserver

import (
	"encoding/binary"
	"math"

	"tritonhost/core"
	pb "tritonhost/frontend/inferencepb"
)

// contentsData converts an input's typed contents to its little-endian
// bytes, by Triton's rules (InferGRPCToInput): each contents field holds
// values of one data type (int_contents those of INT8, INT16 or INT32,
// after the input's; uint_contents likewise), which must be the input's,
// and only one field may hold values. Empty contents give no data.
func contentsData(model, input string, dt core.DataType, c *pb.InferTensorContents) ([]byte, error) {
	intType, uintType := core.TypeInt32, core.TypeUint32
	switch dt {
	case core.TypeInt8, core.TypeInt16:
		intType = dt
	case core.TypeUint8, core.TypeUint16:
		uintType = dt
	}
	fields := [...]struct {
		n  int
		dt core.DataType
	}{
		{len(c.BoolContents), core.TypeBool},
		{len(c.IntContents), intType},
		{len(c.Int64Contents), core.TypeInt64},
		{len(c.UintContents), uintType},
		{len(c.Uint64Contents), core.TypeUint64},
		{len(c.Fp32Contents), core.TypeFP32},
		{len(c.Fp64Contents), core.TypeFP64},
		{len(c.BytesContents), core.TypeBytes},
	}
	supplied := false
	for _, f := range fields {
		switch {
		case f.n == 0:
			continue
		case supplied:
			return nil, core.Errorf(core.CodeInvalidArg, "unexpected explicit tensor data for input tensor '%s' for model '%s', binary data was already supplied.", input, model)
		case f.dt != dt:
			return nil, core.Errorf(core.CodeInvalidArg, "unexpected explicit tensor data for input tensor '%s' for model '%s' of type '%s', expected datatype '%s'",
				input, model, f.dt, dt)
		}
		supplied = true
	}
	if !supplied {
		return nil, nil
	}
	return contentsBytes(dt, c), nil
}

// contentsBytes converts the values of the contents field of data type dt
// to the tensor's little-endian bytes.
func contentsBytes(dt core.DataType, c *pb.InferTensorContents) []byte {
	if dt == core.TypeBytes {
		return core.EncodeBytes(c.BytesContents...)
	}
	n := countContents(c)
	size := dt.ByteSize()
	out := make([]byte, n*size)
	for i := range n {
		b := out[i*size:]
		switch dt {
		case core.TypeBool:
			if c.BoolContents[i] {
				b[0] = 1
			}
		case core.TypeInt8:
			b[0] = byte(int8(c.IntContents[i]))
		case core.TypeInt16:
			binary.LittleEndian.PutUint16(b, uint16(int16(c.IntContents[i])))
		case core.TypeInt32:
			binary.LittleEndian.PutUint32(b, uint32(c.IntContents[i]))
		case core.TypeInt64:
			binary.LittleEndian.PutUint64(b, uint64(c.Int64Contents[i]))
		case core.TypeUint8:
			b[0] = byte(c.UintContents[i])
		case core.TypeUint16:
			binary.LittleEndian.PutUint16(b, uint16(c.UintContents[i]))
		case core.TypeUint32:
			binary.LittleEndian.PutUint32(b, c.UintContents[i])
		case core.TypeUint64:
			binary.LittleEndian.PutUint64(b, c.Uint64Contents[i])
		case core.TypeFP32:
			binary.LittleEndian.PutUint32(b, math.Float32bits(c.Fp32Contents[i]))
		case core.TypeFP64:
			binary.LittleEndian.PutUint64(b, math.Float64bits(c.Fp64Contents[i]))
		}
	}
	return out
}

func countContents(c *pb.InferTensorContents) int {
	return len(c.BoolContents) + len(c.IntContents) + len(c.Int64Contents) + len(c.UintContents) +
		len(c.Uint64Contents) + len(c.Fp32Contents) + len(c.Fp64Contents) + len(c.BytesContents)
}
