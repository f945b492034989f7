package httpserver_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/tritonhost/tritonhost/core/coretest"
	"github.com/tritonhost/tritonhost/internal/protocol"
)

// names returns n distinct names with prefix.
func names(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%05d", prefix, i)
	}
	return out
}

// params is a parameters object of n entries, which nothing reserves.
func params(n int) map[string]any {
	p := map[string]any{}
	for _, name := range names("p", n) {
		p[name] = 1
	}
	return p
}

// TestRequestsPastTheProtocolBoundsAreRefused pushes an infer and a
// generate request past each bound the protocols share (inputs, requested
// outputs, request parameters, an input's or an output's parameters, an
// input's dimensions), as the gRPC frontend's test of the same name does:
// each is refused 400 naming the model and the tensor, in the words of
// protocol.MoreThan where the body's lists and objects are counted only
// one past the bound (an infer request's), and a request at the bound is
// served.
func TestRequestsPastTheProtocolBoundsAreRefused(t *testing.T) {
	t.Parallel()
	h := newHarness(t, setup{}, coretest.ModelDir{Name: "m", Config: vector("")})
	h.p.Set("m", coretest.Echo())
	input := func(name string, shape []int64, p map[string]any) map[string]any {
		n := int64(1)
		for _, d := range shape {
			n *= d
		}
		return map[string]any{"name": name, "datatype": "INT32", "shape": shape, "data": make([]int32, n), "parameters": p}
	}
	inputs := func(n int) []any {
		var in []any
		for _, name := range names("IN", n) {
			in = append(in, input(name, []int64{1}, nil))
		}
		return in
	}
	outputs := func(n int, p map[string]any) []any {
		var out []any
		for _, name := range names("OUT", n) {
			out = append(out, map[string]any{"name": name, "parameters": p})
		}
		return out
	}
	ones := func(n int) []int64 {
		s := make([]int64, n)
		for i := range s {
			s[i] = 1
		}
		return s
	}
	const (
		tensors = protocol.MaxRequestTensors
		nparams = protocol.MaxRequestParameters
		dims    = protocol.MaxTensorDims
	)
	for _, tc := range []struct {
		name string
		path string // infer or generate
		body map[string]any
		want string // the error past the bound; "" at the bound, served
	}{
		{"request parameters", "infer", map[string]any{"parameters": params(nparams + 1), "inputs": []any{input("INPUT0", []int64{1}, nil)}},
			fmt.Sprintf(`model "m": the request has more than the %d parameters the server accepts`, nparams)},
		{"request parameters at the bound", "infer", map[string]any{"parameters": params(nparams), "inputs": []any{input("INPUT0", []int64{1}, nil)}}, ""},
		{"inputs", "infer", map[string]any{"inputs": inputs(tensors + 1)},
			fmt.Sprintf(`model "m": the request has more than the %d inputs the server accepts`, tensors)},
		{"requested outputs", "infer", map[string]any{"inputs": []any{input("INPUT0", []int64{1}, nil)}, "outputs": outputs(tensors+1, nil)},
			fmt.Sprintf(`model "m": the request has more than the %d requested outputs the server accepts`, tensors)},
		{"input parameters", "infer", map[string]any{"inputs": []any{input("INPUT0", []int64{1}, params(nparams+1))}},
			fmt.Sprintf(`model "m": input "INPUT0" has more than the %d parameters the server accepts`, nparams)},
		{"input parameters at the bound", "infer", map[string]any{"inputs": []any{input("INPUT0", []int64{1}, params(nparams))}}, ""},
		{"output parameters", "infer", map[string]any{"inputs": []any{input("INPUT0", []int64{1}, nil)},
			"outputs": []any{map[string]any{"name": "OUTPUT0", "parameters": params(nparams + 1)}}},
			fmt.Sprintf(`model "m": output "OUTPUT0" has more than the %d parameters the server accepts`, nparams)},
		{"output parameters at the bound", "infer", map[string]any{"inputs": []any{input("INPUT0", []int64{1}, nil)},
			"outputs": []any{map[string]any{"name": "OUTPUT0", "parameters": params(nparams)}}}, ""},
		{"dimensions", "infer", map[string]any{"inputs": []any{input("INPUT0", ones(dims+1), nil)}},
			fmt.Sprintf(`model "m": input "INPUT0" has more than the %d dimensions the server accepts`, dims)},
		{"generate parameters", "generate", func() map[string]any {
			b := map[string]any{"INPUT0": []int32{1}, "parameters": params(nparams)}
			b["one_more"] = 1
			return b
		}(), fmt.Sprintf(`model "m": the request has %d parameters, more than the %d the server accepts`, nparams+1, nparams)},
		{"generate parameters at the bound", "generate", map[string]any{"INPUT0": []int32{1}, "parameters": params(nparams)}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body, err := json.Marshal(tc.body)
			if err != nil {
				t.Fatal(err)
			}
			status, _, out := h.call(t, "POST", "/v2/models/m/"+tc.path, body)
			if tc.want != "" {
				wantError(t, tc.name, status, out, http.StatusBadRequest)
				var e struct{ Error string }
				if json.Unmarshal(out, &e); e.Error != tc.want {
					t.Errorf("error %q, want %q", e.Error, tc.want)
				}
				return
			}
			if status != http.StatusOK {
				t.Errorf("a request at the bound: %d %s", status, out)
			}
		})
	}
	// The server goes on serving.
	status, _, out := h.call(t, "POST", "/v2/models/m/infer", []byte(`{"inputs":[{"name":"INPUT0","datatype":"INT32","shape":[1],"data":[7]}]}`))
	if status != http.StatusOK {
		t.Errorf("a request after the refused ones: %d %s", status, out)
	}
}
