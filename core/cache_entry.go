package core

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"sort"
)

// What the server stores in a response cache: the key that names a
// request, and the entry that holds its response.

// cacheKey returns the key of r: the SHA-256, in hex, of the model's name
// and version, of every input (name, data type, shape and bytes, in the
// order of their names) as the backend sees it, and of the outputs the
// request asks for. Two requests with the same key get the same outputs
// from a model that computes its outputs from its inputs. As in Triton,
// request parameters, ids and priorities are not part of it; unlike
// Triton's 64-bit hash, the input's data type and shape and the outputs
// asked for are (a request for fewer outputs, or for the same bytes read
// as another type, is another request), and the hash is long enough that
// two requests do not collide.
func cacheKey(r *Request) string {
	h := sha256.New()
	var num [8]byte
	putU64 := func(v uint64) {
		binary.LittleEndian.PutUint64(num[:], v)
		h.Write(num[:])
	}
	putString := func(s string) {
		putU64(uint64(len(s)))
		h.Write([]byte(s))
	}
	putString("tritonhost response cache v1")
	putString(r.model.name)
	putU64(uint64(r.model.version))
	inputs := make([]*Input, len(r.inputs))
	for i := range r.inputs {
		inputs[i] = &r.inputs[i]
	}
	sort.Slice(inputs, func(i, j int) bool { return inputs[i].Name < inputs[j].Name })
	putU64(uint64(len(inputs)))
	for _, in := range inputs {
		putString(in.Name)
		putU64(uint64(in.DataType))
		putU64(uint64(len(in.Shape)))
		for _, d := range in.Shape {
			putU64(uint64(d))
		}
		putU64(in.ByteSize())
		for _, b := range in.Buffers {
			h.Write(b)
		}
	}
	outputs := slices.Clone(r.outputs)
	slices.Sort(outputs)
	putU64(uint64(len(outputs)))
	for _, o := range outputs {
		putString(o)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// The entry of one response: a magic word, then the output count and each
// output (name, data type, shape, data), every number little-endian:
//
//	"THC1" u32:count { u32:len name u32:datatype u32:ndims i64*ndims u64:len data }*
var entryMagic = [4]byte{'T', 'H', 'C', '1'}

// entrySize returns the size of resp's entry.
func entrySize(resp *Response) int {
	n := 8
	for _, o := range resp.Outputs {
		n += 4 + len(o.Name) + 4 + 4 + 8*len(o.Shape) + 8 + len(o.Data)
	}
	return n
}

// encodeEntry writes resp's outputs into buf, which holds entrySize(resp)
// bytes.
func encodeEntry(buf []byte, resp *Response) {
	b := append(buf[:0], entryMagic[:]...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(resp.Outputs)))
	for _, o := range resp.Outputs {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(o.Name)))
		b = append(b, o.Name...)
		b = binary.LittleEndian.AppendUint32(b, uint32(o.DataType))
		b = binary.LittleEndian.AppendUint32(b, uint32(len(o.Shape)))
		for _, d := range o.Shape {
			b = binary.LittleEndian.AppendUint64(b, uint64(d))
		}
		b = binary.LittleEndian.AppendUint64(b, uint64(len(o.Data)))
		b = append(b, o.Data...)
	}
}

var errBadEntry = errors.New("the cache returned an entry the server did not write")

// decodeEntry reads a response from an entry. The outputs' data are
// slices of entry, which the response then owns. An entry that is not one
// encodeEntry wrote (truncated, or a cache's mistake) is an error: the
// lookup counts as a miss.
func decodeEntry(entry []byte) (*Response, error) {
	d := entryReader{b: entry}
	if magic := d.bytes(4); d.err != nil || [4]byte(magic) != entryMagic {
		return nil, errBadEntry
	}
	count := d.u32()
	if d.err != nil || uint64(count) > uint64(len(entry)) {
		return nil, errBadEntry
	}
	resp := &Response{Outputs: make([]Output, 0, count)}
	for range count {
		var o Output
		o.Name = string(d.bytes(int(d.u32())))
		o.DataType = DataType(d.u32())
		ndims := d.u32()
		if d.err != nil || uint64(ndims)*8 > uint64(len(d.b)) {
			return nil, errBadEntry
		}
		o.Shape = make([]int64, ndims)
		for i := range o.Shape {
			o.Shape[i] = int64(d.u64())
		}
		size := d.u64()
		if size > uint64(len(d.b)) {
			return nil, errBadEntry
		}
		o.Data = d.bytes(int(size))
		if d.err != nil {
			return nil, errBadEntry
		}
		resp.Outputs = append(resp.Outputs, o)
	}
	if len(d.b) != 0 {
		return nil, fmt.Errorf("%w (%d bytes past its end)", errBadEntry, len(d.b))
	}
	return resp, nil
}

// entryReader reads an entry front to back; the first read past its end
// sets err, and later reads return zeros.
type entryReader struct {
	b   []byte
	err error
}

func (d *entryReader) bytes(n int) []byte {
	if d.err != nil || n < 0 || n > len(d.b) {
		d.err = errBadEntry
		return nil
	}
	out := d.b[:n:n]
	d.b = d.b[n:]
	return out
}

func (d *entryReader) u32() uint32 {
	if b := d.bytes(4); b != nil {
		return binary.LittleEndian.Uint32(b)
	}
	return 0
}

func (d *entryReader) u64() uint64 {
	if b := d.bytes(8); b != nil {
		return binary.LittleEndian.Uint64(b)
	}
	return 0
}
