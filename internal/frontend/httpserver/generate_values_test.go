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
	"testing"

	"github.com/tritonhost/tritonhost/core"
)

// The reference below reads a generate input's values token by token with
// encoding/json, as the server did before it scanned them in place;
// readLeaves must read every valid JSON value as it does.

// readLeavesWithEncodingJSON reads raw, a valid JSON value, as readLeaves
// does.
func readLeavesWithEncodingJSON(raw json.RawMessage, dt core.DataType) (leaves, error) {
	var v leaves
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	depth := 0
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return v, core.Errorf(core.CodeInternal, "failed to parse the request JSON buffer: %v", err)
		}
		switch tok {
		case json.Delim('['):
			if depth == 1 {
				v.top++
			}
			depth++
			continue
		case json.Delim(']'):
			depth--
			continue
		case json.Delim('{'):
			for d := 1; d > 0; {
				t, err := dec.Token()
				if err != nil {
					return v, core.Errorf(core.CodeInternal, "failed to parse the request JSON buffer: %v", err)
				}
				switch t {
				case json.Delim('{'), json.Delim('['):
					d++
				case json.Delim('}'), json.Delim(']'):
					d--
				}
			}
			tok = nil // a value of no convertible type
		}
		if depth == 1 {
			v.top++
		}
		idx := v.count
		v.count++
		if v.typeErr != "" {
			continue
		}
		var e string
		v.data, e = appendTokenGenerateValue(v.data, dt, tok)
		if e != "" {
			v.typeErr, v.typeErrAt = e, idx
		}
	}
	if !bytes.HasPrefix(bytes.TrimSpace(raw), []byte("[")) {
		v.top = 1
	}
	return v, nil
}

// appendTokenGenerateValue is appendGenerateValue for a token of
// encoding/json.
func appendTokenGenerateValue(b []byte, dt core.DataType, tok json.Token) ([]byte, string) {
	num, isNum := tok.(json.Number)
	switch dt {
	case core.TypeBool:
		v, ok := tok.(bool)
		if !ok {
			return b, errNotBool
		}
		if v {
			return append(b, 1), ""
		}
		return append(b, 0), ""
	case core.TypeBytes:
		s, ok := tok.(string)
		if !ok {
			return b, errNotString
		}
		b = binary.LittleEndian.AppendUint32(b, uint32(len(s)))
		return append(b, s...), ""
	case core.TypeUint8, core.TypeUint16, core.TypeUint32, core.TypeUint64:
		if !isNum {
			return b, errNotUint
		}
		u, err := strconv.ParseUint(string(num), 10, 64)
		if err != nil {
			return b, errNotUint
		}
		return appendLE(b, u, dt.ByteSize()*8), ""
	case core.TypeInt8, core.TypeInt16, core.TypeInt32, core.TypeInt64:
		if !isNum {
			return b, errNotInt
		}
		n, err := strconv.ParseInt(string(num), 10, 64)
		if err != nil {
			return b, errNotInt
		}
		return appendLE(b, uint64(n), dt.ByteSize()*8), ""
	case core.TypeFP32, core.TypeFP64:
		if !isNum {
			return b, errNotNumber
		}
		f, err := strconv.ParseFloat(string(num), 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return b, errNotNumber
		}
		if dt == core.TypeFP32 {
			return binary.LittleEndian.AppendUint32(b, math.Float32bits(float32(f))), ""
		}
		return binary.LittleEndian.AppendUint64(b, math.Float64bits(f)), ""
	}
	return b, fmt.Sprintf("invalid datatype %s", dt)
}

// sameLeaves says how got differs from want, or "".
func sameLeaves(got, want leaves) string {
	if got.top != want.top || got.count != want.count || got.typeErr != want.typeErr ||
		got.typeErr != "" && got.typeErrAt != want.typeErrAt || !bytes.Equal(got.data, want.data) {
		return fmt.Sprintf("top %d count %d data %x error %q at %d; encoding/json's top %d count %d data %x error %q at %d",
			got.top, got.count, got.data, got.typeErr, got.typeErrAt, want.top, want.count, want.data, want.typeErr, want.typeErrAt)
	}
	return ""
}

var generateValueTypes = []core.DataType{
	core.TypeBool, core.TypeUint8, core.TypeUint16, core.TypeUint32, core.TypeUint64,
	core.TypeInt8, core.TypeInt16, core.TypeInt32, core.TypeInt64,
	core.TypeFP16, core.TypeBF16, core.TypeFP32, core.TypeFP64, core.TypeBytes,
}

// TestGenerateValuesAsEncodingJSONReadThem reads the values of a generate
// input, one of each shape and kind Triton's mapping meets, as the token
// decoder read them.
func TestGenerateValuesAsEncodingJSONReadThem(t *testing.T) {
	for _, raw := range []string{
		`7`, `-3`, `1.5`, `1e400`, `"text"`, `true`, `null`, `{"a":[1,{"b":2}]}`, `[]`, `[[]]`,
		`[1,2,3]`, `[[1,2],[3,4]]`, `[1,[2,3],4]`, `[1,{"x":[1]},3]`, `[ 1 , "a" , true , null ]`,
		`[-129,128,255,256,65536,4294967296,-1]`, `[18446744073709551615,18446744073709551616]`,
		`[9223372036854775807,9223372036854775808,-9223372036854775808]`, `[0.5,-0,1e-400,3.4e39]`,
		`["a","\u00e9\ud83d\ude00","\ud800x","\\\"\/\b\f\n\r\t"]`, "[\"\xff\xfe\"]", `[true,false,[true]]`,
		`[[[1]],[[2],[3]]]`, `[1.0, 2]`,
	} {
		for _, dt := range generateValueTypes {
			t.Run(dt.String()+"/"+raw, func(t *testing.T) {
				want, wantErr := readLeavesWithEncodingJSON(json.RawMessage(raw), dt)
				got, err := readLeaves(json.RawMessage(raw), dt)
				if err != nil || wantErr != nil {
					t.Fatalf("errors %v and encoding/json's %v on valid JSON", err, wantErr)
				}
				if diff := sameLeaves(got, want); diff != "" {
					t.Errorf("%s", diff)
				}
			})
		}
	}
}

func FuzzGenerateValuesMatchEncodingJSON(f *testing.F) {
	for _, seed := range []string{
		`[1,2,3]`, `[[1,-2],[3,2147483647]]`, `[]`, `[[],[]]`, `[1,[2]]`, `7`, `[1.5e3, -0, 0.25]`,
		`["a","\u00e9\ud83d\ude00","\ud800x","\\\"\/\b\f\n\r\t", "\u2028<>&"]`, "[\"\xff\xfe\"]", `[true,false,null]`,
		`[{"a":1}, 2]`, `{"a":[1,2]}`, `[1e400]`, `[-129, 128, 255, 256]`, `"lone"`, `[[[true]]]`,
	} {
		for _, dt := range generateValueTypes {
			f.Add([]byte(seed), uint8(dt))
		}
	}
	f.Fuzz(func(t *testing.T, raw []byte, dtByte uint8) {
		if !json.Valid(raw) {
			return // parseJSONDocument refuses the body before any value is read
		}
		raw = bytes.Trim(raw, " \t\r\n") // a member's value, as objectMembers slices it
		dt := core.DataType(dtByte)
		want, wantErr := readLeavesWithEncodingJSON(raw, dt)
		got, err := readLeaves(raw, dt)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("%s values %q: error %v, encoding/json's %v", dt, raw, err, wantErr)
		}
		if err != nil {
			return
		}
		if diff := sameLeaves(got, want); diff != "" {
			t.Fatalf("%s values %q: %s", dt, raw, diff)
		}
	})
}

// BenchmarkGenerateValues reads a generate input's array of values into
// the tensor's bytes: scanned in place, and with encoding/json's token
// decoder as a reference.
func BenchmarkGenerateValues(b *testing.B) {
	for _, dt := range jsonTensorTypes {
		for _, n := range []int{4, 64, 4096} {
			c := newJSONTensorCase(dt, n)
			for _, r := range []struct {
				name string
				read func(json.RawMessage, core.DataType) (leaves, error)
			}{{"scan", readLeaves}, {"encoding_json", readLeavesWithEncodingJSON}} {
				b.Run(dt.String()+"/"+strconv.Itoa(n)+"/"+r.name, func(b *testing.B) {
					b.ReportAllocs()
					b.SetBytes(int64(len(c.json)))
					for b.Loop() {
						if v, err := r.read(c.json, c.dt); err != nil || v.count != int64(c.n) {
							b.Fatal(err, v.count)
						}
					}
				})
			}
		}
	}
}

// TestGenerateValuesAllocationsDoNotGrowWithElements holds reading a
// generate input's values to a number of allocations that does not depend
// on how many elements it has.
func TestGenerateValuesAllocationsDoNotGrowWithElements(t *testing.T) {
	for _, dt := range jsonTensorTypes {
		t.Run(dt.String(), func(t *testing.T) {
			allocs := func(c jsonTensorCase) float64 {
				return testing.AllocsPerRun(20, func() {
					v, err := readLeaves(c.json, c.dt)
					if err != nil || v.typeErr != "" || !bytes.Equal(v.data, c.data) {
						t.Fatalf("reading %d %s values: %v %q (bytes equal: %v)", c.n, c.dt, err, v.typeErr, bytes.Equal(v.data, c.data))
					}
				})
			}
			if small, large := allocs(newJSONTensorCase(dt, 64)), allocs(newJSONTensorCase(dt, 4096)); large > small {
				t.Errorf("%v allocations for 64 elements, %v for 4096", small, large)
			}
		})
	}
}
