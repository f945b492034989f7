package httpserver

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/tritonhost/tritonhost/core"
)

// decimalCases are values at every digit count's edges, besides small
// and random ones.
func decimalCases() []uint64 {
	vs := []uint64{math.MaxUint64, math.MaxUint64 - 1, 1 << 63, 1<<63 - 1, math.MaxUint32, 1 << 31}
	for v := range uint64(1000) {
		vs = append(vs, v)
	}
	for _, p := range powersOf10 {
		vs = append(vs, p-1, p, p+1)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 10000 {
		vs = append(vs, r.Uint64()>>r.IntN(64))
	}
	return vs
}

func TestAppendDecimalWritesWhatStrconvWrites(t *testing.T) {
	for _, v := range decimalCases() {
		if got, want := string(appendDecimal([]byte("x"), v, false)), "x"+strconv.FormatUint(v, 10); got != want {
			t.Fatalf("appendDecimal(%d) = %q, want %q", v, got, want)
		}
		if got, want := string(appendDecimal(nil, v, true)), "-"+strconv.FormatUint(v, 10); got != want {
			t.Fatalf("appendDecimal(-%d) = %q, want %q", v, got, want)
		}
		if got, want := decimalDigits(v), len(strconv.FormatUint(v, 10)); got != want {
			t.Fatalf("decimalDigits(%d) = %d, want %d", v, got, want)
		}
	}
}

// TestWriteIntsWritesWhatStrconvWrites renders integers of every width,
// signed and not, around their limits, and more than one spill's worth.
func TestWriteIntsWritesWhatStrconvWrites(t *testing.T) {
	for _, c := range []struct {
		dt     core.DataType
		signed bool
	}{{core.TypeInt8, true}, {core.TypeInt16, true}, {core.TypeInt32, true}, {core.TypeInt64, true},
		{core.TypeUint8, false}, {core.TypeUint16, false}, {core.TypeUint32, false}, {core.TypeUint64, false}} {
		size := c.dt.ByteSize()
		var data []byte
		var want []string
		for _, v := range decimalCases() {
			data = binary.LittleEndian.AppendUint64(data, v)[:len(data)+size]
			bits := uint(8 * size)
			u := v & (math.MaxUint64 >> (64 - bits))
			if c.signed {
				want = append(want, strconv.FormatInt(int64(u<<(64-bits))>>(64-bits), 10))
			} else {
				want = append(want, strconv.FormatUint(u, 10))
			}
		}
		j := &jsonWriter{}
		if err := writeValues(j, c.dt, data); err != nil {
			t.Fatal(err)
		}
		if got := string(j.buf); got != strings.Join(want, ",") {
			t.Errorf("%s: rendering differs from strconv's (%d values)", c.dt, len(want))
		}
	}
}

func BenchmarkDecimal(b *testing.B) {
	vs := decimalCases()[:4096]
	b.Run("appendDecimal", func(b *testing.B) {
		buf := make([]byte, 0, 32)
		for b.Loop() {
			for _, v := range vs {
				buf = appendDecimal(buf[:0], v>>32, false)
			}
		}
	})
	b.Run("strconv", func(b *testing.B) {
		buf := make([]byte, 0, 32)
		for b.Loop() {
			for _, v := range vs {
				buf = strconv.AppendUint(buf[:0], v>>32, 10)
			}
		}
	})
}
