package httpserver

import (
	"encoding/binary"
	"math/bits"
	"slices"
)

// Decimal integers written in place, two digits at a time: a tensor's
// integer values are most of what a JSON response holds.

// decimalDigits is how many digits v has in decimal (1 for 0).
func decimalDigits(v uint64) int {
	n := bits.Len64(v) * 1233 >> 12 // log10 of the highest power of 2 in v, at most 1 short
	if v >= powersOf10[n] {
		n++
	}
	return max(n, 1)
}

var powersOf10 = [20]uint64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19}

// digitPairs holds "00" to "99".
const digitPairs = "00010203040506070809101112131415161718192021222324252627282930313233343536373839" +
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879" +
	"8081828384858687888990919293949596979899"

// appendDecimal appends v in decimal, after a minus sign when neg, as
// strconv.AppendUint would, written in place two digits at a time.
func appendDecimal(b []byte, v uint64, neg bool) []byte {
	if neg {
		b = append(b, '-')
	}
	if v < 10 {
		return append(b, byte('0'+v))
	}
	n := decimalDigits(v)
	b = slices.Grow(b, n)
	at := len(b)
	b = b[:at+n]
	i := at + n
	for v >= 100 {
		q := v / 100
		r := 2 * (v - q*100)
		i -= 2
		b[i], b[i+1] = digitPairs[r], digitPairs[r+1]
		v = q
	}
	if v >= 10 {
		b[at], b[at+1] = digitPairs[2*v], digitPairs[2*v+1]
	} else {
		b[at] = byte('0' + v)
	}
	return b
}

// intsPerSpill is how many integer elements writeInts renders between two
// spills of the writer: at most 20 bytes each and a comma.
const intsPerSpill = 256

// writeInts writes the integer elements of data, size bytes each (1, 2,
// 4 or 8), two's complement when signed, as writeValues does.
func writeInts(j *jsonWriter, data []byte, size int, signed bool) error {
	for i := 0; i < len(data); {
		end := min(len(data), i+intsPerSpill*size)
		b := slices.Grow(j.buf, (end-i)/size*21)
		for ; i < end; i += size {
			if i > 0 {
				b = append(b, ',')
			}
			var u uint64
			var s int64
			switch size {
			case 1:
				u, s = uint64(data[i]), int64(int8(data[i]))
			case 2:
				x := binary.LittleEndian.Uint16(data[i:])
				u, s = uint64(x), int64(int16(x))
			case 4:
				x := binary.LittleEndian.Uint32(data[i:])
				u, s = uint64(x), int64(int32(x))
			default:
				u = binary.LittleEndian.Uint64(data[i:])
				s = int64(u)
			}
			switch {
			case !signed:
				b = appendDecimal(b, u, false)
			case s < 0:
				b = appendDecimal(b, uint64(-s), true) // -MinInt64 wraps to its magnitude
			default:
				b = appendDecimal(b, uint64(s), false)
			}
		}
		j.buf = b
		j.spill()
		if j.err != nil {
			return j.err // the client went away: render no more
		}
	}
	return nil
}
