package httpserver

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
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
// at most max values. It walks raw once, appending each value's bytes to
// the tensor's data as it meets it: nothing is allocated per value (a
// BYTES string with escapes or bytes that are not UTF-8 aside).
func decodeValues(dt core.DataType, raw []byte, max int64) (jsonTensor, error) {
	var t jsonTensor
	if dt == core.TypeFP16 || dt == core.TypeBF16 || !dt.Valid() {
		return t, fmt.Errorf("%s values have no JSON form; send them as binary data", dt)
	}
	if max > 0 {
		if size := int64(dt.ByteSize()); size > 0 {
			t.data = make([]byte, 0, min(max*size, int64(len(raw))*size))
		} else if dt == core.TypeBytes {
			// n strings take at least 3n-1 bytes of JSON (quotes and
			// commas) and give n 4-byte lengths: the data is at most
			// len(raw)+n+1 bytes, unless bytes that are not UTF-8 are
			// replaced, when append grows it.
			t.data = make([]byte, 0, int64(len(raw))+min(max, int64(len(raw)+1)/3)+1)
		}
	}
	if t, ok := decodeFlatNumbers(t.data, dt, raw, max); ok {
		return t, nil
	}
	s := valueScanner{b: raw}
	var (
		countsMem [8]int64
		counts    = countsMem[:0] // values or sub-arrays seen in each open array
		leaf      = -1            // the depth at which values sit
	)
	for {
		kind, tok, err := s.token()
		if err != nil {
			return t, fmt.Errorf("not valid JSON: %v", err)
		}
		depth := len(counts)
		switch kind {
		case tokEnd:
			return t, nil
		case tokOpen:
			if depth == leaf {
				return t, fmt.Errorf("values and arrays are mixed at one level")
			}
			if depth > 0 {
				counts[depth-1]++
			}
			counts = append(counts, 0)
			continue
		case tokClose:
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
		case tokObject:
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
		if t.data, err = appendValue(t.data, dt, kind, tok); err != nil {
			return t, fmt.Errorf("value %d: %v", t.count-1, err)
		}
	}
}

// decodeFlatNumbers decodes raw when it is what clients send for a numeric
// tensor, one flat array of numbers, of which dt takes each (an integer
// type: an integer in its range), and no more than max: without the
// general scanner's tokens, and integers without strconv (floats go
// through appendValue, as the general scanner's do). ok is false for
// anything else, which decodeValues then decodes, or refuses with its
// errors; data is the tensor's buffer, empty.
func decodeFlatNumbers(data []byte, dt core.DataType, raw []byte, max int64) (t jsonTensor, ok bool) {
	var intType, signed bool
	switch dt {
	case core.TypeInt8, core.TypeInt16, core.TypeInt32, core.TypeInt64:
		intType, signed = true, true
	case core.TypeUint8, core.TypeUint16, core.TypeUint32, core.TypeUint64:
		intType = true
	case core.TypeFP32, core.TypeFP64:
	default:
		return t, false
	}
	bits := dt.ByteSize() * 8
	s := valueScanner{b: raw}
	s.space()
	if s.i >= len(raw) || raw[s.i] != '[' {
		return t, false
	}
	s.i++
	var n int64
	for {
		s.space()
		if s.i >= len(raw) || raw[s.i] != '-' && (raw[s.i] < '0' || raw[s.i] > '9') {
			return t, false // "[]", "[1,]", or not a number
		}
		if n++; n > max {
			return t, false
		}
		if intType {
			v, end, ok := scanJSONInt(raw, s.i, bits, signed)
			if !ok {
				return t, false
			}
			s.i = end
			data = appendLE(data, v, bits)
		} else {
			start := s.i
			if s.number() != nil {
				return t, false
			}
			var err error
			if data, err = appendValue(data, dt, tokNumber, raw[start:s.i]); err != nil {
				return t, false
			}
		}
		s.space()
		if s.i >= len(raw) {
			return t, false
		}
		switch raw[s.i] {
		case ',':
			s.i++
		case ']':
			if skipSpace(raw, s.i+1) != len(raw) {
				return t, false
			}
			return jsonTensor{data: data, count: n, shape: []int64{n}}, true
		default:
			return t, false
		}
	}
}

// scanJSONInt reads the integer at b[i:], written as JSON writes one
// (-?(0|[1-9][0-9]*)), of the given bits, as its two's complement when
// signed, and returns it and where it ends. ok is false when what follows
// the digits continues a number (a fraction, an exponent, a digit after a
// leading 0), or the integer has more than 19 digits or is out of range.
func scanJSONInt(b []byte, i, bits int, signed bool) (v uint64, end int, ok bool) {
	neg := b[i] == '-'
	if neg {
		if !signed {
			return 0, i, false
		}
		i++
	}
	from := i
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		v = v*10 + uint64(b[i]-'0')
	}
	switch n := i - from; {
	case n == 0 || n > 19 || n > 1 && b[from] == '0':
		return 0, i, false
	case i < len(b) && (b[i] == '.' || b[i] == 'e' || b[i] == 'E'):
		return 0, i, false
	}
	switch {
	case !signed:
		return v, i, bits == 64 || v < 1<<bits
	case neg:
		return -v, i, v <= 1<<(bits-1)
	default:
		return v, i, v < 1<<(bits-1)
	}
}

// appendValue appends one JSON value, of kind and text tok, as an element
// of type dt.
func appendValue(b []byte, dt core.DataType, kind tokenKind, tok []byte) ([]byte, error) {
	switch dt {
	case core.TypeBool:
		switch kind {
		case tokTrue:
			return append(b, 1), nil
		case tokFalse:
			return append(b, 0), nil
		}
		return b, fmt.Errorf("%s is not a boolean", tokenText(kind, tok))
	case core.TypeBytes:
		if kind != tokString {
			return b, fmt.Errorf("%s is not a string", tokenText(kind, tok))
		}
		at := len(b)
		b = append(b, 0, 0, 0, 0)
		b, ok := appendUnquoted(b, tok)
		if !ok {
			return b[:at], fmt.Errorf("%s is not a JSON string", tok)
		}
		binary.LittleEndian.PutUint32(b[at:], uint32(len(b)-at-4))
		return b, nil
	}
	if kind != tokNumber {
		return b, fmt.Errorf("%s is not a number", tokenText(kind, tok))
	}
	bits := dt.ByteSize() * 8
	switch dt {
	case core.TypeInt8, core.TypeInt16, core.TypeInt32, core.TypeInt64:
		v, err := strconv.ParseInt(string(tok), 10, bits)
		if err != nil {
			return b, fmt.Errorf("%s is not a %s", tok, dt)
		}
		return appendLE(b, uint64(v), bits), nil
	case core.TypeUint8, core.TypeUint16, core.TypeUint32, core.TypeUint64:
		v, err := strconv.ParseUint(string(tok), 10, bits)
		if err != nil {
			return b, fmt.Errorf("%s is not a %s", tok, dt)
		}
		return appendLE(b, v, bits), nil
	case core.TypeFP32:
		v, err := strconv.ParseFloat(string(tok), 32)
		if err != nil {
			return b, fmt.Errorf("%s is not an FP32", tok)
		}
		return binary.LittleEndian.AppendUint32(b, math.Float32bits(float32(v))), nil
	case core.TypeFP64:
		v, err := strconv.ParseFloat(string(tok), 64)
		if err != nil {
			return b, fmt.Errorf("%s is not an FP64", tok)
		}
		return binary.LittleEndian.AppendUint64(b, math.Float64bits(v)), nil
	}
	return b, fmt.Errorf("%s values have no JSON form", dt)
}

// tokenText is a value as an error names it: a string unquoted, null as
// <nil>, anything else as written.
func tokenText(kind tokenKind, tok []byte) string {
	switch kind {
	case tokNull:
		return "<nil>"
	case tokString:
		if s, ok := appendUnquoted(nil, tok); ok {
			return string(s)
		}
	}
	return string(tok)
}

// appendLE appends the low bits of v, little-endian.
func appendLE(b []byte, v uint64, bits int) []byte {
	switch bits {
	case 8:
		return append(b, byte(v))
	case 16:
		return binary.LittleEndian.AppendUint16(b, uint16(v))
	case 32:
		return binary.LittleEndian.AppendUint32(b, uint32(v))
	}
	return binary.LittleEndian.AppendUint64(b, v)
}

// plainParameterValue decodes, without encoding/json, the forms a
// parameter's value takes from Triton's clients (binary_data_output,
// sequence_id, priority and the like): true, false, an integer of up to 18
// digits, a string without escapes (plainString). It reports false for
// anything else, which parameterValue leaves to encoding/json; what it
// decodes, encoding/json decodes the same (FuzzParameterValueMatchesEncodingJSON).
func plainParameterValue(raw []byte) (protocol.Value, bool) {
	raw = bytes.Trim(raw, " \t\r\n")
	switch {
	case len(raw) == 0:
		return protocol.Value{}, false
	case string(raw) == "true":
		return protocol.Value{Kind: protocol.KindBool, Bool: true}, true
	case string(raw) == "false":
		return protocol.Value{Kind: protocol.KindBool}, true
	case raw[0] == '"':
		d := inferDecoder{b: raw}
		if s, ok := d.plainString(); ok && d.i == len(raw) {
			return protocol.Value{Kind: protocol.KindString, String: string(s)}, true
		}
		return protocol.Value{}, false
	}
	neg := raw[0] == '-'
	digits := raw[btoi(neg):]
	// JSON's integers: 0, or a digit other than 0 and any digits after it;
	// longer ones may not fit, and encoding/json decides them.
	if len(digits) == 0 || len(digits) > 18 || (digits[0] == '0' && len(digits) > 1) || digitsFrom(digits, 0) != len(digits) {
		return protocol.Value{}, false
	}
	var n int64
	for _, c := range digits {
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return protocol.Value{Kind: protocol.KindInt, Int: n}, true
}

// parameterValue decodes a JSON parameter value: a boolean, a number (an
// integer when it is one) or a string.
func parameterValue(raw json.RawMessage) (protocol.Value, error) {
	if v, ok := plainParameterValue(raw); ok {
		return v, nil
	}
	return decodeParameterJSON(raw)
}

// decodeParameterJSON is parameterValue by encoding/json.
func decodeParameterJSON(raw json.RawMessage) (protocol.Value, error) {
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
