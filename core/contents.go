package core

import (
	"encoding/binary"
	"math"
)

// checkContents checks that an input's contents are exactly what its shape
// and data type call for, and no larger than limit (the request's, or the
// server's Options.MaxTensorBytes).
func (m *Model) checkContents(id string, in *Input, limit tensorLimit) error {
	n := ElementCount(in.Shape) // the dims were checked: only an overflow makes it negative
	if n < 0 {
		return Errorf(CodeInvalidArg, "model %q: input %q: shape %s has more elements than an int64 counts", m.name, in.Name, dimsString(in.Shape))
	}
	got := in.ByteSize()
	if in.DataType == TypeBytes {
		if got > uint64(limit.bytes) {
			return Errorf(CodeInvalidArg, "model %q: input %q: BYTES contents are %s", m.name, in.Name, limit.tooLarge(int64(min(got, math.MaxInt64))))
		}
		return m.checkBytesElements(id, in, n)
	}
	want, ok := mulInt64(n, int64(in.DataType.ByteSize()))
	if !ok {
		want = -1
	}
	if !ok || want > limit.bytes {
		return Errorf(CodeInvalidArg, "model %q: input %q: shape %s of %s is %s", m.name, in.Name, dimsString(in.Shape), in.DataType, limit.tooLarge(want))
	}
	if got != uint64(want) {
		return byteSizeError(id, m.name, in.Name, want, got)
	}
	return nil
}

// checkBytesElements checks that a BYTES input holds exactly n
// length-prefixed elements, in the order and words of Triton's
// ValidateBytesInputs. Unlike Triton, an element or a length prefix may
// straddle buffers; and an element cut short by the end of the contents
// is refused (Triton lets it pass).
func (m *Model) checkBytesElements(id string, in *Input, n int64) error {
	count, partial, cut := scanBytesElements(in.Buffers)
	switch {
	case count > n:
		return Errorf(CodeInvalidArg, "%sunexpected number of string elements %d for inference input '%s' for model '%s', expecting %d",
			requestPrefix(id), n+1, in.Name, m.name, n)
	case partial > 0:
		return Errorf(CodeInvalidArg, "%sincomplete string length indicator for inference input '%s' for model '%s', expecting 4 bytes but only %d bytes available. Please make sure the string length indicator is in one buffer.",
			requestPrefix(id), in.Name, m.name, partial)
	case cut:
		return Errorf(CodeInvalidArg, "%sthe last string element of inference input '%s' for model '%s' runs past the end of its contents",
			requestPrefix(id), in.Name, m.name)
	case count != n:
		return Errorf(CodeInvalidArg, "%sexpected %d string elements for inference input '%s' for model '%s', got %d",
			requestPrefix(id), n, in.Name, m.name, count)
	}
	return nil
}

// scanBytesElements counts the length-prefixed elements of a BYTES tensor
// whose contents are split over buffers (an element, or its length, may
// straddle buffers). partial is how many bytes of a length prefix the
// contents end inside (0 if none); cut reports an element longer than what
// is left.
func scanBytesElements(buffers [][]byte) (count int64, partial int, cut bool) {
	var (
		lenBuf  [4]byte
		lenHave int    // bytes of the current length prefix seen so far
		skip    uint64 // bytes of the current element still to skip
	)
	for _, b := range buffers {
		for len(b) > 0 {
			if skip > 0 {
				k := min(skip, uint64(len(b)))
				skip -= k
				b = b[k:]
				continue
			}
			c := copy(lenBuf[lenHave:], b)
			lenHave += c
			b = b[c:]
			if lenHave == 4 {
				skip = uint64(binary.LittleEndian.Uint32(lenBuf[:]))
				lenHave = 0
				count++
			}
		}
	}
	return count, lenHave, skip != 0
}
