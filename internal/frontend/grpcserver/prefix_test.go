package grpcserver

import (
	"bytes"
	"fmt"
	"sync"
	"testing"

	"github.com/tritonhost/tritonhost/core"
)

// outputResponse is a response of one output.
func outputResponse(name string, dt core.DataType, shape []int64, data []byte) *core.Response {
	return &core.Response{Outputs: []core.Output{{Name: name, DataType: dt, Shape: shape, Data: data}}}
}

// standaloneBytes is the message encodeIn makes of r outside any arena:
// what a prefixed message must equal.
func standaloneBytes(h responseHeader, r *core.Response, fin final) []byte {
	m := encodeIn(nil, h, r, fin, true, "")
	defer m.free()
	return m.bufs.Materialize()
}

// cloneResponse copies r, so that one encoding freeing it leaves the
// other's.
func cloneResponse(r *core.Response) *core.Response {
	c := &core.Response{Parameters: append([]core.Parameter(nil), r.Parameters...), Err: r.Err}
	for _, o := range r.Outputs {
		o.Shape = append([]int64(nil), o.Shape...)
		o.Data = append([]byte(nil), o.Data...)
		c.Outputs = append(c.Outputs, o)
	}
	return c
}

func TestStreamedMessagesFromAPrefixEqualFullEncodings(t *testing.T) {
	four := func(v byte) []byte { return []byte{v, 0, 0, 0} }
	withParam := outputResponse("OUT", core.TypeInt32, []int64{1}, four(9))
	withParam.Parameters = []core.Parameter{{Name: "p", Type: core.ParamInt, Int: 3}}
	twoOutputs := &core.Response{Outputs: []core.Output{
		{Name: "A", DataType: core.TypeInt32, Shape: []int64{1}, Data: four(1)},
		{Name: "B", DataType: core.TypeFP32, Shape: []int64{1, 1}, Data: four(2)},
	}}
	large := outputResponse("OUT", core.TypeUint8, []int64{8192}, make([]byte, 8192))
	nearMax := outputResponse("OUT", core.TypeUint8, []int64{inlineOutputBytes}, bytes.Repeat([]byte{7}, inlineOutputBytes))
	for _, tc := range []struct {
		name      string
		responses []*core.Response
		fins      []final
		prefixed  []bool // whether each response's message came from the prefix
	}{
		{"same output, new contents", []*core.Response{
			outputResponse("OUT", core.TypeInt32, []int64{1}, four(1)),
			outputResponse("OUT", core.TypeInt32, []int64{1}, four(2)),
			outputResponse("OUT", core.TypeInt32, []int64{1}, four(3)),
			outputResponse("OUT", core.TypeInt32, []int64{1}, four(4)),
		}, []final{notFinal, notFinal, notFinal, notFinal}, []bool{false, false, true, true}},
		{"a different shape, name, datatype, size or flag", []*core.Response{
			outputResponse("OUT", core.TypeInt32, []int64{1}, four(1)),
			outputResponse("OUT", core.TypeInt32, []int64{1}, four(2)),
			outputResponse("OUT", core.TypeInt32, []int64{1, 1}, four(3)),
			outputResponse("OUT2", core.TypeInt32, []int64{1}, four(4)),
			outputResponse("OUT", core.TypeFP32, []int64{1}, four(5)),
			outputResponse("OUT", core.TypeInt32, []int64{2}, append(four(6), four(6)...)),
			outputResponse("OUT", core.TypeInt32, []int64{1}, four(7)),
			outputResponse("OUT", core.TypeInt32, []int64{1}, four(8)),
		}, []final{notFinal, notFinal, notFinal, notFinal, notFinal, notFinal, isFinal, notFinal},
			[]bool{false, false, false, false, false, false, false, true}},
		{"parameters are never prefixed", []*core.Response{withParam, withParam, withParam},
			[]final{notFinal, notFinal, notFinal}, []bool{false, false, false}},
		{"two outputs", []*core.Response{twoOutputs, twoOutputs, twoOutputs},
			[]final{notFinal, notFinal, notFinal}, []bool{false, false, true}},
		{"referenced contents are never prefixed", []*core.Response{large, large, large},
			[]final{notFinal, notFinal, notFinal}, []bool{false, false, false}},
		{"a message past one segment gives no prefix", []*core.Response{nearMax, nearMax, nearMax},
			[]final{notFinal, notFinal, notFinal}, []bool{false, false, false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := &inferStream{}
			sr := &streamRequest{header: responseHeader{model: "square_int32", version: "1", id: "req-7"}.withFields()}
			for i, r := range tc.responses {
				want := standaloneBytes(sr.header, cloneResponse(r), tc.fins[i])
				before := sr.prefix.Load()
				m := st.encodeStreamed(sr, cloneResponse(r), tc.fins[i])
				got := m.bufs.Materialize()
				m.free()
				if !bytes.Equal(got, want) {
					t.Fatalf("response %d: message\n%x\nwant\n%x", i, got, want)
				}
				prefixed := before != nil && before != noPrefix && before.matches(r, tc.fins[i]) && prefixable(r)
				if prefixed != tc.prefixed[i] {
					t.Errorf("response %d came from the prefix: %v, want %v", i, prefixed, tc.prefixed[i])
				}
			}
			if n := st.arena.inFlight(); n != 0 {
				t.Errorf("%d bytes in flight after every message was freed", n)
			}
		})
	}
}

func TestStreamedPrefixIsSafeForConcurrentResponders(t *testing.T) {
	st := &inferStream{}
	sr := &streamRequest{header: responseHeader{model: "square_int32", version: "1", id: "9"}.withFields()}
	var wg sync.WaitGroup
	for p := range 4 {
		wg.Go(func() {
			for i := range 500 {
				r := outputResponse("OUT", core.TypeInt32, []int64{1}, []byte{byte(p), byte(i), 0, 0})
				want := standaloneBytes(sr.header, cloneResponse(r), notFinal)
				m := st.encodeStreamed(sr, r, notFinal)
				got := m.bufs.Materialize()
				m.free()
				if !bytes.Equal(got, want) {
					t.Errorf("responder %d, response %d: %s", p, i, fmt.Sprintf("%x != %x", got, want))
					return
				}
			}
		})
	}
	wg.Wait()
	if sr.prefix.Load() == nil {
		t.Error("2000 like responses made no prefix")
	}
}

func BenchmarkStreamedSquareMessage(b *testing.B) {
	for _, bc := range []struct {
		name   string
		prefix bool
	}{{"full", false}, {"prefix", true}} {
		b.Run(bc.name, func(b *testing.B) {
			st := &inferStream{}
			sr := &streamRequest{header: squareHeader}
			resp := squareResponse(1)
			b.ReportAllocs()
			for b.Loop() {
				var m *encodedMessage
				if bc.prefix {
					m = st.encodeStreamed(sr, resp, notFinal)
				} else {
					m = encodeIn(&st.arena, sr.header, resp, notFinal, true, "")
				}
				m.free()
			}
		})
	}
}
