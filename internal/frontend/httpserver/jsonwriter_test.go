package httpserver

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"io"
	"math"
	"testing"

	"github.com/tritonhost/tritonhost/core"
)

// stringCases are strings whose JSON form exercises every escape.
var stringCases = [][]byte{
	nil, []byte("plain"), []byte("quote\" back\\slash"), []byte("<tag>&amp;"), []byte("\b\f\n\r\t\x00\x01\x1f\x7f"),
	[]byte("é€𝄞"), []byte("\u2028\u2029"), {0xff, 0xfe, 'a', 0xe2, 0x82}, {0xe2, 0x82, 0xac, 0xe2, 0x82}, {0x80, 0x80, 0x80, 0x80, 0x80},
	bytes.Repeat([]byte("𝄞é\x01"), 50),
}

// TestJSONStringsMatchEncodingJSON: a string written through the writer,
// in chunks of any size, reads as encoding/json writes it.
func TestJSONStringsMatchEncodingJSON(t *testing.T) {
	for _, s := range stringCases {
		checkJSONString(t, s)
	}
}

func FuzzJSONStringMatchesEncodingJSON(f *testing.F) {
	for _, s := range stringCases {
		f.Add(s)
	}
	f.Fuzz(checkJSONString)
}

// TestJSONStringsOfEveryByte checks every byte alone and between letters
// against encoding/json: the table of bytes written as they are
// (plainJSONByte) must be encoding/json's.
func TestJSONStringsOfEveryByte(t *testing.T) {
	for c := range 256 {
		checkJSONString(t, []byte{byte(c)})
		checkJSONString(t, []byte{'a', byte(c), 'z'})
	}
}

func checkJSONString(t *testing.T, s []byte) {
	want, err := json.Marshal(string(s))
	if err != nil {
		t.Fatal(err)
	}
	for _, chunk := range []int{1, 2, 3, 5, 7, jsonChunk} {
		j := &jsonWriter{chunk: chunk}
		writeJSONString(j, s)
		if !bytes.Equal(j.buf, want) {
			t.Fatalf("%q in chunks of %d: %s, want %s", s, chunk, j.buf, want)
		}
	}
	if got := appendJSONString([]byte("x"), string(s)); !bytes.Equal(got[1:], want) {
		t.Fatalf("appendJSONString(%q): %s, want %s", s, got[1:], want)
	}
}

// TestJSONWriterStreamsMeasuresAndStaysSmall: JSON larger than the
// in-memory bound is measured without being kept, then streamed in
// chunks; the bytes streamed are the measure, and what a whole rendering
// gives.
func TestJSONWriterStreamsMeasuresAndStaysSmall(t *testing.T) {
	var data []byte
	for i := 0; i < 3*inMemoryJSON/16; i++ {
		data = binary.LittleEndian.AppendUint32(data, 7)
		data = append(data, "<\x01é\"\xff\n"...)
	}
	render := func(j *jsonWriter) error {
		j.buf = append(j.buf, '[')
		if err := writeValues(j, core.TypeBytes, data); err != nil {
			return err
		}
		j.buf = append(j.buf, ']')
		return nil
	}
	body, size, err := renderJSON(render)
	if err != nil || body != nil {
		t.Fatalf("renderJSON kept %d bytes (err %v); want it only measured", len(body), err)
	}
	whole := &jsonWriter{}
	if err := render(whole); err != nil {
		t.Fatal(err)
	}
	if size != int64(len(whole.buf)) {
		t.Fatalf("measured %d bytes, the whole rendering has %d", size, len(whole.buf))
	}
	var out chunkRecorder
	if err := streamJSON(&out, render); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.b, whole.buf) {
		t.Fatal("the streamed JSON differs from the whole rendering")
	}
	if out.largest > 2*jsonChunk+16 {
		t.Errorf("a write of %d bytes: the stream should hold about %d", out.largest, jsonChunk)
	}
	var elems []string
	if err := json.Unmarshal(out.b, &elems); err != nil || len(elems) != 3*inMemoryJSON/16 {
		t.Fatalf("%d elements, %v", len(elems), err)
	}
}

type chunkRecorder struct {
	b       []byte
	largest int
}

func (c *chunkRecorder) Write(p []byte) (int, error) {
	c.b = append(c.b, p...)
	c.largest = max(c.largest, len(p))
	return len(p), nil
}

// TestValuesOfEveryTypeInJSON: each data type's elements, as JSON.
func TestValuesOfEveryTypeInJSON(t *testing.T) {
	le := func(vs ...uint64) func(int) []byte {
		return func(size int) []byte {
			var b []byte
			for _, v := range vs {
				for i := 0; i < size; i++ {
					b = append(b, byte(v>>(8*i)))
				}
			}
			return b
		}
	}
	for _, c := range []struct {
		dt   core.DataType
		data []byte
		want string
	}{
		{core.TypeBool, []byte{1, 0}, "true,false"},
		{core.TypeInt8, le(0x80, 1)(1), "-128,1"},
		{core.TypeInt32, le(0xffffffff, 7)(4), "-1,7"},
		{core.TypeUint64, le(math.MaxUint64)(8), "18446744073709551615"},
		{core.TypeFP32, le(uint64(math.Float32bits(0.5)), uint64(math.Float32bits(float32(math.Inf(1)))))(4), "0.5,null"},
		{core.TypeFP64, le(math.Float64bits(1e300))(8), "1e+300"},
		{core.TypeBytes, append(binary.LittleEndian.AppendUint32(nil, 2), "a<"...), `"a\u003c"`},
	} {
		j := &jsonWriter{}
		if err := writeValues(j, c.dt, c.data); err != nil || string(j.buf) != c.want {
			t.Errorf("%s: %s (%v), want %s", c.dt, j.buf, err, c.want)
		}
	}
	for _, bad := range []struct {
		dt   core.DataType
		data []byte
	}{{core.TypeBytes, []byte{9, 0, 0, 0, 'a'}}, {core.TypeBytes, []byte{1, 0}}, {core.TypeInt32, []byte{1, 2, 3}}, {core.TypeFP16, []byte{0, 0}}} {
		if err := writeValues(&jsonWriter{}, bad.dt, bad.data); err == nil {
			t.Errorf("%s %v: no error", bad.dt, bad.data)
		}
	}
}

// TestManyEmptyStringsStreamInChunks: a tensor of many empty elements,
// whose strings hold no chunk of their own, still streams a chunk at a
// time.
func TestManyEmptyStringsStreamInChunks(t *testing.T) {
	data := make([]byte, 4*inMemoryJSON)
	render := func(j *jsonWriter) error { return writeValues(j, core.TypeBytes, data) }
	var out chunkRecorder
	if err := streamJSON(&out, render); err != nil {
		t.Fatal(err)
	}
	if want := 3*inMemoryJSON - 1; len(out.b) != want || out.largest > 2*jsonChunk {
		t.Errorf("%d bytes streamed (want %d), the largest write %d bytes", len(out.b), want, out.largest)
	}
}

// failingWriter fails every write after the first.
type failingWriter struct{ writes int }

func (f *failingWriter) Write(p []byte) (int, error) {
	if f.writes++; f.writes > 1 {
		return 0, io.ErrClosedPipe
	}
	return len(p), nil
}

// TestStreamingStopsWhenTheClientGoesAway: once a write fails, the rest of
// the tensor is not rendered.
func TestStreamingStopsWhenTheClientGoesAway(t *testing.T) {
	for _, c := range []struct {
		dt   core.DataType
		data []byte
	}{
		{core.TypeInt32, make([]byte, 4*inMemoryJSON)},
		{core.TypeBytes, make([]byte, 4*inMemoryJSON)},
		{core.TypeBytes, append(binary.LittleEndian.AppendUint32(nil, 4*inMemoryJSON), make([]byte, 4*inMemoryJSON)...)},
	} {
		var f failingWriter
		err := streamJSON(&f, func(j *jsonWriter) error { return writeValues(j, c.dt, c.data) })
		if err == nil || f.writes > 2 {
			t.Errorf("%s: %d writes, %v; want it to stop at the first failure", c.dt, f.writes, err)
		}
	}
}
