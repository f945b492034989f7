package httpserver

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/tritonhost/tritonhost/core"
)

// marshalParameters is what the response parameters' JSON must read as:
// encoding/json's rendering of a map of their values.
func marshalParameters(params []core.Parameter) []byte {
	obj := make(map[string]any, len(params))
	for _, p := range params {
		switch p.Type {
		case core.ParamBool:
			obj[p.Name] = p.Bool
		case core.ParamInt:
			obj[p.Name] = p.Int
		case core.ParamDouble:
			obj[p.Name] = p.Double
		case core.ParamBytes:
			obj[p.Name] = string(p.Bytes)
		default:
			obj[p.Name] = p.String
		}
	}
	out, err := json.Marshal(obj)
	if err != nil {
		return []byte("{}")
	}
	return out
}

func checkParameters(t *testing.T, params []core.Parameter) {
	t.Helper()
	want := marshalParameters(params)
	if got := appendParameters([]byte("x"), params); string(got[1:]) != string(want) {
		t.Fatalf("%+v: %s, want %s", params, got[1:], want)
	}
}

// TestResponseParametersMatchEncodingJSON: response parameters render as
// json.Marshal renders a map of them.
func TestResponseParametersMatchEncodingJSON(t *testing.T) {
	for _, params := range [][]core.Parameter{
		nil,
		{core.IntParam("count", 3)},
		{core.StringParam("b", "x<y>"), core.BoolParam("a", true), core.IntParam("c", -9)},
		{core.IntParam("n", 1), core.StringParam("n", "later"), core.IntParam("m", 2), core.BoolParam("n", false)},
		{{Name: "raw", Type: core.ParamBytes, Bytes: []byte("\xff\x00\u2028")}, {Name: "é\"", Type: 9, String: "other"}},
		{core.DoubleParam("d", 0.1), core.DoubleParam("e", 1e-7), core.DoubleParam("f", 1e21), core.DoubleParam("g", -1e-10),
			core.DoubleParam("h", 0), core.DoubleParam("i", math.Copysign(0, -1)), core.DoubleParam("j", 123456789.125), core.DoubleParam("k", 5e-324)},
		{core.IntParam("a", 1), core.DoubleParam("z", math.NaN())},
		{core.DoubleParam("inf", math.Inf(-1))},
	} {
		checkParameters(t, params)
	}
}

// FuzzResponseParametersMatchEncodingJSON: parameters of any names, types
// and values render as json.Marshal renders a map of them.
func FuzzResponseParametersMatchEncodingJSON(f *testing.F) {
	f.Add("a", uint8(1), "b", int64(3), 0.5, "c", true)
	f.Add("x", uint8(3), "x", int64(-1), 1e-9, "\xff<", false)
	f.Fuzz(func(t *testing.T, name1 string, typ uint8, name2 string, i int64, d float64, s string, b bool) {
		params := []core.Parameter{
			{Name: name1, Type: core.ParameterType(typ % 6), String: s, Int: i, Bool: b, Double: d, Bytes: []byte(s)},
			core.DoubleParam(name2, d), core.IntParam(name1+name2, i), core.StringParam(name2, s), core.BoolParam(s, b),
		}
		checkParameters(t, params)
		checkParameters(t, params[:1])
	})
}
