package core

import (
	"encoding/binary"
	"math"
)

// Input is one input tensor of an inference request. Its contents may be
// split over several buffers (a backend sees them as buffer_count > 1); most
// callers pass one. The server does not copy the buffers: they must not change
// until the request's final response has been delivered.
type Input struct {
	Name     string
	DataType DataType
	Shape    []int64
	Buffers  [][]byte
}

// NewInput returns an input whose contents are one buffer.
func NewInput(name string, dt DataType, shape []int64, data []byte) Input {
	return Input{Name: name, DataType: dt, Shape: shape, Buffers: [][]byte{data}}
}

// ByteSize returns the total size of the input's buffers.
func (in *Input) ByteSize() uint64 {
	var n uint64
	for _, b := range in.Buffers {
		n += uint64(len(b))
	}
	return n
}

// Output is one output tensor of a response. Data is owned by the response.
type Output struct {
	Name     string
	DataType DataType
	Shape    []int64
	Data     []byte
}

// ElementCount returns the product of shape, or -1 if a dimension is
// negative or the product does not fit in an int64. An empty shape is a
// scalar with one element.
func ElementCount(shape []int64) int64 {
	n, zero, overflow := int64(1), false, false
	for _, d := range shape {
		switch {
		case d < 0:
			return -1
		case d == 0:
			zero = true
		case n > math.MaxInt64/d:
			overflow = true
		default:
			n *= d
		}
	}
	switch {
	case zero:
		return 0
	case overflow:
		return -1
	}
	return n
}

// EncodeBytes encodes strings as a BYTES tensor: each element is a 4-byte
// little-endian length followed by its bytes.
func EncodeBytes(elems ...[]byte) []byte {
	size := 0
	for _, e := range elems {
		size += 4 + len(e)
	}
	out := make([]byte, 0, size)
	for _, e := range elems {
		out = binary.LittleEndian.AppendUint32(out, uint32(len(e)))
		out = append(out, e...)
	}
	return out
}

// DecodeBytes splits a BYTES tensor into its elements (sub-slices of data).
// It fails if an element's length runs past the end of data.
func DecodeBytes(data []byte) ([][]byte, error) {
	var elems [][]byte
	for len(data) > 0 {
		if len(data) < 4 {
			return nil, Errorf(CodeInvalidArg, "BYTES tensor ends inside an element length")
		}
		n := binary.LittleEndian.Uint32(data)
		data = data[4:]
		if uint64(n) > uint64(len(data)) {
			return nil, Errorf(CodeInvalidArg, "BYTES element of %d bytes runs past the end of the tensor", n)
		}
		elems = append(elems, data[:n])
		data = data[n:]
	}
	return elems, nil
}

// countBytesElements counts the length-prefixed elements of a BYTES tensor
// whose contents are split over buffers (an element may straddle buffers).
// It returns -1 if the contents are not a whole number of elements.
func countBytesElements(buffers [][]byte) int64 {
	count, partial, cut := scanBytesElements(buffers)
	if partial > 0 || cut {
		return -1
	}
	return count
}
