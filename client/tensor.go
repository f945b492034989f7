package client

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/tritonhost/tritonhost/internal/datatype"
)

// Tensor is a named tensor in the protocol's layout: little-endian elements,
// BYTES elements each preceded by a 4-byte length.
type Tensor struct {
	Name     string
	Datatype string
	Shape    []int64
	Data     []byte
}

// Int32s builds an INT32 tensor.
func Int32s(name string, shape []int64, vals ...int32) Tensor {
	b := make([]byte, 4*len(vals))
	for i, v := range vals {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(v))
	}
	return Tensor{Name: name, Datatype: "INT32", Shape: shape, Data: b}
}

// Uint32s builds a UINT32 tensor.
func Uint32s(name string, shape []int64, vals ...uint32) Tensor {
	b := make([]byte, 4*len(vals))
	for i, v := range vals {
		binary.LittleEndian.PutUint32(b[4*i:], v)
	}
	return Tensor{Name: name, Datatype: "UINT32", Shape: shape, Data: b}
}

// FP32s builds an FP32 tensor.
func FP32s(name string, shape []int64, vals ...float32) Tensor {
	b := make([]byte, 4*len(vals))
	for i, v := range vals {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	return Tensor{Name: name, Datatype: "FP32", Shape: shape, Data: b}
}

// Strings builds a BYTES tensor.
func Strings(name string, shape []int64, vals ...string) Tensor {
	var b []byte
	for _, v := range vals {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(v)))
		b = append(b, v...)
	}
	return Tensor{Name: name, Datatype: "BYTES", Shape: shape, Data: b}
}

// AsInt32s reads an INT32 tensor.
func (t Tensor) AsInt32s() ([]int32, error) {
	if t.Datatype != "INT32" || len(t.Data)%4 != 0 {
		return nil, fmt.Errorf("tensor %q: %s of %d bytes is not INT32", t.Name, t.Datatype, len(t.Data))
	}
	out := make([]int32, len(t.Data)/4)
	for i := range out {
		out[i] = int32(binary.LittleEndian.Uint32(t.Data[4*i:]))
	}
	return out, nil
}

// AsUint32s reads a UINT32 tensor.
func (t Tensor) AsUint32s() ([]uint32, error) {
	if t.Datatype != "UINT32" || len(t.Data)%4 != 0 {
		return nil, fmt.Errorf("tensor %q: %s of %d bytes is not UINT32", t.Name, t.Datatype, len(t.Data))
	}
	out := make([]uint32, len(t.Data)/4)
	for i := range out {
		out[i] = binary.LittleEndian.Uint32(t.Data[4*i:])
	}
	return out, nil
}

// Values decodes any tensor into Go values for display: integers as int64
// or uint64, floating point as float64 (FP16 and BF16 widened), BOOL as
// bool and BYTES as string.
func (t Tensor) Values() ([]any, error) {
	size, _ := datatype.Size(t.Datatype)
	if t.Datatype == "BYTES" {
		var out []any
		d := t.Data
		for len(d) > 0 {
			if len(d) < 4 || uint64(binary.LittleEndian.Uint32(d)) > uint64(len(d)-4) {
				return nil, fmt.Errorf("tensor %q: malformed BYTES contents", t.Name)
			}
			n := binary.LittleEndian.Uint32(d)
			out = append(out, string(d[4:4+n]))
			d = d[4+n:]
		}
		return out, nil
	}
	if size == 0 || len(t.Data)%size != 0 {
		return nil, fmt.Errorf("tensor %q: %d bytes of %s", t.Name, len(t.Data), t.Datatype)
	}
	out := make([]any, len(t.Data)/size)
	le := binary.LittleEndian
	for i := range out {
		b := t.Data[i*size:]
		switch t.Datatype {
		case "BOOL":
			out[i] = b[0] != 0
		case "INT8":
			out[i] = int64(int8(b[0]))
		case "UINT8":
			out[i] = uint64(b[0])
		case "INT16":
			out[i] = int64(int16(le.Uint16(b)))
		case "UINT16":
			out[i] = uint64(le.Uint16(b))
		case "INT32":
			out[i] = int64(int32(le.Uint32(b)))
		case "UINT32":
			out[i] = uint64(le.Uint32(b))
		case "INT64":
			out[i] = int64(le.Uint64(b))
		case "UINT64":
			out[i] = le.Uint64(b)
		case "FP32":
			out[i] = float64(math.Float32frombits(le.Uint32(b)))
		case "FP64":
			out[i] = math.Float64frombits(le.Uint64(b))
		case "FP16":
			out[i] = halfToFloat(le.Uint16(b))
		case "BF16":
			out[i] = float64(math.Float32frombits(uint32(le.Uint16(b)) << 16))
		}
	}
	return out, nil
}

func halfToFloat(h uint16) float64 {
	sign := 1.0
	if h&0x8000 != 0 {
		sign = -1
	}
	exp := int(h>>10) & 0x1f
	frac := float64(h & 0x3ff)
	switch exp {
	case 0:
		return sign * frac / 1024 * math.Pow(2, -14)
	case 31:
		if frac == 0 {
			return sign * math.Inf(1)
		}
		return math.NaN()
	}
	return sign * (1 + frac/1024) * math.Pow(2, float64(exp-15))
}
