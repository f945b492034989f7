// Package wire is the message format and the transport between the server
// and the worker processes that host isolated backends: a message is a
// sequence of fields (unsigned and signed varints, bytes, strings) read
// back in the same order; messages travel framed on a unix SOCK_SEQPACKET
// socket, one or several per datagram (frame.go), with file descriptors
// (shared memory) beside them.
//
// A message from a worker comes from code the server does not trust (a
// backend that crashed halfway through a write, or a malicious one): a
// Decoder never panics and never allocates more than a bound its caller
// names, and it remembers the first error, so a caller reads every field
// and checks Err once.
package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// Encoder appends the fields of one message to a buffer.
type Encoder struct {
	buf []byte
}

// NewEncoder returns an encoder that appends to buf[:0].
func NewEncoder(buf []byte) *Encoder { return &Encoder{buf: buf[:0]} }

// Bytes returns the message encoded so far.
func (e *Encoder) Bytes() []byte { return e.buf }

// Reset empties the message, keeping its buffer.
func (e *Encoder) Reset() { e.buf = e.buf[:0] }

// Uint appends an unsigned integer.
func (e *Encoder) Uint(v uint64) { e.buf = binary.AppendUvarint(e.buf, v) }

// Int appends a signed integer.
func (e *Encoder) Int(v int64) { e.buf = binary.AppendVarint(e.buf, v) }

// Bool appends a boolean.
func (e *Encoder) Bool(v bool) {
	if v {
		e.buf = append(e.buf, 1)
	} else {
		e.buf = append(e.buf, 0)
	}
}

// Float appends a float64.
func (e *Encoder) Float(v float64) {
	e.buf = binary.LittleEndian.AppendUint64(e.buf, math.Float64bits(v))
}

// String appends a string, its length first.
func (e *Encoder) String(s string) {
	e.Uint(uint64(len(s)))
	e.buf = append(e.buf, s...)
}

// Raw appends bytes as they are, without a length: the caller wrote the
// length before (a blob gathered from several buffers).
func (e *Encoder) Raw(b []byte) { e.buf = append(e.buf, b...) }

// Blob appends bytes, their length first.
func (e *Encoder) Blob(b []byte) {
	e.Uint(uint64(len(b)))
	e.buf = append(e.buf, b...)
}

// ErrMalformed is the error of a message that does not decode: cut short,
// a length past what is left, a value out of range, or bytes left over.
var ErrMalformed = errors.New("malformed message")

// Decoder reads the fields of one message. After the first error every
// read returns a zero value; Err reports the error.
type Decoder struct {
	buf []byte
	off int
	err error
}

// NewDecoder returns a decoder of msg. Blobs it returns alias msg.
func NewDecoder(msg []byte) *Decoder { return &Decoder{buf: msg} }

// Err returns the first error, or nil.
func (d *Decoder) Err() error { return d.err }

// Done checks that the whole message was read, and returns Err.
func (d *Decoder) Done() error {
	if d.err == nil && d.off != len(d.buf) {
		d.fail("%d bytes left over", len(d.buf)-d.off)
	}
	return d.err
}

// Fail records an error the caller found in what it read (a value out of
// its range), unless one was recorded before.
func (d *Decoder) Fail(format string, args ...any) { d.fail(format, args...) }

func (d *Decoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %s", ErrMalformed, fmt.Sprintf(format, args...))
	}
}

// Uint reads an unsigned integer.
func (d *Decoder) Uint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.buf[d.off:])
	if n <= 0 {
		d.fail("bad unsigned integer at byte %d", d.off)
		return 0
	}
	d.off += n
	return v
}

// Int reads a signed integer.
func (d *Decoder) Int() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.buf[d.off:])
	if n <= 0 {
		d.fail("bad signed integer at byte %d", d.off)
		return 0
	}
	d.off += n
	return v
}

// Count reads an unsigned integer that counts something, refusing one
// larger than max: a caller allocates by it.
func (d *Decoder) Count(max int) int {
	v := d.Uint()
	if v > uint64(max) {
		d.fail("count %d is larger than %d", v, max)
		return 0
	}
	return int(v)
}

// Bool reads a boolean.
func (d *Decoder) Bool() bool {
	if d.err != nil {
		return false
	}
	if d.off >= len(d.buf) || d.buf[d.off] > 1 {
		d.fail("bad boolean at byte %d", d.off)
		return false
	}
	v := d.buf[d.off] == 1
	d.off++
	return v
}

// Float reads a float64.
func (d *Decoder) Float() float64 {
	if d.err != nil {
		return 0
	}
	if len(d.buf)-d.off < 8 {
		d.fail("float cut short at byte %d", d.off)
		return 0
	}
	v := math.Float64frombits(binary.LittleEndian.Uint64(d.buf[d.off:]))
	d.off += 8
	return v
}

// Blob reads bytes of at most max, aliasing the message.
func (d *Decoder) Blob(max int) []byte {
	n := d.Uint()
	if d.err != nil {
		return nil
	}
	if n > uint64(max) || n > uint64(len(d.buf)-d.off) {
		d.fail("%d bytes at byte %d: more than %d, or past the end", n, d.off, max)
		return nil
	}
	b := d.buf[d.off : d.off+int(n) : d.off+int(n)]
	d.off += int(n)
	return b
}

// String reads a string of at most max bytes (a copy).
func (d *Decoder) String(max int) string { return string(d.Blob(max)) }
