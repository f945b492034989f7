package httpserver

import (
	"testing"

	"github.com/tritonhost/tritonhost/internal/protocol"
)

// parameterValueCases are request parameters' values, those Triton's
// clients send and others around the fast path's edges.
var parameterValueCases = []struct {
	raw   string
	plain bool // decoded without encoding/json
	want  protocol.Value
}{
	{`true`, true, protocol.Value{Kind: protocol.KindBool, Bool: true}},
	{` false `, true, protocol.Value{Kind: protocol.KindBool}},
	{`0`, true, protocol.Value{Kind: protocol.KindInt}},
	{`-0`, true, protocol.Value{Kind: protocol.KindInt}},
	{`42`, true, protocol.Value{Kind: protocol.KindInt, Int: 42}},
	{`-7`, true, protocol.Value{Kind: protocol.KindInt, Int: -7}},
	{`999999999999999999`, true, protocol.Value{Kind: protocol.KindInt, Int: 999999999999999999}},
	{`9223372036854775807`, false, protocol.Value{Kind: protocol.KindInt, Int: 9223372036854775807}},
	{`18446744073709551615`, false, protocol.Value{Kind: protocol.KindUint, Uint: 18446744073709551615}},
	{`1.5`, false, protocol.Value{Kind: protocol.KindDouble, Double: 1.5}},
	{`1e2`, false, protocol.Value{Kind: protocol.KindDouble, Double: 100}},
	{`"a string"`, true, protocol.Value{Kind: protocol.KindString, String: "a string"}},
	{`""`, true, protocol.Value{Kind: protocol.KindString}},
	{`"tab\tescaped"`, false, protocol.Value{Kind: protocol.KindString, String: "tab\tescaped"}},
	{`"é"`, true, protocol.Value{Kind: protocol.KindString, String: "é"}},
	{"\"\xff\"", false, protocol.Value{Kind: protocol.KindString, String: "\ufffd"}}, // invalid UTF-8: encoding/json replaces it
}

// TestParameterValue: each value decodes to what it says, and the plain
// ones without encoding/json.
func TestParameterValue(t *testing.T) {
	for _, c := range parameterValueCases {
		got, err := parameterValue([]byte(c.raw))
		if err != nil || got != c.want {
			t.Errorf("parameterValue(%s) = %+v, %v; want %+v", c.raw, got, err, c.want)
		}
		if _, plain := plainParameterValue([]byte(c.raw)); plain != c.plain {
			t.Errorf("plainParameterValue(%s) decodes it: %v, want %v", c.raw, plain, c.plain)
		}
	}
	for _, bad := range []string{`+1`, `-`, `"open`, `tru`, `null`, `[1]`, `{}`} {
		if v, err := parameterValue([]byte(bad)); err == nil {
			t.Errorf("parameterValue(%s) = %+v, want an error", bad, v)
		}
	}
}

// FuzzParameterValueMatchesEncodingJSON: whatever the bytes, what the plain
// path decodes, encoding/json decodes the same.
func FuzzParameterValueMatchesEncodingJSON(f *testing.F) {
	for _, c := range parameterValueCases {
		f.Add([]byte(c.raw))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, plain := plainParameterValue(raw)
		if !plain {
			return
		}
		want, err := decodeParameterJSON(raw)
		if err != nil || got != want {
			t.Fatalf("%q: plain %+v, encoding/json %+v (%v)", raw, got, want, err)
		}
	})
}
