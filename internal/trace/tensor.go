package trace

import (
	"encoding/binary"
	"math"
	"strconv"

	"github.com/tritonhost/tritonhost/core"
)

// tensorText renders a traced tensor's values as Triton's trace file has
// them: comma-separated, booleans as 0 and 1, strings each in quotes;
// FP16 and BF16 values, and data that does not fill the shape, are left
// out.
func tensorText(t core.TraceTensor) string {
	n := core.ElementCount(t.Shape)
	data := t.Data
	var b []byte
	if t.DataType == core.TypeBytes {
		for i := int64(0); i < n; i++ {
			if len(data) < 4 {
				break
			}
			l := int(binary.LittleEndian.Uint32(data))
			if len(data)-4 < l {
				break
			}
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, '"')
			b = append(b, data[4:4+l]...)
			b = append(b, '"')
			data = data[4+l:]
		}
		return string(b)
	}
	size := t.DataType.ByteSize()
	if size == 0 || t.DataType == core.TypeFP16 || t.DataType == core.TypeBF16 || int64(len(data)) < n*int64(size) {
		return ""
	}
	for i := int64(0); i < n; i++ {
		if i > 0 {
			b = append(b, ',')
		}
		e := data[i*int64(size):]
		switch t.DataType {
		case core.TypeBool:
			if e[0] != 0 {
				b = append(b, '1')
			} else {
				b = append(b, '0')
			}
		case core.TypeUint8:
			b = strconv.AppendUint(b, uint64(e[0]), 10)
		case core.TypeUint16:
			b = strconv.AppendUint(b, uint64(binary.LittleEndian.Uint16(e)), 10)
		case core.TypeUint32:
			b = strconv.AppendUint(b, uint64(binary.LittleEndian.Uint32(e)), 10)
		case core.TypeUint64:
			b = strconv.AppendUint(b, binary.LittleEndian.Uint64(e), 10)
		case core.TypeInt8:
			b = strconv.AppendInt(b, int64(int8(e[0])), 10)
		case core.TypeInt16:
			b = strconv.AppendInt(b, int64(int16(binary.LittleEndian.Uint16(e))), 10)
		case core.TypeInt32:
			b = strconv.AppendInt(b, int64(int32(binary.LittleEndian.Uint32(e))), 10)
		case core.TypeInt64:
			b = strconv.AppendInt(b, int64(binary.LittleEndian.Uint64(e)), 10)
		case core.TypeFP32:
			b = strconv.AppendFloat(b, float64(math.Float32frombits(binary.LittleEndian.Uint32(e))), 'g', 6, 32)
		case core.TypeFP64:
			b = strconv.AppendFloat(b, math.Float64frombits(binary.LittleEndian.Uint64(e)), 'g', 6, 64)
		}
	}
	return string(b)
}
