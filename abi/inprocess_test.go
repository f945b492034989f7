package abi_test

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

func exampleRepo(t *testing.T, names ...string) string {
	models := make([]testenv.Model, len(names))
	for i, n := range names {
		models[i] = testenv.Model{Name: n, Config: testenv.ExampleConfig(t, n)}
	}
	return testenv.Repository(t, models...)
}

func TestRepeatSendsEachElementThenFinal(t *testing.T) {
	t.Parallel()
	srv := startServer(t, exampleRepo(t, "repeat_int32"))
	events := infer(t, srv, &core.Submission{
		Model: "repeat_int32",
		ID:    "0",
		Inputs: []core.Input{
			core.NewInput("IN", core.TypeInt32, []int64{4}, int32s(4, 2, 0, 1)),
			core.NewInput("DELAY", core.TypeUint32, []int64{4}, uint32s(1, 2, 3, 4)),
			core.NewInput("WAIT", core.TypeUint32, []int64{1}, uint32s(5)),
		},
	})
	want := [][2]int32{{4, 0}, {2, 1}, {0, 2}, {1, 3}}
	if len(events) != len(want)+1 {
		t.Fatalf("got %d events, want %d responses and a final: %+v", len(events), len(want), events)
	}
	for i, w := range want {
		ev := events[i]
		if ev.final || ev.resp == nil || ev.resp.Err != nil {
			t.Fatalf("event %d: want a non-final response, got %+v", i, ev)
		}
		got := [2]int32{scalarInt32(t, ev.resp, "OUT"), scalarInt32(t, ev.resp, "IDX")}
		if got != w {
			t.Errorf("event %d: (OUT, IDX) = %v, want %v", i, got, w)
		}
	}
	if last := events[len(events)-1]; !last.final || last.resp != nil {
		t.Fatalf("last event = %+v, want a flags-only final", last)
	}
}

func TestSquareAnswersEachRequestOnItsOwnThread(t *testing.T) {
	t.Parallel()
	cfg := testenv.ExampleConfig(t, "square_int32") + `
parameters [{ key: "CUSTOM_OUTPUT_DELAY_NS" value: { string_value: "50000000" } }]
`
	srv := startServer(t, testenv.Repository(t, testenv.Model{Name: "square_int32", Config: cfg}))

	var mu sync.Mutex
	var order []string // request id of each response, in arrival order
	finals := map[string]int{}
	counts := map[string]int{}
	done := make(chan struct{}, 4)
	for i, k := range []int32{4, 2, 0, 1} {
		id := fmt.Sprint(i)
		err := srv.Infer(context.Background(), &core.Submission{
			Model:  "square_int32",
			ID:     id,
			Inputs: []core.Input{core.NewInput("IN", core.TypeInt32, []int64{1}, int32s(k))},
		}, func(resp *core.Response, final bool) {
			mu.Lock()
			defer mu.Unlock()
			if resp != nil {
				if resp.Err != nil {
					t.Errorf("request %s: unexpected response %+v", id, resp)
				} else if got := scalarInt32(t, resp, "OUT"); got != k {
					t.Errorf("request %s: OUT = %d, want %d", id, got, k)
				}
				counts[id]++
				order = append(order, id)
			}
			if final {
				finals[id]++
				done <- struct{}{}
			}
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for range 4 {
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Fatal("timed out waiting for four finals")
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if want := map[string]int{"0": 4, "1": 2, "3": 1}; !maps.Equal(counts, want) {
		t.Errorf("responses per request = %v, want %v", counts, want)
	}
	if want := map[string]int{"0": 1, "1": 1, "2": 1, "3": 1}; !maps.Equal(finals, want) {
		t.Errorf("finals per request = %v, want one each", finals)
	}
	if len(order) != 7 || !interleaved(order) {
		t.Errorf("responses arrived as %v, want 7 responses of different requests interleaved", order)
	}
}

// interleaved reports whether some request's responses are separated by
// another request's.
func interleaved(ids []string) bool {
	seen := map[string]bool{}
	for i, id := range ids {
		if seen[id] && ids[i-1] != id {
			return true
		}
		seen[id] = true
	}
	return false
}

func TestIdentityRoundTripsBitExact(t *testing.T) {
	t.Parallel()
	bytesCfg := `
name: "identity_bytes"
backend: "identity"
max_batch_size: 0
input [ { name: "INPUT0" data_type: TYPE_STRING dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_STRING dims: [ -1 ] } ]
`
	repo := testenv.Repository(t,
		testenv.Model{Name: "identity_fp32", Config: testenv.ExampleConfig(t, "identity_fp32")},
		testenv.Model{Name: "identity_int32", Config: testenv.ExampleConfig(t, "identity_int32")},
		testenv.Model{Name: "identity_bytes", Config: bytesCfg},
	)
	srv := startServer(t, repo)
	nanPayload := math.Float32frombits(0x7fc01234)
	tests := []struct {
		model string
		dt    core.DataType
		shape []int64
		data  []byte
	}{
		{"identity_fp32", core.TypeFP32, []int64{1, 6}, float32s(1.5, float32(math.Copysign(0, -1)), float32(math.Inf(1)), nanPayload, 1e-45, -3.25)},
		{"identity_fp32", core.TypeFP32, []int64{3, 2}, float32s(1, 2, 3, 4, 5, 6)},
		{"identity_int32", core.TypeInt32, []int64{5}, int32s(math.MinInt32, -1, 0, 1, math.MaxInt32)},
		{"identity_int32", core.TypeInt32, []int64{0}, nil},
		{"identity_bytes", core.TypeBytes, []int64{3}, core.EncodeBytes([]byte("hello"), []byte{}, []byte{0, 0xff, 0x80, '\n'})},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%s%v", tc.model, tc.shape), func(t *testing.T) {
			events := infer(t, srv, &core.Submission{
				Model:  tc.model,
				Inputs: []core.Input{core.NewInput("INPUT0", tc.dt, tc.shape, tc.data)},
			})
			if len(events) != 1 || !events[0].final || events[0].resp == nil || events[0].resp.Err != nil {
				t.Fatalf("want exactly one final response, got %+v", events)
			}
			out := output(t, events[0].resp, "OUTPUT0")
			if out.DataType != tc.dt || !slices.Equal(out.Shape, tc.shape) || !bytes.Equal(out.Data, tc.data) {
				t.Errorf("OUTPUT0 = %s %v %x, want %s %v %x", out.DataType, out.Shape, out.Data, tc.dt, tc.shape, tc.data)
			}
		})
	}
}

func TestBadRequestsGetTheirOwnErrors(t *testing.T) {
	t.Parallel()
	srv := startServer(t, exampleRepo(t, "repeat_int32", "identity_fp32"))
	good := func() []core.Input {
		return []core.Input{
			core.NewInput("IN", core.TypeInt32, []int64{2}, int32s(1, 2)),
			core.NewInput("DELAY", core.TypeUint32, []int64{2}, uint32s(0, 0)),
			core.NewInput("WAIT", core.TypeUint32, []int64{1}, uint32s(0)),
		}
	}
	with := func(edit func([]core.Input) []core.Input) []core.Input { return edit(good()) }
	tests := []struct {
		name   string
		model  string
		ver    int64
		inputs []core.Input
		outs   []string
		code   core.Code
		want   string // the whole message, Triton's
	}{
		{"unknown model", "nope", 0, good(), nil, core.CodeNotFound, "Request for unknown model: 'nope' is not found"},
		{"unknown version", "repeat_int32", 7, good(), nil, core.CodeNotFound, "Request for unknown model: 'repeat_int32' version 7 is not found"},
		{"missing input", "repeat_int32", 0, with(func(in []core.Input) []core.Input { return in[:2] }), nil, core.CodeInvalidArg,
			"[request id: <id_unknown>] expected 3 inputs but got 2 inputs for model 'repeat_int32'. Got input(s) ['IN','DELAY'], but missing required input(s) ['WAIT']. Please provide all required input(s)."},
		{"extra input", "repeat_int32", 0, with(func(in []core.Input) []core.Input {
			return append(in, core.NewInput("EXTRA", core.TypeInt32, []int64{1}, int32s(1)))
		}), nil, core.CodeInvalidArg,
			"[request id: <id_unknown>] expected 3 inputs but got 4 inputs for model 'repeat_int32'. Got input(s) ['IN','DELAY','WAIT','EXTRA'], but missing required input(s) ]. Please provide all required input(s)."},
		{"duplicate input", "repeat_int32", 0, with(func(in []core.Input) []core.Input { return append(in, in[0]) }), nil, core.CodeInvalidArg,
			"[request id: <id_unknown>] input 'IN' already exists in request"},
		{"wrong data type", "repeat_int32", 0, with(func(in []core.Input) []core.Input {
			in[0].DataType = core.TypeFP32
			return in
		}), nil, core.CodeInvalidArg, "[request id: <id_unknown>] inference input 'IN' data-type is 'FP32', but model 'repeat_int32' expects 'INT32'"},
		{"wrong rank", "repeat_int32", 0, with(func(in []core.Input) []core.Input {
			in[2].Shape = []int64{1, 1}
			return in
		}), nil, core.CodeInvalidArg, "[request id: <id_unknown>] unexpected shape for input 'WAIT' for model 'repeat_int32'. Expected [1], got [1,1]. "},
		{"fixed dim mismatch", "repeat_int32", 0, with(func(in []core.Input) []core.Input {
			in[2] = core.NewInput("WAIT", core.TypeUint32, []int64{2}, uint32s(1, 2))
			return in
		}), nil, core.CodeInvalidArg, "[request id: <id_unknown>] unexpected shape for input 'WAIT' for model 'repeat_int32'. Expected [1], got [2]. "},
		{"byte size mismatch", "repeat_int32", 0, with(func(in []core.Input) []core.Input {
			in[0].Buffers = [][]byte{int32s(1, 2, 3)}
			return in
		}), nil, core.CodeInvalidArg, "[request id: <id_unknown>] input byte size mismatch for input 'IN' for model 'repeat_int32'. Expected 8, got 12"},
		{"negative dimension", "repeat_int32", 0, with(func(in []core.Input) []core.Input {
			in[0].Shape = []int64{-2}
			return in
		}), nil, core.CodeInvalidArg, "[request id: <id_unknown>] unexpected shape for input 'IN' for model 'repeat_int32'. Expected [-1], got [-2]. "},
		{"unknown requested output", "repeat_int32", 0, good(), []string{"NOPE"}, core.CodeInvalidArg, "unexpected inference output 'NOPE' for model 'repeat_int32'"},
		{"batch too large", "identity_fp32", 0, []core.Input{core.NewInput("INPUT0", core.TypeFP32, []int64{9, 1}, float32s(make([]float32, 9)...))},
			nil, core.CodeInvalidArg, "[request id: <id_unknown>] inference request batch-size must be <= 8 for 'identity_fp32'"},
		{"missing batch dimension", "identity_fp32", 0, []core.Input{core.NewInput("INPUT0", core.TypeFP32, []int64{}, float32s(1))},
			nil, core.CodeInvalidArg, "[request id: <id_unknown>] input 'INPUT0' has no shape but model requires batch dimension for 'identity_fp32'"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := srv.Infer(context.Background(), &core.Submission{Model: tc.model, Version: tc.ver, Inputs: tc.inputs, Outputs: tc.outs},
				func(*core.Response, bool) { t.Error("the response function must not be called for a rejected request") })
			if err == nil {
				t.Fatal("Infer accepted a bad request")
			}
			if got := core.CodeOf(err); got != tc.code {
				t.Errorf("code = %v, want %v (%v)", got, tc.code, err)
			}
			if err.Error() != tc.want {
				t.Errorf("message %q\nwant    %q", err, tc.want)
			}
		})
	}
	// Nothing was disturbed: a good request still works.
	if events := infer(t, srv, &core.Submission{Model: "repeat_int32", Inputs: good()}); len(events) != 3 {
		t.Fatalf("good request after bad ones: got %d events, want 2 responses and a final", len(events))
	}
}
