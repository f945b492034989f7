package httpserver

import (
	"encoding/json"
	"io"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/coretest"
	"github.com/tritonhost/tritonhost/core/serverlog"
)

// inferJSONCases are JSON parts of infer requests, and whether the single
// pass decodes them (the rest are left to encoding/json).
var inferJSONCases = []struct {
	json   string
	single bool
}{
	{`{"inputs":[{"name":"INPUT0","datatype":"INT32","shape":[16],"parameters":{"binary_data_size":64}}],"outputs":[{"name":"OUTPUT0","parameters":{"binary_data":true}}]}`, true},
	{`{"inputs":[{"name":"INPUT0","datatype":"INT32","shape":[2,2],"data":[[1,2],[3,4]]}]}`, true},
	{` { "id" : "r1" , "parameters" : { "sequence_id" : 7, "b": [1, {"c": "d\"e"}] } , "inputs" : [ ] , "outputs" : [ ] } `, true},
	{`{"inputs":[{"name":"I","datatype":"BYTES","shape":[2],"data":["a","\u00e9\"\\"]}]}`, true},
	{`{"inputs":[{"name":"I","datatype":"FP32","shape":[-1,0],"data":[0.5,-1e-30,1E+2,0]}],"x":{"y":[true,false,null]}}`, true},
	{`{"inputs":[{"name":"é","datatype":"NEW","shape":[1],"data":[1],"other":1}]}`, true},
	{`{"inputs":[{"name":"I","shape":[],"data":{}}],"outputs":[{"name":"O","parameters":{}}]}`, true},
	{`{}`, true},
	{`{"parameters":{"p\u0031":1},"inputs":[{"name":"I","parameters":{"binary_data_size":4,"binary_data_size":5}}],"outputs":[{"name":"O","parameters":{"x":{"a":1}}}]}`, true},
	{`{"outputs":[{"name":"O","parameters":{"é":true}},{"name":"P","parameters":{" a\"b ":"c"}}]}`, true},
	{`{"Inputs":[]}`, false},                                 // another case
	{`{"ID":"x"}`, false},                                    // another case
	{`{"inpu\u0074s":[]}`, false},                            // an escaped name
	{"{\"input\u017f\":[]}", false},                          // a name past ASCII
	{`{"id":"a","id":"b"}`, false},                           // a name twice
	{`{"inputs":[{"name":"I","name":"J"}]}`, false},          // a name twice
	{`{"id":null}`, false},                                   // a null
	{`{"inputs":null}`, false},                               // a null
	{`{"inputs":[null]}`, false},                             // a null
	{`{"inputs":[{"name":"I","data":null}]}`, false},         // a null
	{`{"id":"a\nb"}`, false},                                 // an escape
	{"{\"id\":\"\xff\"}", false},                             // invalid UTF-8
	{`{"id":7}`, false},                                      // a wrong type
	{`{"inputs":[{"shape":[1.0]}]}`, false},                  // not an integer
	{`{"inputs":[{"shape":[1e2]}]}`, false},                  // not an integer
	{`{"inputs":[{"shape":[99999999999999999999]}]}`, false}, // past int64
	{`{"inputs":[{"shape":[01]}]}`, false},                   // not JSON
	{`{"inputs":[{"data":[1,]}]}`, false},                    // not JSON
	{`{"inputs":[{"data":[1 2]}]}`, false},                   // not JSON
	{`{"inputs":[{"data":[-]}]}`, false},                     // not JSON
	{`{"inputs":[{"data":[1,-2.5e+3 , 0 ]}]}`, true},
	{`{"inputs":[{"data":[ ]}]}`, true},
	{`{"inputs":[{"data":[1,"a",[2]]}]}`, true},
	{`{"x":[1 2]}`, false}, // not JSON
	{`{"x":"\q"}`, false},  // not JSON
	{`{"x":-}`, false},     // not JSON
	{`{"x":1.}`, false},    // not JSON
	{`{"x":tru}`, false},   // not JSON
	{"{}\x00", false},      // not JSON
	{`{} {}`, false},       // not JSON
	{`{"x":1`, false},      // not JSON
	{`[]`, false},          // not an object
	{``, false},            // not JSON
	{`{"x":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}`, false}, // deeper than the single pass goes
}

// TestInferJSONSinglePass: the single pass decodes the requests clients
// send, to what encoding/json decodes, and leaves the others to it.
func TestInferJSONSinglePass(t *testing.T) {
	for _, c := range inferJSONCases {
		var rj inferRequestJSON
		d := inferDecoder{b: []byte(c.json)}
		if single := d.request(&rj); single != c.single {
			t.Errorf("%s: decoded in one pass %v, want %v", c.json, single, c.single)
			continue
		}
		checkSinglePass(t, []byte(c.json))
	}
}

// TestInferJSONSharesTensorNames: decoded against its model, a request's
// input and output names are the configuration's strings, not copies, and
// its inputs, outputs and shape lie in the inferMemory.
func TestInferJSONSharesTensorNames(t *testing.T) {
	srv := coretest.Serve(t, core.Options{Backends: coretest.NewProvider(), Logger: serverlog.New(io.Discard)},
		coretest.ModelDir{Name: "echo", Config: `backend: "go"
input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ -1 ] } ]
`})
	m, err := srv.Model("echo", -1)
	if err != nil {
		t.Fatal(err)
	}
	var rj inferRequestJSON
	var mem inferMemory
	if err := decodeInferJSON([]byte(inferJSONCases[0].json), &rj, &mem, m); err != nil {
		t.Fatal(err)
	}
	in, out := &rj.Inputs.list[0], &rj.Outputs.list[0]
	if unsafe.StringData(in.Name) != unsafe.StringData(m.InputConfig("INPUT0").GetName()) ||
		unsafe.StringData(out.Name) != unsafe.StringData(m.OutputConfig("OUTPUT0").GetName()) {
		t.Errorf("names %q and %q are copies, not the configuration's", in.Name, out.Name)
	}
	if in != &mem.inputs[0] || out != &mem.outputs[0] || &in.Shape.dims[0] != &mem.dims[0][0] {
		t.Error("the decoded request is not in its inferMemory")
	}
}

// checkSinglePass fails when the single pass decodes b to anything but
// what encoding/json decodes, whether it allocates what it decodes or
// keeps it in an inferMemory.
func checkSinglePass(t *testing.T, b []byte) {
	t.Helper()
	checkSinglePassInto(t, b, nil)
	checkSinglePassInto(t, b, &inferMemory{})
}

func checkSinglePassInto(t *testing.T, b []byte, mem *inferMemory) {
	t.Helper()
	var fast inferRequestJSON
	d := inferDecoder{b: b, mem: mem}
	if !d.request(&fast) {
		return
	}
	asMap(&fast.Parameters)
	for i := range fast.Inputs.list {
		asMap(&fast.Inputs.list[i].Parameters)
	}
	for i := range fast.Outputs.list {
		asMap(&fast.Outputs.list[i].Parameters)
	}
	var want inferRequestJSON
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatalf("%q: decoded in one pass to %+v; encoding/json: %v", b, fast, err)
	}
	if !reflect.DeepEqual(fast, want) {
		t.Fatalf("%q: decoded in one pass to %+v; encoding/json decodes %+v", b, fast, want)
	}
}

// asMap turns parameters held as a single member into the map
// encoding/json decodes them to.
func asMap(p *paramsJSON) {
	if p.single {
		*p = paramsJSON{m: map[string]json.RawMessage{p.name: p.value}}
	}
}

// FuzzInferJSONSinglePassMatchesEncodingJSON: whatever the bytes, the
// single pass neither panics nor reads past them, and what it decodes,
// encoding/json decodes to the same.
func FuzzInferJSONSinglePassMatchesEncodingJSON(f *testing.F) {
	for _, c := range inferJSONCases {
		f.Add([]byte(c.json))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		checkSinglePass(t, b)
	})
}

// checkParam fails when unmarshalParam decodes raw into any of the types
// of the extension parameters other than as json.Unmarshal does.
func checkParam(t *testing.T, raw []byte) {
	t.Helper()
	checkParamAs[uint64](t, raw)
	checkParamAs[bool](t, raw)
	checkParamAs[string](t, raw)
}

func checkParamAs[T uint64 | bool | string](t *testing.T, raw []byte) {
	t.Helper()
	var got, want T
	err := unmarshalParam(raw, &got)
	wantErr := json.Unmarshal(raw, &want)
	if (err != nil) != (wantErr != nil) || got != want {
		t.Fatalf("%q into %T: %v, %v; json.Unmarshal: %v, %v", raw, got, got, err, want, wantErr)
	}
}

// paramCases are values of extension parameters, right and wrong.
var paramCases = []string{`0`, `64`, `18446744073709551615`, `18446744073709551616`, `-1`, `01`, `1.0`, `1e2`, ` 5`,
	`true`, `false`, `True`, `null`, `"r"`, `"a\"b"`, "\"\xff\"", `""`, `"x"y`, `[]`, ``}

func TestParametersDecodeAsEncodingJSON(t *testing.T) {
	for _, c := range paramCases {
		checkParam(t, []byte(c))
	}
}

// FuzzParametersDecodeAsEncodingJSON: whatever the bytes, unmarshalParam
// decodes them as json.Unmarshal does.
func FuzzParametersDecodeAsEncodingJSON(f *testing.F) {
	for _, c := range paramCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		checkParam(t, raw)
	})
}

// BenchmarkDecodeInferJSON decodes the JSON part of an infer request as
// Triton's clients send it: binary tensors (each with a parameters
// object of one member) and JSON values.
func BenchmarkDecodeInferJSON(b *testing.B) {
	for _, bc := range []struct{ name, json string }{
		{"binary", inferJSONCases[0].json},
		{"values", `{"inputs":[{"name":"INPUT0","datatype":"INT32","shape":[4],"data":[1,2,3,4]}],"outputs":[{"name":"OUTPUT0"}]}`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			body := []byte(bc.json)
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			mem := new(inferMemory) // in the request's inferCall, in the server
			for b.Loop() {
				var rj inferRequestJSON
				*mem = inferMemory{}
				if err := decodeInferJSON(body, &rj, mem, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
