package httpserver

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/internal/protocol"
)

// Tensor values in JSON: a flat or nested array (row-major) of numbers,
// booleans or, for BYTES, strings; or, where a single value will do (the
// generate extension), the value alone.

// jsonTensor is a tensor decoded from JSON: its little-endian bytes (BYTES
// elements length-prefixed, as core takes them), how many values it had,
// and the shape its nesting gives (nil for a lone value).
type jsonTensor struct {
	data  []byte
	count int64
	shape []int64
}

// decodeValues decodes raw, the JSON values of a tensor of type dt, taking
// at most max values.
func decodeValues(dt core.DataType, raw []byte, max int64) (jsonTensor, error) {
	var t jsonTensor
	if dt == core.TypeFP16 || dt == core.TypeBF16 || !dt.Valid() {
		return t, fmt.Errorf("%s values have no JSON form; send them as binary data", dt)
	}
	if size := int64(dt.ByteSize()); size > 0 && max > 0 {
		t.data = make([]byte, 0, min(max*size, int64(len(raw))*size))
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var (
		counts []int64 // values or sub-arrays seen in each open array
		leaf   = -1    // the depth at which values sit
	)
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return t, fmt.Errorf("not valid JSON: %v", err)
		}
		depth := len(counts)
		switch tok {
		case json.Delim('['):
			if depth == leaf {
				return t, fmt.Errorf("values and arrays are mixed at one level")
			}
			if depth > 0 {
				counts[depth-1]++
			}
			counts = append(counts, 0)
			continue
		case json.Delim(']'):
			n := counts[depth-1]
			counts = counts[:depth-1]
			for len(t.shape) < depth {
				t.shape = append(t.shape, -1) // not seen closed yet
			}
			switch {
			case t.shape[depth-1] < 0:
				t.shape[depth-1] = n
			case t.shape[depth-1] != n:
				return t, fmt.Errorf("the nested arrays are not all of one length (%d and %d at depth %d)", t.shape[depth-1], n, depth)
			}
			continue
		case json.Delim('{'):
			return t, fmt.Errorf("a tensor value cannot be an object")
		}
		if leaf >= 0 && depth != leaf || leaf < 0 && len(t.shape) > depth {
			return t, fmt.Errorf("values and arrays are mixed at one level")
		}
		leaf = depth
		if depth > 0 {
			counts[depth-1]++
		}
		if t.count++; t.count > max {
			return t, fmt.Errorf("more than the %d values its shape holds", max)
		}
		if t.data, err = appendValue(t.data, dt, tok); err != nil {
			return t, fmt.Errorf("value %d: %v", t.count-1, err)
		}
	}
	return t, nil
}

// appendValue appends one JSON value as an element of type dt.
func appendValue(b []byte, dt core.DataType, tok json.Token) ([]byte, error) {
	switch dt {
	case core.TypeBool:
		v, ok := tok.(bool)
		if !ok {
			return b, fmt.Errorf("%v is not a boolean", tok)
		}
		if v {
			return append(b, 1), nil
		}
		return append(b, 0), nil
	case core.TypeBytes:
		v, ok := tok.(string)
		if !ok {
			return b, fmt.Errorf("%v is not a string", tok)
		}
		b = binary.LittleEndian.AppendUint32(b, uint32(len(v)))
		return append(b, v...), nil
	}
	num, ok := tok.(json.Number)
	if !ok {
		return b, fmt.Errorf("%v is not a number", tok)
	}
	s := string(num)
	bits := dt.ByteSize() * 8
	switch dt {
	case core.TypeInt8, core.TypeInt16, core.TypeInt32, core.TypeInt64:
		v, err := strconv.ParseInt(s, 10, bits)
		if err != nil {
			return b, fmt.Errorf("%s is not a %s", s, dt)
		}
		return appendLE(b, uint64(v), bits), nil
	case core.TypeUint8, core.TypeUint16, core.TypeUint32, core.TypeUint64:
		v, err := strconv.ParseUint(s, 10, bits)
		if err != nil {
			return b, fmt.Errorf("%s is not a %s", s, dt)
		}
		return appendLE(b, v, bits), nil
	case core.TypeFP32:
		v, err := strconv.ParseFloat(s, 32)
		if err != nil {
			return b, fmt.Errorf("%s is not an FP32", s)
		}
		return binary.LittleEndian.AppendUint32(b, math.Float32bits(float32(v))), nil
	case core.TypeFP64:
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return b, fmt.Errorf("%s is not an FP64", s)
		}
		return binary.LittleEndian.AppendUint64(b, math.Float64bits(v)), nil
	}
	return b, fmt.Errorf("%s values have no JSON form", dt)
}

func appendLE(b []byte, v uint64, bits int) []byte {
	for i := 0; i < bits; i += 8 {
		b = append(b, byte(v>>i))
	}
	return b
}

// parameterValue decodes a JSON parameter value: a boolean, a number (an
// integer when it is one) or a string.
func parameterValue(raw json.RawMessage) (protocol.Value, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return protocol.Value{}, fmt.Errorf("not valid JSON: %v", err)
	}
	switch v := v.(type) {
	case bool:
		return protocol.Value{Kind: protocol.KindBool, Bool: v}, nil
	case string:
		return protocol.Value{Kind: protocol.KindString, String: v}, nil
	case json.Number:
		if n, err := strconv.ParseInt(string(v), 10, 64); err == nil {
			return protocol.Value{Kind: protocol.KindInt, Int: n}, nil
		}
		if n, err := strconv.ParseUint(string(v), 10, 64); err == nil {
			return protocol.Value{Kind: protocol.KindUint, Uint: n}, nil
		}
		f, err := v.Float64()
		if err != nil {
			return protocol.Value{}, fmt.Errorf("%s is out of range", v)
		}
		return protocol.Value{Kind: protocol.KindDouble, Double: f}, nil
	}
	return protocol.Value{}, fmt.Errorf("must be a boolean, a number or a string")
}
