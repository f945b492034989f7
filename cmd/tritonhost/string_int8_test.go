package main

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/grpc/status"

	"github.com/tritonhost/tritonhost/client"
	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
)

// What Triton's string and INT8 example clients (client repository,
// src/python/examples: simple_grpc_string_infer_client.py,
// simple_http_string_infer_client.py, grpc_explicit_int8_content_client.py)
// send to the example models simple_string, simple_identity and
// simple_int8, and the conditions on which they print PASS.

// stringOperands are the string clients' inputs: INPUT0 the text of 0..15,
// INPUT1 the text of 1 sixteen times.
func stringOperands() (in0, in1 []string) {
	for i := range 16 {
		in0, in1 = append(in0, strconv.Itoa(i)), append(in1, "1")
	}
	return in0, in1
}

// bytesElements decodes BYTES contents (a 4-byte little-endian length
// before each element).
func bytesElements(t *testing.T, name string, data []byte) []string {
	t.Helper()
	vals, err := client.Tensor{Name: name, Datatype: "BYTES", Data: data}.Values()
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(vals))
	for i, v := range vals {
		out[i] = v.(string)
	}
	return out
}

// checkSumAndDifference is the string clients' check: int() of element i of
// OUTPUT0 is i+1, of OUTPUT1 i-1.
func checkSumAndDifference(t *testing.T, sum, diff []string) {
	t.Helper()
	if len(sum) != 16 || len(diff) != 16 {
		t.Fatalf("OUTPUT0 %q and OUTPUT1 %q, want 16 elements each", sum, diff)
	}
	for i := range 16 {
		if r0, err := strconv.Atoi(sum[i]); err != nil || r0 != i+1 {
			t.Errorf("%d + 1 = %q: incorrect sum", i, sum[i])
		}
		if r1, err := strconv.Atoi(diff[i]); err != nil || r1 != i-1 {
			t.Errorf("%d - 1 = %q: incorrect difference", i, diff[i])
		}
	}
}

// identityCases are the string clients' calls of simple_identity: sixteen
// "he\x00llo" (an embedded NUL), then sixteen 4-byte blobs 00 01 02 03.
var identityCases = []struct {
	name string
	elem string
}{
	{"null_chars", "he\x00llo"},
	{"bytes", "\x00\x01\x02\x03"},
}

// sixteen is elem sixteen times.
func sixteen(elem string) []string {
	return slices.Repeat([]string{elem}, 16)
}

// TestSimpleStringGRPCClientPasses: simple_grpc_string_infer_client sends
// BYTES tensors as raw contents, [1,16], to simple_string and reads the sum
// and difference as text, then sends BYTES with a NUL and binary blobs
// through simple_identity and wants them back unchanged.
func TestSimpleStringGRPCClientPasses(t *testing.T) {
	srv := startServer(t, "")
	ctx := ctxFor(t)
	infer := func(t *testing.T, r client.Request) map[string]client.Tensor {
		t.Helper()
		msg, err := r.Message()
		if err != nil {
			t.Fatal(err)
		}
		resp, err := srv.Client.ModelInfer(ctx, msg)
		if err != nil {
			t.Fatalf("ModelInfer(%s): %v", r.Model, err)
		}
		outs, err := client.Outputs(resp)
		if err != nil {
			t.Fatal(err)
		}
		byName := map[string]client.Tensor{}
		for _, o := range outs {
			if o.Datatype != "BYTES" || !slices.Equal(o.Shape, []int64{1, 16}) {
				t.Errorf("%s: %s %v, want BYTES [1 16]", o.Name, o.Datatype, o.Shape)
			}
			byName[o.Name] = o
		}
		return byName
	}

	in0, in1 := stringOperands()
	outs := infer(t, client.Request{Model: "simple_string",
		Inputs:  []client.Tensor{client.Strings("INPUT0", []int64{1, 16}, in0...), client.Strings("INPUT1", []int64{1, 16}, in1...)},
		Outputs: []string{"OUTPUT0", "OUTPUT1"}})
	checkSumAndDifference(t, bytesElements(t, "OUTPUT0", outs["OUTPUT0"].Data), bytesElements(t, "OUTPUT1", outs["OUTPUT1"].Data))

	for _, tc := range identityCases {
		t.Run(tc.name, func(t *testing.T) {
			outs := infer(t, client.Request{Model: "simple_identity",
				Inputs: []client.Tensor{client.Strings("INPUT0", []int64{1, 16}, sixteen(tc.elem)...)}, Outputs: []string{"OUTPUT0"}})
			if got := bytesElements(t, "OUTPUT0", outs["OUTPUT0"].Data); !slices.Equal(got, sixteen(tc.elem)) {
				t.Errorf("OUTPUT0 = %q: incorrect output", got)
			}
		})
	}
}

// httpStrings reads a BYTES output of an HTTP response, binary or JSON.
func httpStrings(t *testing.T, o httpOutput) []string {
	t.Helper()
	if o.Datatype != "BYTES" || !slices.Equal(o.Shape, []int64{1, 16}) {
		t.Errorf("%s: %s %v, want BYTES [1 16]", o.Name, o.Datatype, o.Shape)
	}
	if o.Binary != nil {
		return bytesElements(t, o.Name, o.Binary)
	}
	var vals []string
	if err := json.Unmarshal(o.JSONData, &vals); err != nil {
		t.Fatalf("%s: data %s: %v", o.Name, o.JSONData, err)
	}
	return vals
}

// bytesInput is an HTTP infer input of BYTES [1,16] as the Python client
// writes it: binary (its contents after the JSON header) or JSON strings.
func bytesInput(name string, vals []string, binary bool) (map[string]any, []byte) {
	in := map[string]any{"name": name, "shape": []int64{1, 16}, "datatype": "BYTES"}
	if !binary {
		in["data"] = vals
		return in, nil
	}
	data := client.Strings(name, nil, vals...).Data
	in["parameters"] = map[string]any{"binary_data_size": len(data)}
	return in, data
}

// TestSimpleStringHTTPClientPasses: simple_http_string_infer_client sends
// simple_string INPUT0 as binary data and INPUT1 as JSON, and asks for
// OUTPUT0 as binary data and OUTPUT1 as JSON; then each simple_identity
// call both ways.
func TestSimpleStringHTTPClientPasses(t *testing.T) {
	srv := startServer(t, "")
	in0, in1 := stringOperands()
	input0, data0 := bytesInput("INPUT0", in0, true)
	input1, _ := bytesInput("INPUT1", in1, false)
	outs := srv.httpInfer(t, "simple_string", map[string]any{
		"inputs": []any{input0, input1},
		"outputs": []any{
			map[string]any{"name": "OUTPUT0", "parameters": map[string]any{"binary_data": true}},
			map[string]any{"name": "OUTPUT1", "parameters": map[string]any{"binary_data": false}},
		},
	}, data0)
	if len(outs) != 2 || outs[0].Name != "OUTPUT0" || outs[0].Binary == nil || outs[1].Name != "OUTPUT1" || outs[1].Binary != nil {
		t.Fatalf("outputs %+v, want OUTPUT0 binary and OUTPUT1 in JSON", outs)
	}
	checkSumAndDifference(t, httpStrings(t, outs[0]), httpStrings(t, outs[1]))

	for _, tc := range identityCases {
		for _, binary := range []bool{true, false} {
			t.Run(tc.name+"/binary="+strconv.FormatBool(binary), func(t *testing.T) {
				input, data := bytesInput("INPUT0", sixteen(tc.elem), binary)
				var raw [][]byte
				if binary {
					raw = append(raw, data)
				}
				outs := srv.httpInfer(t, "simple_identity", map[string]any{
					"inputs":  []any{input},
					"outputs": []any{map[string]any{"name": "OUTPUT0", "parameters": map[string]any{"binary_data": binary}}},
				}, raw...)
				if len(outs) != 1 || (outs[0].Binary != nil) != binary {
					t.Fatalf("outputs %+v, want OUTPUT0 (binary %t)", outs, binary)
				}
				if got := httpStrings(t, outs[0]); !slices.Equal(got, sixteen(tc.elem)) {
					t.Errorf("OUTPUT0 = %q: incorrect output", got)
				}
			})
		}
	}
}

// TestSimpleStringRefusesAnElementThatIsNoNumber: the request fails with
// INVALID_ARG naming the input and the element; the server goes on.
func TestSimpleStringRefusesAnElementThatIsNoNumber(t *testing.T) {
	srv := startServer(t, "")
	in0, in1 := stringOperands()
	in1[3] = "one"
	code, _, body := srv.httpCall(t, "POST", "/v2/models/simple_string/infer", []byte(
		`{"inputs":[{"name":"INPUT0","shape":[1,16],"datatype":"BYTES","data":`+jsonText(t, in0)+`},`+
			`{"name":"INPUT1","shape":[1,16],"datatype":"BYTES","data":`+jsonText(t, in1)+`}]}`))
	for _, want := range []string{`input 'INPUT1' element 3 \"one\" is not a decimal integer`, "model 'simple_string'"} {
		if code != 400 || !strings.Contains(string(body), want) {
			t.Errorf("a non-numeric element: %d %s, want 400 saying %s", code, body, want)
		}
	}
}

// jsonText is v as JSON.
func jsonText(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// int8Contents is an INT8 input [1,16] with its values in the typed
// contents (int_contents), as grpc_explicit_int8_content_client sends it.
func int8Contents(name string, vals []int32) *pb.ModelInferRequest_InferInputTensor {
	return &pb.ModelInferRequest_InferInputTensor{Name: name, Datatype: "INT8", Shape: []int64{1, 16},
		Contents: &pb.InferTensorContents{IntContents: vals}}
}

// TestGRPCExplicitInt8ContentClientPasses: grpc_explicit_int8_content_client
// sends simple_int8 its inputs as int_contents, reads raw_output_contents
// as int8 in the order of the outputs, then sends the same request for
// version "wrong_specification" and wants Triton's error.
func TestGRPCExplicitInt8ContentClientPasses(t *testing.T) {
	srv := startServer(t, "")
	ctx := ctxFor(t)
	var in0, in1 []int32
	for i := range 16 {
		in0, in1 = append(in0, int32(i)), append(in1, 1)
	}
	req := &pb.ModelInferRequest{
		ModelName: "simple_int8",
		Inputs:    []*pb.ModelInferRequest_InferInputTensor{int8Contents("INPUT0", in0), int8Contents("INPUT1", in1)},
		Outputs:   []*pb.ModelInferRequest_InferRequestedOutputTensor{{Name: "OUTPUT0"}, {Name: "OUTPUT1"}},
	}
	resp, err := srv.Client.ModelInfer(ctx, req)
	if err != nil {
		t.Fatalf("ModelInfer(simple_int8): %v", err)
	}
	if len(resp.GetOutputs()) != 2 || len(resp.GetRawOutputContents()) != 2 {
		t.Fatalf("expected two output results: %v", resp)
	}
	for index, o := range resp.GetOutputs() {
		raw := resp.GetRawOutputContents()[index]
		if want := []string{"OUTPUT0", "OUTPUT1"}[index]; o.GetName() != want || o.GetDatatype() != "INT8" ||
			!slices.Equal(o.GetShape(), []int64{1, 16}) || len(raw) != 16 {
			t.Fatalf("output %d: %s %s %v of %d bytes, want %s INT8 [1 16] of 16", index, o.GetName(), o.GetDatatype(), o.GetShape(), len(raw), want)
		}
		for i := range 16 {
			want := in0[i] + in1[i]
			if index == 1 {
				want = in0[i] - in1[i]
			}
			if got := int8(raw[i]); int32(got) != want {
				t.Errorf("%s[%d] = %d, want %d", o.GetName(), i, got, want)
			}
		}
	}

	req.ModelVersion = "wrong_specification"
	_, err = srv.Client.ModelInfer(ctx, req)
	if want := "failed to get model version from specified version string 'wrong_specification'"; !strings.Contains(status.Convert(err).Message(), want) {
		t.Errorf("ModelInfer of version wrong_specification: %v, want an error with %q", err, want)
	}
}
