package httpserver

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"testing"

	"github.com/tritonhost/tritonhost/core"
)

// The reference below decodes tensor values token by token with
// encoding/json, as the server did before it scanned them in place;
// decodeValues must decode every valid JSON value as it does.

// decodeValuesWithEncodingJSON decodes raw, the JSON values of a tensor of type dt, taking
// at most max values.
func decodeValuesWithEncodingJSON(dt core.DataType, raw []byte, max int64) (jsonTensor, error) {
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
		if t.data, err = appendTokenValue(t.data, dt, tok); err != nil {
			return t, fmt.Errorf("value %d: %v", t.count-1, err)
		}
	}
	return t, nil
}

// appendTokenValue appends one JSON value as an element of type dt.
func appendTokenValue(b []byte, dt core.DataType, tok json.Token) ([]byte, error) {
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

func FuzzJSONTensorValuesMatchEncodingJSON(f *testing.F) {
	for _, seed := range []string{
		`[1,2,3]`, `[[1,-2],[3,2147483647]]`, `[]`, `[[],[]]`, `[[1],[2,3]]`, `[1,[2]]`, `[[1],2]`, `7`, `[1.5e3, -0, 0.25]`,
		`["a","\u00e9\ud83d\ude00","\ud800x","\\\"\/\b\f\n\r\t", "\u2028<>&"]`, "[\"\xff\xfe\"]", `[true,false,null]`,
		`[{"a":1}]`, `[1e400]`, `[-129, 128, 255, 256]`, `[ 1 , 2 ]`, `"lone"`, `[[[true]]]`,
		// the flat-array path's edges
		`[-9223372036854775808,9223372036854775807]`, `[-9223372036854775809]`, `[18446744073709551615]`,
		`[18446744073709551616]`, `[12345678901234567890123]`, `[01]`, `[1,]`, `[1 2]`, `[1e2]`, `[1.0]`,
		`[-0]`, `[-]`, "\t[ 1,\n-2 ]\r\n", `[1] 2`, `[32767,-32768,65535,-1]`, `[0,1,2,3,4,5,6,7,8]`,
		// long integers: runs of 7, 8, 9, 16 and 20 digits, a leading 0,
		// a fraction or an exponent after many digits
		`[1234567,12345678,123456789,1234567890123456]`, `[-12345678,-99999999]`, `[012345678]`,
		`[1234567.5]`, `[12345678e1]`, `[1234567E2]`, `[99999999999999999999]`, `[4294967295,4294967296]`,
	} {
		for _, dt := range []core.DataType{core.TypeInt8, core.TypeUint16, core.TypeInt32, core.TypeInt64, core.TypeUint64, core.TypeFP32, core.TypeFP64, core.TypeBool, core.TypeBytes} {
			f.Add([]byte(seed), uint8(dt), int64(8))
		}
	}
	f.Fuzz(func(t *testing.T, raw []byte, dtByte uint8, max int64) {
		if !json.Valid(raw) {
			return // the body's decoding refuses it before its values are decoded
		}
		dt := core.DataType(dtByte)
		want, wantErr := decodeValuesWithEncodingJSON(dt, raw, max)
		got, err := decodeValues(dt, raw, max)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("%s values %q (at most %d): error %v, encoding/json's %v", dt, raw, max, err, wantErr)
		}
		if err != nil {
			if err.Error() != wantErr.Error() {
				t.Fatalf("%s values %q: error %q, encoding/json's %q", dt, raw, err, wantErr)
			}
			return
		}
		if !bytes.Equal(got.data, want.data) || got.count != want.count || !slices.Equal(got.shape, want.shape) {
			t.Fatalf("%s values %q: %x %d %v, encoding/json's %x %d %v", dt, raw, got.data, got.count, got.shape, want.data, want.count, want.shape)
		}
	})
}
