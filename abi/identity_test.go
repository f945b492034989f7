package abi_test

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// allTypes are the tensor types with their configuration names.
var allTypes = []struct {
	dt  core.DataType
	cfg string
}{
	{core.TypeBool, "TYPE_BOOL"}, {core.TypeUint8, "TYPE_UINT8"}, {core.TypeUint16, "TYPE_UINT16"},
	{core.TypeUint32, "TYPE_UINT32"}, {core.TypeUint64, "TYPE_UINT64"}, {core.TypeInt8, "TYPE_INT8"},
	{core.TypeInt16, "TYPE_INT16"}, {core.TypeInt32, "TYPE_INT32"}, {core.TypeInt64, "TYPE_INT64"},
	{core.TypeFP16, "TYPE_FP16"}, {core.TypeFP32, "TYPE_FP32"}, {core.TypeFP64, "TYPE_FP64"},
	{core.TypeBytes, "TYPE_STRING"}, {core.TypeBF16, "TYPE_BF16"},
}

// identityConfig has one optional INPUTn/OUTPUTn pair per type.
func identityConfig(name string, maxBatch int, extra string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "name: %q\nbackend: \"identity\"\nmax_batch_size: %d\n", name, maxBatch)
	for i, ty := range allTypes {
		fmt.Fprintf(&b, "input [ { name: \"INPUT%d\" data_type: %s dims: [ -1 ] optional: true } ]\n", i, ty.cfg)
		fmt.Fprintf(&b, "output [ { name: \"OUTPUT%d\" data_type: %s dims: [ -1 ] } ]\n", i, ty.cfg)
	}
	b.WriteString(extra)
	return b.String()
}

// vectorIdentityConfig is an identity model of one vector, INPUT0 to
// OUTPUT0, of type dt (a configuration name), one request per execution.
func vectorIdentityConfig(name, dt string) string {
	return fmt.Sprintf("name: %q\nbackend: \"identity\"\nmax_batch_size: 0\n"+
		"input [ { name: \"INPUT0\" data_type: %s dims: [ -1 ] } ]\n"+
		"output [ { name: \"OUTPUT0\" data_type: %s dims: [ -1 ] } ]\n", name, dt, dt)
}

// sample returns distinctive contents for n elements of a type.
func sample(dt core.DataType, n int) []byte {
	if dt == core.TypeBytes {
		elems := make([][]byte, n)
		for i := range elems {
			elems[i] = []byte(strings.Repeat("x", i) + "\x00\xff")
		}
		return core.EncodeBytes(elems...)
	}
	out := make([]byte, n*dt.ByteSize())
	for i := range out {
		out[i] = byte(i*37 + int(dt))
	}
	if dt == core.TypeBool {
		for i := range out {
			out[i] &= 1
		}
	}
	return out
}

func TestIdentityCopiesEveryDataType(t *testing.T) {
	t.Parallel()
	srv := startServer(t, testenv.Repository(t, testenv.Model{Name: "all", Config: identityConfig("all", 0, "")}))
	req := &core.Submission{Model: "all"}
	for i, ty := range allTypes {
		req.Inputs = append(req.Inputs, core.NewInput(fmt.Sprintf("INPUT%d", i), ty.dt, []int64{5}, sample(ty.dt, 5)))
	}
	events := infer(t, srv, req)
	if len(events) != 1 || events[0].resp == nil || events[0].resp.Err != nil {
		t.Fatalf("events %+v", events)
	}
	for i, ty := range allTypes {
		out := output(t, events[0].resp, fmt.Sprintf("OUTPUT%d", i))
		if out.DataType != ty.dt || !slices.Equal(out.Shape, []int64{5}) || !bytes.Equal(out.Data, sample(ty.dt, 5)) {
			t.Errorf("OUTPUT%d (%s): %s %v %x", i, ty.dt, out.DataType, out.Shape, out.Data)
		}
	}
}

func TestIdentityWithOptionalInputs(t *testing.T) {
	t.Parallel()
	srv := startServer(t, testenv.Repository(t, testenv.Model{Name: "all", Config: identityConfig("all", 0, "")}))
	// Optional inputs may be left out; the client then names the outputs it
	// wants, as with Triton's identity (a request naming no outputs asks for
	// all of them, and an output needs its input).
	events := infer(t, srv, &core.Submission{Model: "all", Outputs: []string{"OUTPUT7"},
		Inputs: []core.Input{core.NewInput("INPUT7", core.TypeInt32, []int64{2}, int32s(3, 4))}})
	if r := events[0].resp; r.Err != nil || len(r.Outputs) != 1 || r.Outputs[0].Name != "OUTPUT7" {
		t.Errorf("response %+v, want OUTPUT7 only", r)
	}
	events = infer(t, srv, &core.Submission{Model: "all",
		Inputs: []core.Input{core.NewInput("INPUT7", core.TypeInt32, []int64{2}, int32s(3, 4))}})
	if err := events[0].resp.Err; core.CodeOf(err) != core.CodeUnsupported || !strings.Contains(err.Error(), "failed to get input 'INPUT0'") {
		t.Errorf("all outputs requested without their inputs: %v, want UNSUPPORTED about INPUT0", err)
	}
	// Requested outputs: only those come back.
	events = infer(t, srv, &core.Submission{Model: "all", Outputs: []string{"OUTPUT10"}, Inputs: []core.Input{
		core.NewInput("INPUT7", core.TypeInt32, []int64{1}, int32s(3)),
		core.NewInput("INPUT10", core.TypeFP32, []int64{1}, float32s(2.5)),
	}})
	if len(events[0].resp.Outputs) != 1 || events[0].resp.Outputs[0].Name != "OUTPUT10" {
		t.Errorf("requested OUTPUT10 only, got %+v", events[0].resp.Outputs)
	}
}

func TestIdentityBatches(t *testing.T) {
	t.Parallel()
	cfg := identityConfig("batched", 8, `dynamic_batching { max_queue_delay_microseconds: 200000 preferred_batch_size: [ 6 ] }
instance_group [ { count: 1 kind: KIND_CPU } ]
`)
	srv := startServer(t, testenv.Repository(t, testenv.Model{Name: "batched", Config: cfg}))
	// Three requests of batch 2 arrive together and run as one batch of 6;
	// each gets its own rows back.
	var wg sync.WaitGroup
	for k := range 3 {
		wg.Go(func() {
			data := int32s(int32(10*k), int32(10*k+1), int32(10*k+2), int32(10*k+3))
			events := infer(t, srv, &core.Submission{Model: "batched", ID: fmt.Sprint(k), Outputs: []string{"OUTPUT7"},
				Inputs: []core.Input{core.NewInput("INPUT7", core.TypeInt32, []int64{2, 2}, data)}})
			out := output(t, events[0].resp, "OUTPUT7")
			if !slices.Equal(out.Shape, []int64{2, 2}) || !bytes.Equal(out.Data, data) {
				t.Errorf("request %d: OUTPUT7 %v %v", k, out.Shape, out.Data)
			}
		})
	}
	wg.Wait()
	var stats []core.ModelStatistics
	if !testenv.Eventually(func() bool {
		stats, _ = srv.Statistics("batched", 1)
		// The backend reports the batch after the requests' own figures.
		return len(stats) == 1 && stats[0].InferenceCount == 6 && stats[0].ExecutionCount > 0
	}) {
		t.Errorf("gave up waiting for batch statistics: %+v", stats)
	}
	if b := stats[0].Batches; len(b) != 1 || b[0].BatchSize != 6 || stats[0].ExecutionCount != 1 {
		t.Errorf("executions %d, batches %+v: want one execution of batch size 6", stats[0].ExecutionCount, b)
	}
}

func TestIdentityExecuteDelay(t *testing.T) {
	t.Parallel()
	cfg := identityConfig("slow", 0, `parameters [{ key: "execute_delay_ms" value: { string_value: "40" } }]
`)
	srv := startServer(t, testenv.Repository(t, testenv.Model{Name: "slow", Config: cfg}))
	infer(t, srv, &core.Submission{Model: "slow", Outputs: []string{"OUTPUT7"}, Inputs: []core.Input{core.NewInput("INPUT7", core.TypeInt32, []int64{1}, int32s(1))}})
	var stats []core.ModelStatistics
	if !testenv.Eventually(func() bool {
		stats, _ = srv.Statistics("slow", 1)
		return len(stats) == 1 && stats[0].ExecutionCount == 1
	}) {
		t.Errorf("gave up waiting for statistics: %+v", stats)
	}
	// As in Triton's identity, the delay comes before the execution's
	// timestamps, so it counts as queue time.
	if ns := stats[0].Inference.Queue.Ns; ns < uint64(40*time.Millisecond) {
		t.Errorf("queue time %v, want at least the 40 ms execute_delay_ms", time.Duration(ns))
	}
}

func TestIdentityAttachesExampleParameters(t *testing.T) {
	t.Parallel()
	srv := startServer(t, testenv.Repository(t, testenv.Model{Name: "all", Config: identityConfig("all", 0, "")}))
	events := infer(t, srv, &core.Submission{Model: "all", Outputs: []string{"OUTPUT7"},
		Inputs: []core.Input{core.NewInput("INPUT7", core.TypeInt32, []int64{1}, int32s(1))}})
	want := []core.Parameter{
		core.StringParam("param0", "an example string parameter"), core.IntParam("param1", 42), core.BoolParam("param2", false),
	}
	if got := events[0].resp.Parameters; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("parameters %+v, want %+v", got, want)
	}
}

// The request and batch statistics identity reports during Execute reach
// the model's statistics with the request's release and Execute's return,
// not with a crossing of their own: an inline request finds them recorded
// as Infer returns, without waiting.
func TestIdentityStatisticsRecordedByTheEndOfExecute(t *testing.T) {
	t.Parallel()
	srv := startServer(t, testenv.Repository(t, testenv.Model{Name: "plain", Config: identityConfig("plain", 0, "")}))
	for n := 1; n <= 3; n++ {
		c := newCollector()
		req := &core.Submission{Model: "plain", Inline: true, Outputs: []string{"OUTPUT7"},
			Inputs: []core.Input{core.NewInput("INPUT7", core.TypeInt32, []int64{1}, int32s(1))}}
		if err := srv.Infer(context.Background(), req, c.fn); err != nil {
			t.Fatalf("Infer: %v", err)
		}
		st := statistics(t, srv, "plain")
		if st.ExecutionCount != uint64(n) || st.Inference.Success.Count != uint64(n) ||
			len(st.Batches) != 1 || st.Batches[0].BatchSize != 1 || st.Batches[0].ComputeInfer.Count != uint64(n) {
			t.Errorf("after request %d: executions %d, successes %d, batches %+v; want %d of each, batch size 1",
				n, st.ExecutionCount, st.Inference.Success.Count, st.Batches, n)
		}
		c.wait(t)
	}
}

// TestIdentityInputsCopiedOrPinned sends inputs whose buffers lie on both
// sides of the size below which the request block holds a copy of a
// buffer rather than the buffer itself, pinned, and in several buffers
// mixing the two: the backend reads the same bytes either way.
func TestIdentityInputsCopiedOrPinned(t *testing.T) {
	t.Parallel()
	srv := startServer(t, testenv.Repository(t, testenv.Model{Name: "bytes", Config: vectorIdentityConfig("bytes", "TYPE_UINT8")}))
	for _, tc := range []struct {
		name  string
		sizes []int // the input's buffers, in bytes
	}{
		{"one byte", []int{1}},
		{"copied at most", []int{256}},
		{"pinned at least", []int{257}},
		{"large", []int{1 << 20}},
		{"mixed", []int{3, 300, 256, 0, 257, 1}},
		{"many small", []int{100, 100, 100, 100, 100}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var want []byte
			in := core.Input{Name: "INPUT0", DataType: core.TypeUint8}
			for k, n := range tc.sizes {
				b := make([]byte, n)
				for i := range b {
					b[i] = byte(i*31 + k*7 + 1)
				}
				in.Buffers = append(in.Buffers, b)
				want = append(want, b...)
			}
			in.Shape = []int64{int64(len(want))}
			events := infer(t, srv, &core.Submission{Model: "bytes", Inputs: []core.Input{in}})
			if len(events) != 1 || events[0].resp == nil || events[0].resp.Err != nil {
				t.Fatalf("events %+v, error %v", events, events[0].resp.Err)
			}
			if out := output(t, events[0].resp, "OUTPUT0"); !bytes.Equal(out.Data, want) {
				t.Errorf("%d bytes in %v buffers came back as %d bytes, differing", len(want), tc.sizes, len(out.Data))
			}
		})
	}
}

// TestIdentityRequestAllocations holds an in-process request to the C
// identity backend, its response lent and freed by the caller as a
// frontend does, to the Go allocations it makes now (6; BenchmarkIdentityRequest
// reports them too). A change that adds one on this path, such as an
// out-parameter passed to C that makes Go move a variable to the heap,
// fails here.
func TestIdentityRequestAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector drops pooled objects at random, so allocations are not counted (the run without it counts them)")
	}
	srv := startServer(t, testenv.Repository(t, testenv.Model{Name: "ints", Config: vectorIdentityConfig("ints", "TYPE_INT32")}))
	data := int32s(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16)
	done := make(chan struct{}, 1)
	fn := func(resp *core.Response, final bool) {
		resp.Free()
		if final {
			done <- struct{}{}
		}
	}
	infer := func() {
		req := &core.Submission{Model: "ints", FreesResponses: true,
			Inputs: []core.Input{core.NewInput("INPUT0", core.TypeInt32, []int64{16}, data)}}
		if err := srv.Infer(context.Background(), req, fn); err != nil {
			t.Fatal(err)
		}
		<-done
	}
	for range 100 { // pools filled, tables grown
		infer()
	}
	const want = 6
	if got := testing.AllocsPerRun(500, infer); got > want {
		t.Errorf("%v allocations per identity request, want at most %d", got, want)
	}
}
