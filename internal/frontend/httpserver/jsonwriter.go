package httpserver

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/tritonhost/tritonhost/core"
)

// A response's JSON can be several times the size of the tensors it
// carries (a BYTES element of control characters takes six bytes of JSON
// each). Building it whole in memory made one request cost tens of times
// its size, so a response is rendered through a jsonWriter: small ones
// into memory, at most inMemoryJSON bytes; larger ones are first only
// measured, then rendered again chunk by chunk straight to the client,
// with their Content-Length. Either way the server holds a bounded buffer
// besides the tensors themselves.

// inMemoryJSON is the largest JSON rendered whole in memory.
const inMemoryJSON = 1 << 20

// jsonChunk is how much JSON a streaming or measuring writer holds before
// passing it on.
const jsonChunk = 32 << 10

// jsonWriter receives rendered JSON: render code appends to buf and calls
// spill now and then (after each value, each chunk of a long string).
type jsonWriter struct {
	buf []byte
	// dst, when set, takes the JSON in chunks of about jsonChunk bytes;
	// otherwise it stays in buf, up to limit bytes (0: no limit), past
	// which the writer only counts.
	dst      io.Writer
	limit    int
	counting bool
	n        int64 // bytes passed on or counted, not in buf
	err      error // dst's first write error; later writes are dropped
	chunk    int   // jsonChunk, smaller in tests
}

// spill passes the buffer on once it holds a chunk, or starts counting
// when an in-memory rendering outgrows its limit.
func (j *jsonWriter) spill() {
	chunk := j.chunk
	if chunk == 0 {
		chunk = jsonChunk
	}
	switch {
	case j.dst != nil && len(j.buf) >= chunk:
		j.flush()
	case j.dst == nil && !j.counting && j.limit > 0 && len(j.buf) > j.limit:
		j.counting = true
		j.n, j.buf = int64(len(j.buf)), nil
	case j.counting && len(j.buf) >= chunk:
		j.n += int64(len(j.buf))
		j.buf = j.buf[:0]
	}
}

// flush passes what the buffer holds to dst.
func (j *jsonWriter) flush() {
	if j.dst == nil || len(j.buf) == 0 {
		return
	}
	if j.err == nil {
		_, j.err = j.dst.Write(j.buf)
	}
	j.n += int64(len(j.buf))
	j.buf = j.buf[:0]
}

// size is how many bytes of JSON were rendered.
func (j *jsonWriter) size() int64 { return j.n + int64(len(j.buf)) }

// renderJSON renders with render into memory when the JSON is at most
// inMemoryJSON bytes (body is then the whole of it), or else only measures
// it (body is nil; stream it with streamJSON). size is its length either
// way. An error of render is returned before anything is sent.
func renderJSON(render func(*jsonWriter) error) (body []byte, size int64, err error) {
	j, _ := renderWriters.Get().(*jsonWriter)
	if j == nil {
		j = new(jsonWriter)
	}
	*j = jsonWriter{buf: j.buf[:0], limit: inMemoryJSON}
	err = render(j)
	switch {
	case err != nil:
	case j.counting:
		size = j.size()
	default:
		body, size = j.buf, j.size()
	}
	keep := j.buf
	if body != nil || cap(keep) > pooledJSONBytes {
		keep = nil // the caller's, or too large to hold on to
	}
	*j = jsonWriter{buf: keep[:0]}
	renderWriters.Put(j)
	return body, size, err
}

// renderWriters holds the writers of finished in-memory renderings, with
// the buffers handed back to them (releaseJSON), for the next renderings
// to grow into.
var renderWriters sync.Pool

// pooledJSONBytes is the capacity of the largest buffer kept for reuse.
const pooledJSONBytes = 256 << 10

// releaseJSON hands back body, the JSON renderJSON returned, once it was
// written: nothing may refer to it after.
func releaseJSON(body []byte) {
	if cap(body) == 0 || cap(body) > pooledJSONBytes {
		return
	}
	j, _ := renderWriters.Get().(*jsonWriter)
	if j == nil {
		j = new(jsonWriter)
	}
	if cap(j.buf) < cap(body) {
		j.buf = body[:0]
	}
	renderWriters.Put(j)
}

// streamJSON renders with render again, sending the JSON to w in chunks.
func streamJSON(w io.Writer, render func(*jsonWriter) error) error {
	j := &jsonWriter{dst: w, buf: make([]byte, 0, 2*jsonChunk)}
	err := render(j)
	j.flush()
	if err != nil {
		return err
	}
	return j.err
}

// writeValues writes the elements of a tensor's data as JSON values,
// comma-separated, without brackets. Non-finite floats, which JSON cannot
// carry, are written as null.
func writeValues(j *jsonWriter, dt core.DataType, data []byte) error {
	if dt == core.TypeBytes {
		return writeBytesValues(j, data)
	}
	size := dt.ByteSize()
	if size == 0 || dt == core.TypeFP16 || dt == core.TypeBF16 {
		return fmt.Errorf("%s values have no JSON form; ask for the output as binary data", dt)
	}
	if len(data)%size != 0 {
		return fmt.Errorf("%d bytes are not a whole number of %s values", len(data), dt)
	}
	switch dt {
	case core.TypeInt8, core.TypeInt16, core.TypeInt32, core.TypeInt64:
		return writeInts(j, data, size, true)
	case core.TypeUint8, core.TypeUint16, core.TypeUint32, core.TypeUint64:
		return writeInts(j, data, size, false)
	}
	for i := 0; i+size <= len(data); i += size {
		if i > 0 {
			j.buf = append(j.buf, ',')
		}
		j.buf = appendElement(j.buf, dt, data[i:i+size])
		j.spill()
		if j.err != nil {
			return j.err // the client went away: render no more
		}
	}
	return nil
}

// appendElement appends one little-endian element e of type dt as JSON.
func appendElement(b []byte, dt core.DataType, e []byte) []byte {
	switch dt {
	case core.TypeBool:
		return strconv.AppendBool(b, e[0] != 0)
	case core.TypeInt8:
		return strconv.AppendInt(b, int64(int8(e[0])), 10)
	case core.TypeInt16:
		return strconv.AppendInt(b, int64(int16(binary.LittleEndian.Uint16(e))), 10)
	case core.TypeInt32:
		return strconv.AppendInt(b, int64(int32(binary.LittleEndian.Uint32(e))), 10)
	case core.TypeInt64:
		return strconv.AppendInt(b, int64(binary.LittleEndian.Uint64(e)), 10)
	case core.TypeUint8:
		return strconv.AppendUint(b, uint64(e[0]), 10)
	case core.TypeUint16:
		return strconv.AppendUint(b, uint64(binary.LittleEndian.Uint16(e)), 10)
	case core.TypeUint32:
		return strconv.AppendUint(b, uint64(binary.LittleEndian.Uint32(e)), 10)
	case core.TypeUint64:
		return strconv.AppendUint(b, binary.LittleEndian.Uint64(e), 10)
	case core.TypeFP32:
		return appendFloat(b, float64(math.Float32frombits(binary.LittleEndian.Uint32(e))), 32)
	case core.TypeFP64:
		return appendFloat(b, math.Float64frombits(binary.LittleEndian.Uint64(e)), 64)
	}
	return b
}

func appendFloat(b []byte, v float64, bits int) []byte {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return append(b, "null"...)
	}
	return strconv.AppendFloat(b, v, 'g', -1, bits)
}

// writeBytesValues writes the elements of a BYTES tensor (each a 4-byte
// little-endian length, then its bytes) as JSON strings, walking the data
// in place.
func writeBytesValues(j *jsonWriter, data []byte) error {
	for i := 0; len(data) > 0; i++ {
		if len(data) < 4 {
			return core.Errorf(core.CodeInvalidArg, "BYTES tensor ends inside an element length")
		}
		n := binary.LittleEndian.Uint32(data)
		data = data[4:]
		if uint64(n) > uint64(len(data)) {
			return core.Errorf(core.CodeInvalidArg, "BYTES element of %d bytes runs past the end of the tensor", n)
		}
		if i > 0 {
			j.buf = append(j.buf, ',')
		}
		writeJSONString(j, data[:n])
		j.spill()
		if j.err != nil {
			return j.err // the client went away: render no more
		}
		data = data[n:]
	}
	return nil
}

// writeJSONString writes s as a JSON string, exactly as encoding/json
// writes string(s) (a test holds them equal), a chunk at a time so that a
// long string never sits whole in the buffer.
func writeJSONString(j *jsonWriter, s []byte) {
	chunk := j.chunk
	if chunk == 0 {
		chunk = jsonChunk
	}
	j.buf = append(j.buf, '"')
	for len(s) > 0 {
		var n int
		j.buf, n = appendEscaped(j.buf, s, chunk)
		s = s[n:]
		j.spill()
		if j.err != nil {
			return
		}
	}
	j.buf = append(j.buf, '"')
}

const hexDigits = "0123456789abcdef"

// appendEscaped appends s escaped as the inside of a JSON string, by
// encoding/json's rules for Marshal: '"' and '\\' escaped, control
// characters as \b \f \n \r \t or \u00XX, '<' '>' '&' as \u00XX (HTML
// safety), bytes that are not UTF-8 as \ufffd, and U+2028 and U+2029
// escaped. It stops at the first character that begins budget bytes or
// more into s, and returns how many bytes of s it took: always whole
// characters, decoded with the rest of s in view, so that escaping s in
// such pieces gives what escaping it whole does.
func appendEscaped(b, s []byte, budget int) ([]byte, int) {
	start, i := 0, 0
	for i < len(s) && i < budget {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= ' ' && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	return append(b, s[start:i]...), i
}
