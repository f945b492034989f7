package abi_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// addsubConfig is a model served by the addsub backend: INPUT0, INPUT1,
// OUTPUT0 and OUTPUT1, all of data type dt and dims dims.
func addsubConfig(name, dt string, maxBatch int, dims, extra string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "name: %q\nbackend: \"addsub\"\nmax_batch_size: %d\n", name, maxBatch)
	for _, io := range []struct{ kind, name string }{
		{"input", "INPUT0"}, {"input", "INPUT1"}, {"output", "OUTPUT0"}, {"output", "OUTPUT1"},
	} {
		fmt.Fprintf(&b, "%s [ { name: %q data_type: %s dims: %s } ]\n", io.kind, io.name, dt, dims)
	}
	b.WriteString(extra)
	return b.String()
}

// addsubOperands returns n distinctive values for INPUT0 and INPUT1; seed
// makes requests differ. INT32 values include the wrap-around at the edges
// of int32; FP32 values are exact in binary so sums compare with ==.
func addsubOperands(dt core.DataType, n, seed int) (a, b []byte) {
	if dt == core.TypeFP32 {
		x, y := make([]float32, n), make([]float32, n)
		for i := range n {
			x[i] = float32(i+seed)*0.5 - 3
			y[i] = 1.25 - float32(i*seed)
		}
		return float32s(x...), float32s(y...)
	}
	x, y := make([]int32, n), make([]int32, n)
	for i := range n {
		x[i] = int32(i*7 - 20 + 100*seed)
		y[i] = int32(3 - i*seed)
	}
	x[0], y[0] = math.MaxInt32, 1 // wraps to MinInt32 in OUTPUT0
	return int32s(x...), int32s(y...)
}

// addsubWant computes OUTPUT0 (sub false) or OUTPUT1 (sub true) the way the
// backend should, from the raw operands.
func addsubWant(dt core.DataType, a, b []byte, sub bool) []byte {
	out := make([]byte, len(a))
	for i := 0; i+4 <= len(a); i += 4 {
		x, y := binary.LittleEndian.Uint32(a[i:]), binary.LittleEndian.Uint32(b[i:])
		var r uint32
		switch {
		case dt == core.TypeFP32 && sub:
			r = math.Float32bits(math.Float32frombits(x) - math.Float32frombits(y))
		case dt == core.TypeFP32:
			r = math.Float32bits(math.Float32frombits(x) + math.Float32frombits(y))
		case sub:
			r = x - y // two's complement wrap, as int32 in the backend
		default:
			r = x + y
		}
		binary.LittleEndian.PutUint32(out[i:], r)
	}
	return out
}

// addsubRequest is one request with fresh operands of the given shape.
func addsubRequest(model string, dt core.DataType, shape []int64, seed int, outputs ...string) (*core.Submission, []byte, []byte) {
	a, b := addsubOperands(dt, int(core.ElementCount(shape)), seed)
	return &core.Submission{Model: model, ID: fmt.Sprint("req", seed), Outputs: outputs, Inputs: []core.Input{
		core.NewInput("INPUT0", dt, shape, a), core.NewInput("INPUT1", dt, shape, b),
	}}, a, b
}

// checkAddsubResponse checks that events hold one successful final response
// with exactly the wanted outputs, each of shape and the right values. It
// reports with t.Errorf only, so any goroutine may call it.
func checkAddsubResponse(t *testing.T, events []event, dt core.DataType, shape []int64, a, b []byte, want ...string) {
	t.Helper()
	if len(events) != 1 || !events[0].final || events[0].resp == nil || events[0].resp.Err != nil {
		t.Errorf("want one successful final response, got %+v", events)
		return
	}
	outs := map[string]core.Output{}
	var names []string
	for _, o := range events[0].resp.Outputs {
		outs[o.Name] = o
		names = append(names, o.Name)
	}
	if !slices.Equal(slices.Sorted(slices.Values(names)), slices.Sorted(slices.Values(want))) {
		t.Errorf("outputs %v, want %v", names, want)
		return
	}
	for _, name := range want {
		o := outs[name]
		if o.DataType != dt || !slices.Equal(o.Shape, shape) {
			t.Errorf("%s: %s %v, want %s %v", name, o.DataType, o.Shape, dt, shape)
		}
		if w := addsubWant(dt, a, b, name == "OUTPUT1"); !slices.Equal(o.Data, w) {
			t.Errorf("%s = %x, want %x", name, o.Data, w)
		}
	}
}

func TestAddSubComputesSumsAndDifferences(t *testing.T) {
	t.Parallel()
	repo := testenv.Repository(t,
		testenv.Model{Name: "int32", Config: addsubConfig("int32", "TYPE_INT32", 8, "[ 16 ]", "")},
		testenv.Model{Name: "fp32", Config: addsubConfig("fp32", "TYPE_FP32", 8, "[ 16 ]", "")},
		testenv.Model{Name: "unbatched", Config: addsubConfig("unbatched", "TYPE_INT32", 0, "[ -1 ]", "")},
	)
	srv := startServer(t, repo)
	for _, tc := range []struct {
		model string
		dt    core.DataType
		shape []int64
	}{
		{"int32", core.TypeInt32, []int64{1, 16}},
		{"int32", core.TypeInt32, []int64{3, 16}},
		{"fp32", core.TypeFP32, []int64{1, 16}},
		{"fp32", core.TypeFP32, []int64{3, 16}},
		{"unbatched", core.TypeInt32, []int64{5}},
	} {
		t.Run(fmt.Sprintf("%s%v", tc.model, tc.shape), func(t *testing.T) {
			req, a, b := addsubRequest(tc.model, tc.dt, tc.shape, 1)
			checkAddsubResponse(t, infer(t, srv, req), tc.dt, tc.shape, a, b, "OUTPUT0", "OUTPUT1")
		})
	}
	// A tensor split over several buffers is read whole.
	t.Run("split_buffers", func(t *testing.T) {
		req, a, b := addsubRequest("int32", core.TypeInt32, []int64{2, 16}, 2)
		req.Inputs[0].Buffers = [][]byte{a[:20], a[20:100], a[100:]}
		checkAddsubResponse(t, infer(t, srv, req), core.TypeInt32, []int64{2, 16}, a, b, "OUTPUT0", "OUTPUT1")
	})
}

func TestAddSubReturnsOnlyRequestedOutputs(t *testing.T) {
	t.Parallel()
	srv := startServer(t, testenv.Repository(t,
		testenv.Model{Name: "int32", Config: addsubConfig("int32", "TYPE_INT32", 8, "[ 16 ]", "")}))
	for _, tc := range []struct {
		requested, want []string
	}{
		{nil, []string{"OUTPUT0", "OUTPUT1"}},
		{[]string{"OUTPUT0"}, []string{"OUTPUT0"}},
		{[]string{"OUTPUT1"}, []string{"OUTPUT1"}},
		{[]string{"OUTPUT1", "OUTPUT0"}, []string{"OUTPUT0", "OUTPUT1"}},
	} {
		t.Run(fmt.Sprint(tc.requested), func(t *testing.T) {
			req, a, b := addsubRequest("int32", core.TypeInt32, []int64{2, 16}, 3, tc.requested...)
			checkAddsubResponse(t, infer(t, srv, req), core.TypeInt32, []int64{2, 16}, a, b, tc.want...)
		})
	}
}

// statistics returns the statistics of version 1 of model.
func statistics(t *testing.T, srv *testServer, model string) core.ModelStatistics {
	t.Helper()
	st, err := srv.Statistics(model, 1)
	if err != nil || len(st) != 1 {
		t.Fatalf("Statistics(%s): %v %v", model, st, err)
	}
	return st[0]
}

// inferAll sends every request at once and returns each one's events.
func inferAll(t *testing.T, srv *testServer, reqs []*core.Submission) [][]event {
	t.Helper()
	collectors := make([]*collector, len(reqs))
	for i, req := range reqs {
		collectors[i] = newCollector()
		if err := srv.Infer(context.Background(), req, collectors[i].fn); err != nil {
			t.Fatalf("Infer(%s): %v", req.ID, err)
		}
	}
	events := make([][]event, len(reqs))
	for i, c := range collectors {
		events[i] = c.wait(t)
	}
	return events
}

func TestAddSubDynamicBatchGivesEachRequestItsOwnRows(t *testing.T) {
	t.Parallel()
	// The batch goes once the queue holds 6 rows; the long delay makes
	// anything else (an execution per request) show up in the statistics.
	const batching = `dynamic_batching { preferred_batch_size: [ 6 ] max_queue_delay_microseconds: 20000000 }
instance_group [ { count: 1 kind: KIND_CPU } ]
`
	for _, tc := range []struct {
		dt  core.DataType
		cfg string
	}{{core.TypeInt32, "TYPE_INT32"}, {core.TypeFP32, "TYPE_FP32"}} {
		t.Run(tc.cfg, func(t *testing.T) {
			srv := startServer(t, testenv.Repository(t,
				testenv.Model{Name: "batched", Config: addsubConfig("batched", tc.cfg, 8, "[ 16 ]", batching)}))
			var reqs []*core.Submission
			var as, bs [][]byte
			for i, rows := range []int64{1, 2, 3} {
				req, a, b := addsubRequest("batched", tc.dt, []int64{rows, 16}, i+1)
				reqs, as, bs = append(reqs, req), append(as, a), append(bs, b)
			}
			for i, events := range inferAll(t, srv, reqs) {
				checkAddsubResponse(t, events, tc.dt, reqs[i].Inputs[0].Shape, as[i], bs[i], "OUTPUT0", "OUTPUT1")
			}
			// Statistics are reported before the responses are sent.
			st := statistics(t, srv, "batched")
			if st.ExecutionCount != 1 || st.InferenceCount != 6 || st.Inference.Success.Count != 3 ||
				len(st.Batches) != 1 || st.Batches[0].BatchSize != 6 {
				t.Errorf("want one execution of a batch of 6 from 3 requests, got %+v", st)
			}
		})
	}
}

func TestAddSubFailsOnlyTheBadRequestOfABatch(t *testing.T) {
	t.Parallel()
	// Ragged inputs may differ in shape between the requests of a batch,
	// so a request whose INPUT0 and INPUT1 disagree can join a good one.
	cfg := `name: "ragged"
backend: "addsub"
max_batch_size: 8
dynamic_batching { preferred_batch_size: [ 2 ] max_queue_delay_microseconds: 20000000 }
instance_group [ { count: 1 kind: KIND_CPU } ]
input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ -1 ] allow_ragged_batch: true },
        { name: "INPUT1" data_type: TYPE_INT32 dims: [ -1 ] allow_ragged_batch: true } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ -1 ] },
         { name: "OUTPUT1" data_type: TYPE_INT32 dims: [ -1 ] } ]
`
	srv := startServer(t, testenv.Repository(t, testenv.Model{Name: "ragged", Config: cfg}))
	good, a, b := addsubRequest("ragged", core.TypeInt32, []int64{1, 4}, 1)
	bad, _, _ := addsubRequest("ragged", core.TypeInt32, []int64{1, 3}, 2)
	bad.Inputs[1] = core.NewInput("INPUT1", core.TypeInt32, []int64{1, 5}, int32s(1, 2, 3, 4, 5))
	events := inferAll(t, srv, []*core.Submission{bad, good})

	if len(events[0]) != 1 || !events[0][0].final || events[0][0].resp == nil {
		t.Fatalf("bad request: want one final response, got %+v", events[0])
	}
	err := events[0][0].resp.Err
	if core.CodeOf(err) != core.CodeInvalidArg || err == nil ||
		!strings.Contains(err.Error(), "INPUT0 shape [1,3] and INPUT1 shape [1,5] differ") {
		t.Errorf("bad request: error %v, want INVALID_ARG about the differing shapes", err)
	}
	checkAddsubResponse(t, events[1], core.TypeInt32, []int64{1, 4}, a, b, "OUTPUT0", "OUTPUT1")

	st := statistics(t, srv, "ragged")
	if st.ExecutionCount != 1 || st.Inference.Success.Count != 1 || st.Inference.Fail.Count != 1 ||
		st.InferenceCount != 1 || len(st.Batches) != 1 || st.Batches[0].BatchSize != 1 {
		t.Errorf("want one execution with one success (batch 1) and one failure, got %+v", st)
	}
}

func TestAddSubRefusesBadConfigsAtLoad(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, config string
		want         []string
	}{
		{"mixed_types", strings.Replace(addsubConfig("mixed_types", "TYPE_INT32", 8, "[ 16 ]", ""),
			`"INPUT1" data_type: TYPE_INT32`, `"INPUT1" data_type: TYPE_FP32`, 1),
			[]string{"'input[1].data_type'", "TYPE_FP32", "TYPE_INT32"}},
		{"missing_input", strings.Replace(addsubConfig("missing_input", "TYPE_INT32", 8, "[ 16 ]", ""),
			`input [ { name: "INPUT1" data_type: TYPE_INT32 dims: [ 16 ] } ]`, "", 1),
			[]string{"'input'", "has no INPUT1"}},
		{"int64", addsubConfig("int64", "TYPE_INT64", 8, "[ 16 ]", ""),
			[]string{"'input[0].data_type'", "TYPE_INT64", "TYPE_INT8, TYPE_INT32, TYPE_FP32 and TYPE_STRING"}},
		{"dims_differ", strings.Replace(addsubConfig("dims_differ", "TYPE_FP32", 8, "[ 16 ]", ""),
			`"OUTPUT1" data_type: TYPE_FP32 dims: [ 16 ]`, `"OUTPUT1" data_type: TYPE_FP32 dims: [ 8 ]`, 1),
			[]string{"'output[1].dims'", "[8]", "[16]"}},
		{"extra_input", addsubConfig("extra_input", "TYPE_INT32", 0, "[ 16 ]",
			`input [ { name: "INPUT2" data_type: TYPE_INT32 dims: [ 16 ] } ]`),
			[]string{"'input'", "has 3 entries"}},
		{"decoupled", addsubConfig("decoupled", "TYPE_INT32", 0, "[ 16 ]",
			"model_transaction_policy { decoupled: true }\n"),
			[]string{"'model_transaction_policy.decoupled'"}},
	}
	models := []testenv.Model{{Name: "good", Config: addsubConfig("good", "TYPE_INT32", 0, "[ 16 ]", "")}}
	for _, tc := range tests {
		models = append(models, testenv.Model{Name: tc.name, Config: tc.config})
	}
	srv := startServer(t, testenv.Repository(t, models...))

	index := map[string]core.VersionStatus{}
	for _, st := range srv.RepositoryIndex() {
		index[st.Name] = st
	}
	if st := index["good"]; st.Readiness != core.ModelReady {
		t.Errorf("good: state %v (%s), want READY", st.Readiness, st.Reason)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := index[tc.name]
			if st.Readiness != core.ModelUnavailable {
				t.Fatalf("state %v, want UNAVAILABLE", st.Readiness)
			}
			for _, w := range append([]string{"addsub backend: model '" + tc.name + "'", "configuration field"}, tc.want...) {
				if !strings.Contains(st.Reason, w) {
					t.Errorf("reason %q does not mention %q", st.Reason, w)
				}
			}
		})
	}
}

// The addsub backend keeps no state between executions, so instances of
// one model may run at once; each request must still get its own rows.
func TestAddSubConcurrentInstancesKeepRequestsApart(t *testing.T) {
	t.Parallel()
	cfg := addsubConfig("many", "TYPE_FP32", 8, "[ 16 ]", "instance_group [ { count: 4 kind: KIND_CPU } ]\n")
	srv := startServer(t, testenv.Repository(t, testenv.Model{Name: "many", Config: cfg}))
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 10 {
				shape := []int64{int64(1 + (g+i)%4), 16}
				req, a, b := addsubRequest("many", core.TypeFP32, shape, 10*g+i)
				c := newCollector()
				if err := srv.Infer(context.Background(), req, c.fn); err != nil {
					t.Errorf("Infer(%s): %v", req.ID, err)
					return
				}
				select {
				case <-c.done:
				case <-time.After(20 * time.Second):
					t.Errorf("%s: timed out waiting for the final response", req.ID)
					return
				}
				c.mu.Lock()
				events := append([]event(nil), c.events...)
				c.mu.Unlock()
				checkAddsubResponse(t, events, core.TypeFP32, shape, a, b, "OUTPUT0", "OUTPUT1")
			}
		})
	}
	wg.Wait()
	if st := statistics(t, srv, "many"); st.Inference.Success.Count != 80 || st.Inference.Fail.Count != 0 {
		t.Errorf("want 80 successful requests, got %+v", st.Inference)
	}
}

// bytesOf encodes strings as BYTES contents.
func bytesOf(elems ...string) []byte {
	var b [][]byte
	for _, e := range elems {
		b = append(b, []byte(e))
	}
	return core.EncodeBytes(b...)
}

// TestAddSubComputesInt8AndStrings: TYPE_INT8 wraps as int8 does;
// TYPE_STRING elements are the decimal text of int64 values, and so are
// the outputs, wrapping as int64 does.
func TestAddSubComputesInt8AndStrings(t *testing.T) {
	t.Parallel()
	srv := startServer(t, testenv.Repository(t,
		testenv.Model{Name: "int8", Config: addsubConfig("int8", "TYPE_INT8", 8, "[ 4 ]", "")},
		testenv.Model{Name: "string", Config: addsubConfig("string", "TYPE_STRING", 8, "[ 4 ]", "")},
		testenv.Model{Name: "string_unbatched", Config: addsubConfig("string_unbatched", "TYPE_STRING", 0, "[ -1 ]", "")},
	))
	i8 := func(vs ...int8) []byte {
		b := make([]byte, len(vs))
		for i, v := range vs {
			b[i] = byte(v)
		}
		return b
	}
	for _, tc := range []struct {
		model           string
		dt              core.DataType
		shape           []int64
		a, b, sum, diff []byte
	}{
		{"int8", core.TypeInt8, []int64{1, 4},
			i8(127, -128, 5, -1), i8(1, 1, -7, -1), i8(-128, -127, -2, -2), i8(126, 127, 12, 0)},
		{"int8", core.TypeInt8, []int64{2, 4},
			i8(0, 1, 2, 3, 4, 5, 6, 7), i8(1, 1, 1, 1, 1, 1, 1, 1), i8(1, 2, 3, 4, 5, 6, 7, 8), i8(-1, 0, 1, 2, 3, 4, 5, 6)},
		{"string", core.TypeBytes, []int64{1, 4},
			bytesOf("9223372036854775807", "-5", "0", "12"), bytesOf("1", "-7", "0", "-30"),
			bytesOf("-9223372036854775808", "-12", "0", "-18"), bytesOf("9223372036854775806", "2", "0", "42")},
		{"string", core.TypeBytes, []int64{2, 4},
			bytesOf("0", "1", "2", "3", "4", "5", "6", "7"), bytesOf("1", "1", "1", "1", "1", "1", "1", "1"),
			bytesOf("1", "2", "3", "4", "5", "6", "7", "8"), bytesOf("-1", "0", "1", "2", "3", "4", "5", "6")},
		{"string_unbatched", core.TypeBytes, []int64{2},
			bytesOf("-9223372036854775808", "40"), bytesOf("1", "2"), bytesOf("-9223372036854775807", "42"), bytesOf("9223372036854775807", "38")},
		{"string_unbatched", core.TypeBytes, []int64{0}, nil, nil, nil, nil},
	} {
		t.Run(fmt.Sprintf("%s%v", tc.model, tc.shape), func(t *testing.T) {
			req := &core.Submission{Model: tc.model, ID: "r", Inputs: []core.Input{
				core.NewInput("INPUT0", tc.dt, tc.shape, tc.a), core.NewInput("INPUT1", tc.dt, tc.shape, tc.b)}}
			events := infer(t, srv, req)
			if len(events) != 1 || events[0].resp == nil || events[0].resp.Err != nil {
				t.Fatalf("want one successful response, got %+v", events)
			}
			for name, want := range map[string][]byte{"OUTPUT0": tc.sum, "OUTPUT1": tc.diff} {
				o := output(t, events[0].resp, name)
				if o.DataType != tc.dt || !slices.Equal(o.Shape, tc.shape) || !slices.Equal(o.Data, want) {
					t.Errorf("%s: %s %v %q, want %s %v %q", name, o.DataType, o.Shape, o.Data, tc.dt, tc.shape, want)
				}
			}
		})
	}
}

// TestAddSubRefusesStringsThatAreNoNumbers: a TYPE_STRING element that is
// not the decimal text of an int64 fails its request with INVALID_ARG
// naming the input and the element; the model serves the next request.
func TestAddSubRefusesStringsThatAreNoNumbers(t *testing.T) {
	t.Parallel()
	srv := startServer(t, testenv.Repository(t,
		testenv.Model{Name: "string", Config: addsubConfig("string", "TYPE_STRING", 8, "[ 4 ]", "")}))
	good := bytesOf("1", "2", "3", "4")
	for _, tc := range []struct {
		name  string
		input []byte // INPUT1
		want  string
	}{
		{"letters", bytesOf("1", "one", "3", "4"), `input 'INPUT1' element 1 "one" is not a decimal integer in the range of int64`},
		{"empty", bytesOf("1", "2", "", "4"), `input 'INPUT1' element 2 "" is not a decimal integer`},
		{"past_int64", bytesOf("9223372036854775808", "2", "3", "4"), `input 'INPUT1' element 0 "9223372036854775808" is not a decimal integer in the range of int64`},
		{"space", bytesOf("1", "2", " 3", "4"), `input 'INPUT1' element 2 " 3" is not`},
		{"plus", bytesOf("1", "2", "3", "+4"), `input 'INPUT1' element 3 "+4" is not`},
		{"fraction", bytesOf("1.5", "2", "3", "4"), `input 'INPUT1' element 0 "1.5" is not`},
		{"nul", bytesOf("1", "2\x003", "3", "4"), `input 'INPUT1' element 1 "2\x003" is not`},
		{"long", bytesOf("1", "2", "3", strings.Repeat("x", 40)), `element 3 "` + strings.Repeat("x", 32) + `" (40 bytes) is not`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := &core.Submission{Model: "string", ID: tc.name, Inputs: []core.Input{
				core.NewInput("INPUT0", core.TypeBytes, []int64{1, 4}, good), core.NewInput("INPUT1", core.TypeBytes, []int64{1, 4}, tc.input)}}
			events := infer(t, srv, req)
			if len(events) != 1 || events[0].resp == nil {
				t.Fatalf("want one response, got %+v", events)
			}
			err := events[0].resp.Err
			if core.CodeOf(err) != core.CodeInvalidArg || err == nil || !strings.Contains(err.Error(), tc.want) ||
				!strings.Contains(err.Error(), "addsub backend: model 'string'") {
				t.Errorf("error %v, want INVALID_ARG saying %s", err, tc.want)
			}
		})
	}
	req := &core.Submission{Model: "string", ID: "after", Inputs: []core.Input{
		core.NewInput("INPUT0", core.TypeBytes, []int64{1, 4}, good), core.NewInput("INPUT1", core.TypeBytes, []int64{1, 4}, good)}}
	if events := infer(t, srv, req); len(events) != 1 || events[0].resp == nil || events[0].resp.Err != nil ||
		!slices.Equal(output(t, events[0].resp, "OUTPUT0").Data, bytesOf("2", "4", "6", "8")) {
		t.Errorf("a good request after the bad ones: %+v", events)
	}
}
