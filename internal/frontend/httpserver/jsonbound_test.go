package httpserver

import (
	"encoding/json"
	"maps"
	"strings"
	"testing"
)

// boundCases are JSON values with what countItems makes of them: elements
// of an array, distinct names of an object, 0 for anything else.
var boundCases = []struct {
	json  string
	count int
}{
	{`[]`, 0},
	{` [ 1 , 2 ,3 ] `, 3},
	{`[[1,2],[3,[4,5]],{"a":[1,2,3]},"x,y]"]`, 4},
	{`["\"]", "\\", "\u005d"]`, 3},
	{`[true,false,null,-1.5e+3]`, 4},
	{`{}`, 0},
	{`{"a":1,"b":{"c":[1,2]},"d":"}"}`, 3},
	{`{"a":1,"a":2,"b":3}`, 2},
	{`{"p":1,"\u0070":2}`, 1},
	{`{"\ud800":1,"\ufffd":2}`, 1}, // a lone surrogate decodes to U+FFFD, as encoding/json decodes it
	{"{\"\xff\":1,\"\xfe\":2}", 1}, // so does invalid UTF-8
	{`null`, 0},
	{`"[1,2,3]"`, 0},
	{`17`, 0},
}

// TestCountItemsCountsAsEncodingJSONDecodes: countItems counts what
// encoding/json would build (a slice's elements, a map's keys), and stops
// at the count it is given.
func TestCountItemsCountsAsEncodingJSONDecodes(t *testing.T) {
	for _, c := range boundCases {
		n, err := countItems([]byte(c.json), 1000)
		if err != nil || n != c.count {
			t.Errorf("countItems(%s) = %d, %v; want %d", c.json, n, err, c.count)
		}
		if want := decodedItems(t, []byte(c.json)); want >= 0 && want != n {
			t.Errorf("countItems(%s) = %d; encoding/json builds %d", c.json, n, want)
		}
		if c.count > 1 {
			if n, err := countItems([]byte(c.json), 1); err != nil || n != 1 {
				t.Errorf("countItems(%s, stop 1) = %d, %v; want 1", c.json, n, err)
			}
		}
	}
}

// decodedItems is how many elements or keys encoding/json decodes from b,
// or -1 when b is neither an array nor an object.
func decodedItems(t *testing.T, b []byte) int {
	t.Helper()
	switch strings.TrimSpace(string(b))[0] {
	case '[':
		var v []json.RawMessage
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		return len(v)
	case '{':
		var v map[string]json.RawMessage
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		return len(v)
	}
	return -1
}

// TestBoundedTypesDecodeWithinTheBoundOnly: each bounded type decodes a
// value at its bound as encoding/json does, and one past it not at all,
// saying so; null and a value of another type go to encoding/json.
func TestBoundedTypesDecodeWithinTheBoundOnly(t *testing.T) {
	array := func(n int) string { return "[" + strings.TrimSuffix(strings.Repeat("1,", n), ",") + "]" }
	object := func(n int) string {
		var b strings.Builder
		b.WriteByte('{')
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(`"p` + strings.Repeat("x", i) + `":1`)
		}
		b.WriteByte('}')
		return b.String()
	}
	for _, c := range []struct {
		name    string
		json    string
		over    bool
		decoded int // elements or keys
		fails   bool
	}{
		{"shape at the bound", array(64), false, 64, false},
		{"shape past it", array(65), true, 0, false},
		{"shape null", `null`, false, 0, false},
		{"shape of another type", `"1"`, false, 0, true},
		{"parameters at the bound", object(1024), false, 1024, false},
		{"parameters past it", object(1025), true, 0, false},
		{"parameters repeating names", `{"a":1,"a":2,"a":3}`, false, 1, false},
		{"parameters null", `null`, false, 0, false},
		{"parameters of another type", `[1]`, false, 0, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			var (
				over    bool
				decoded int
				err     error
			)
			if strings.HasPrefix(c.name, "shape") {
				var s shapeJSON
				err = json.Unmarshal([]byte(c.json), &s)
				over, decoded = s.over, len(s.dims)
			} else {
				var p paramsJSON
				err = json.Unmarshal([]byte(c.json), &p)
				over, decoded = p.over, len(p.m)
			}
			if (err != nil) != c.fails || over != c.over || decoded != c.decoded {
				t.Errorf("over %v, %d decoded, error %v; want over %v, %d decoded, an error %v", over, decoded, err, c.over, c.decoded, c.fails)
			}
		})
	}
}

// FuzzBoundedDecodingMatchesEncodingJSON: whatever the bytes, the
// scanner neither panics nor reads past them; for valid JSON, countItems
// counts what encoding/json builds, and decodeObject decodes an object as
// encoding/json decodes it into a map of raw values.
func FuzzBoundedDecodingMatchesEncodingJSON(f *testing.F) {
	for _, c := range boundCases {
		f.Add([]byte(c.json))
	}
	f.Add([]byte(`{"inputs":[{"name":"INPUT0","datatype":"INT32","shape":[1,3],"data":[1,2,3],"parameters":{"binary_data_size":12}}],"parameters":{"sequence_id":7}}`))
	f.Add([]byte(`{"a" : [1, {"b": "c\"}"}] , "d":null}`))
	f.Add([]byte(`{"a":1,`))
	f.Add([]byte(`[1,2`))
	f.Fuzz(func(t *testing.T, b []byte) {
		n, cerr := countItems(b, 1<<20)
		m, over, derr := decodeObject(b, 1<<20)
		if !json.Valid(b) {
			return // only that nothing panicked
		}
		if cerr != nil {
			t.Fatalf("countItems(%q): %v", b, cerr)
		}
		var list []json.RawMessage
		var obj map[string]json.RawMessage
		switch {
		case json.Unmarshal(b, &list) == nil && list != nil:
			if n != len(list) {
				t.Fatalf("countItems(%q) = %d; encoding/json decodes %d elements", b, n, len(list))
			}
		case json.Unmarshal(b, &obj) == nil && obj != nil:
			if n != len(obj) {
				t.Fatalf("countItems(%q) = %d; encoding/json decodes %d names", b, n, len(obj))
			}
			if derr != nil || over || !maps.EqualFunc(m, obj, func(a, b json.RawMessage) bool { return string(a) == string(b) }) {
				t.Fatalf("decodeObject(%q) = %q, over %v, %v; encoding/json decodes %q", b, m, over, derr, obj)
			}
		}
	})
}
