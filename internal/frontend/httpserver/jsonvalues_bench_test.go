package httpserver

import (
	"encoding/binary"
	"math"
	"strconv"
	"testing"

	"github.com/tritonhost/tritonhost/core"
)

// jsonTensorCase is a tensor of n elements of type dt in both its forms:
// the JSON of its values, as a request's "data", and its bytes, as core
// holds them.
type jsonTensorCase struct {
	dt   core.DataType
	n    int
	json []byte
	data []byte
}

func newJSONTensorCase(dt core.DataType, n int) jsonTensorCase {
	c := jsonTensorCase{dt: dt, n: n, json: []byte{'['}}
	for i := range n {
		if i > 0 {
			c.json = append(c.json, ',')
		}
		switch dt {
		case core.TypeInt32:
			v := int32(i*7919 - 1<<20)
			c.json = strconv.AppendInt(c.json, int64(v), 10)
			c.data = binary.LittleEndian.AppendUint32(c.data, uint32(v))
		case core.TypeFP32:
			v := float32(i)*0.37 - 11.5
			c.json = strconv.AppendFloat(c.json, float64(v), 'g', -1, 32)
			c.data = binary.LittleEndian.AppendUint32(c.data, math.Float32bits(v))
		case core.TypeBytes:
			s := "element " + strconv.Itoa(i)
			c.json = strconv.AppendQuote(c.json, s)
			c.data = binary.LittleEndian.AppendUint32(c.data, uint32(len(s)))
			c.data = append(c.data, s...)
		}
	}
	c.json = append(c.json, ']')
	return c
}

var jsonTensorTypes = []core.DataType{core.TypeInt32, core.TypeFP32, core.TypeBytes}

// BenchmarkJSONTensorDecode decodes a request's "data" array into the
// tensor's bytes.
func BenchmarkJSONTensorDecode(b *testing.B) {
	for _, dt := range jsonTensorTypes {
		for _, n := range []int{4, 64, 4096} {
			c := newJSONTensorCase(dt, n)
			b.Run(dt.String()+"/"+strconv.Itoa(n), func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(c.json)))
				for b.Loop() {
					if _, err := decodeValues(c.dt, c.json, int64(c.n)); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkJSONTensorEncode renders an output's bytes as the JSON of its
// values, into a writer whose buffer is reused.
func BenchmarkJSONTensorEncode(b *testing.B) {
	for _, dt := range jsonTensorTypes {
		for _, n := range []int{4, 64, 4096} {
			c := newJSONTensorCase(dt, n)
			b.Run(dt.String()+"/"+strconv.Itoa(n), func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(c.data)))
				j := &jsonWriter{dst: discard{}, buf: make([]byte, 0, 2*jsonChunk)}
				for b.Loop() {
					if err := writeValues(j, c.dt, c.data); err != nil {
						b.Fatal(err)
					}
					j.flush()
				}
			})
		}
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// TestJSONTensorAllocationsDoNotGrowWithElements holds decoding and
// encoding JSON tensor values to a number of allocations that does not
// depend on how many elements the tensor has.
func TestJSONTensorAllocationsDoNotGrowWithElements(t *testing.T) {
	for _, dt := range jsonTensorTypes {
		t.Run(dt.String(), func(t *testing.T) {
			small, large := newJSONTensorCase(dt, 64), newJSONTensorCase(dt, 4096)
			decode := func(c jsonTensorCase) float64 {
				return testing.AllocsPerRun(20, func() {
					got, err := decodeValues(c.dt, c.json, int64(c.n))
					if err != nil || string(got.data) != string(c.data) {
						t.Fatalf("decoding %d %s values: %v (bytes equal: %v)", c.n, c.dt, err, string(got.data) == string(c.data))
					}
				})
			}
			encode := func(c jsonTensorCase) float64 {
				j := &jsonWriter{dst: discard{}, buf: make([]byte, 0, 2*jsonChunk)}
				return testing.AllocsPerRun(20, func() {
					if err := writeValues(j, c.dt, c.data); err != nil {
						t.Fatal(err)
					}
					j.flush()
				})
			}
			if a, b := decode(small), decode(large); b > a {
				t.Errorf("decoding %s: %v allocations for 64 elements, %v for 4096", dt, a, b)
			}
			if a, b := encode(small), encode(large); b > a {
				t.Errorf("encoding %s: %v allocations for 64 elements, %v for 4096", dt, a, b)
			}
		})
	}
}
