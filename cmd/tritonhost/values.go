package main

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/tritonhost/tritonhost/internal/datatype"
)

// encodeValues encodes textual values as a tensor of the datatype.
func encodeValues(dt string, vals []string) ([]byte, error) {
	if dt == "BYTES" {
		var out []byte
		for _, v := range vals {
			out = binary.LittleEndian.AppendUint32(out, uint32(len(v)))
			out = append(out, v...)
		}
		return out, nil
	}
	var out []byte
	le := binary.LittleEndian
	size, _ := datatype.Size(dt)
	for _, v := range vals {
		v = strings.TrimSpace(v)
		var err error
		switch dt {
		case "BOOL":
			var b bool
			if b, err = strconv.ParseBool(v); err == nil {
				out = append(out, map[bool]byte{false: 0, true: 1}[b])
			}
		case "INT8", "INT16", "INT32", "INT64":
			bits := 8 * size
			var n int64
			if n, err = strconv.ParseInt(v, 10, bits); err == nil {
				out = appendInt(out, uint64(n), bits)
			}
		case "UINT8", "UINT16", "UINT32", "UINT64":
			bits := 8 * size
			var n uint64
			if n, err = strconv.ParseUint(v, 10, bits); err == nil {
				out = appendInt(out, n, bits)
			}
		case "FP32":
			var f float64
			if f, err = strconv.ParseFloat(v, 32); err == nil {
				out = le.AppendUint32(out, math.Float32bits(float32(f)))
			}
		case "FP64":
			var f float64
			if f, err = strconv.ParseFloat(v, 64); err == nil {
				out = le.AppendUint64(out, math.Float64bits(f))
			}
		case "BF16":
			var f float64
			if f, err = strconv.ParseFloat(v, 32); err == nil {
				out = le.AppendUint16(out, uint16(math.Float32bits(float32(f))>>16))
			}
		default:
			return nil, fmt.Errorf("datatype %q cannot be given on the command line", dt)
		}
		if err != nil {
			return nil, fmt.Errorf("value %q is not a valid %s", v, dt)
		}
	}
	return out, nil
}

func appendInt(out []byte, n uint64, bits int) []byte {
	for i := 0; i < bits/8; i++ {
		out = append(out, byte(n>>(8*i)))
	}
	return out
}
