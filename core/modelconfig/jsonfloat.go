package modelconfig

import (
	"math"
	"strconv"
	"strings"
)

// appendTritonFloat appends a float or double field value the way it
// reaches a backend in Triton: protobuf's JSON printer writes it with
// SimpleFtoa (bits 32) or SimpleDtoa (bits 64), then rapidjson parses that
// text and writes it back. Integral text stays an integer ("-0" becomes
// "0"); other values are written by rapidjson's dtoa.
//
// rapidjson's default parser and its Grisu2 printer can differ from correct
// rounding and from the shortest form in the last digit for some values
// with 16 or more significant digits or extreme exponents; this
// implementation uses the correctly rounded, shortest forms, which agree
// with rapidjson for every value a model configuration normally holds.
func appendTritonFloat(dst []byte, v float64, bits int) []byte {
	switch {
	case math.IsNaN(v):
		return append(dst, `"NaN"`...)
	case math.IsInf(v, 1):
		return append(dst, `"Infinity"`...)
	case math.IsInf(v, -1):
		return append(dst, `"-Infinity"`...)
	}
	text := protobufFloatText(v, bits)
	if !strings.ContainsAny(text, ".eE") {
		// rapidjson reads integral text as an integer and writes it back as
		// one; %g never prints more than 17 digits, so it fits an int64.
		n, err := strconv.ParseInt(text, 10, 64)
		if err == nil {
			return strconv.AppendInt(dst, n, 10)
		}
	}
	d, err := strconv.ParseFloat(text, 64)
	if err != nil {
		d = v
	}
	return appendRapidJSONDouble(dst, d)
}

// protobufFloatText is protobuf's SimpleFtoa (bits 32: "%.6g", or "%.9g"
// when that does not read back as the same float32) or SimpleDtoa (bits 64:
// "%.15g", else "%.17g").
func protobufFloatText(v float64, bits int) string {
	short, long := 6, 9
	if bits == 64 {
		short, long = 15, 17
	}
	s := strconv.FormatFloat(v, 'g', short, 64)
	back, err := strconv.ParseFloat(s, bits)
	if err != nil || back != v {
		s = strconv.FormatFloat(v, 'g', long, 64)
	}
	return s
}

// appendRapidJSONDouble is rapidjson's Writer::Double for a finite value:
// shortest round-trip digits laid out by rapidjson's Prettify (plain
// notation with a ".0" for integral values when the decimal exponent is at
// most 21, 0.000ddd down to 1e-6, exponent notation "1.5e-7"/"1e30"
// otherwise).
func appendRapidJSONDouble(dst []byte, v float64) []byte {
	if v == 0 {
		if math.Signbit(v) {
			dst = append(dst, '-')
		}
		return append(dst, "0.0"...)
	}
	if v < 0 {
		dst = append(dst, '-')
		v = -v
	}
	// FormatFloat 'e' gives "d.ddde±XX" with the shortest round-trip digits.
	sci := strconv.FormatFloat(v, 'e', -1, 64)
	mant, expText, _ := strings.Cut(sci, "e")
	digits := strings.Replace(mant, ".", "", 1)
	exp10, _ := strconv.Atoi(expText)
	length := len(digits)
	k := exp10 - (length - 1) // v = digits × 10^k
	kk := length + k          // 10^(kk-1) <= v < 10^kk

	switch {
	case k >= 0 && kk <= 21: // 1234e7 -> 12340000000.0
		dst = append(dst, digits...)
		dst = append(dst, strings.Repeat("0", k)...)
		return append(dst, ".0"...)
	case kk > 0 && kk <= 21: // 1234e-2 -> 12.34
		dst = append(dst, digits[:kk]...)
		dst = append(dst, '.')
		return append(dst, digits[kk:]...)
	case kk > -6 && kk <= 0: // 1234e-6 -> 0.001234
		dst = append(dst, "0."...)
		dst = append(dst, strings.Repeat("0", -kk)...)
		return append(dst, digits...)
	case length == 1: // 1e30
		dst = append(dst, digits...)
		dst = append(dst, 'e')
		return strconv.AppendInt(dst, int64(kk-1), 10)
	default: // 1234e30 -> 1.234e33
		dst = append(dst, digits[0], '.')
		dst = append(dst, digits[1:]...)
		dst = append(dst, 'e')
		return strconv.AppendInt(dst, int64(kk-1), 10)
	}
}
