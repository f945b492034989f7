package abi

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/scheduling"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// blockProvider serves the model of TestRequestBlockLayoutChecksItsEnd:
// its instance hands every request it executes to check, then answers it.
type blockProvider struct{ check func(*core.Request) }

func (p blockProvider) LoadModel(*core.Model) (core.BackendModel, error) { return p, nil }
func (blockProvider) Close() error                                       { return nil }
func (p blockProvider) NewInstance(*core.Instance) (core.BackendInstance, error) {
	return p, nil
}
func (blockProvider) ParallelInstanceLoading() bool { return false }
func (blockProvider) Finalize() error               { return nil }
func (p blockProvider) Execute(batch []*core.Request) error {
	for _, r := range batch {
		p.check(r)
		_ = r.Responder().Send(&core.Response{}, true)
		_ = r.Release(core.ReleaseAll)
	}
	return nil
}

// switchTracer traces requests while on is set.
type switchTracer struct{ on atomic.Bool }

func (s *switchTracer) Sample(string, int64) bool { return s.on.Load() }
func (*switchTracer) Finish(*core.Trace)          {}

const blockConfig = `name: "blocks"
backend: "go"
input [ { name: "A" data_type: TYPE_INT32 dims: [ -1 ] }, { name: "BEE" data_type: TYPE_FP32 dims: [ 2, 2 ] } ]
output [ { name: "X" data_type: TYPE_INT32 dims: [ -1 ] }, { name: "WHY" data_type: TYPE_FP32 dims: [ 2, 2 ] } ]
`

// TestRequestBlockLayoutChecksItsEnd lays out real requests of every shape
// the block holds (ids, string correlation ids, inputs of several buffers,
// requested outputs, parameters of every type, a trace) in an allocation
// of the size the size pass gives, and of sizes that miss or add bytes, as
// a field sized in one pass and not the other would: the exact size lays
// out with no byte to spare, and every other one fails with an INTERNAL
// error naming the request, before a byte is written past the end.
func TestRequestBlockLayoutChecksItsEnd(t *testing.T) {
	tracer := &switchTracer{}
	var checked atomic.Int32
	check := func(r *core.Request) {
		checked.Add(1)
		size := requestBlockSize(r, blockTraceContext(r))
		for _, tc := range []struct {
			name string
			end  uintptr
			want string // "" for success
		}{
			{"exact", size, ""},
			{"one field short", size - 8, "bytes wanted at offset"},
			{"nothing", 0, "bytes wanted at offset 0 of 0"},
			{"one field too many", size + 8, "bytes sized"},
		} {
			// Go memory with room past end, so that nothing the layout does
			// can touch memory it does not own even if the check failed.
			mem := make([]uint64, size/8+16)
			const guard = 0x5a5a5a5a5a5a5a5a
			for i := range mem {
				mem[i] = guard
			}
			clear(mem[:tc.end/8])
			st := &heldRequest{}
			err := st.layBlock(unsafe.Pointer(&mem[0]), tc.end, r, &instanceHandle{}, blockTraceContext(r))
			st.pinner.Unpin()
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("request %q, %s: %v", r.ID(), tc.name, err)
			case tc.want != "" && (!errors.Is(err, errBlockLayout) || core.CodeOf(err) != core.CodeInternal ||
				!strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), `request "`+r.ID()+`" for model "blocks"`)):
				t.Errorf("request %q, %s: error %v, want INTERNAL %q", r.ID(), tc.name, err, tc.want)
			}
			for i := tc.end / 8; i < uintptr(len(mem)); i++ {
				if mem[i] != guard {
					t.Errorf("request %q, %s: word %d past the end (%d bytes) was written", r.ID(), tc.name, i, tc.end)
					break
				}
			}
		}
	}
	repo := testenv.Repository(t, testenv.Model{Name: "blocks", Config: blockConfig})
	srv, err := core.NewServer(core.Options{ModelRepositories: []string{repo}, Backends: blockProvider{check}, Schedulers: scheduling.New, Tracer: tracer})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop(context.Background())

	a := core.NewInput("A", core.TypeInt32, []int64{3}, make([]byte, 12))
	bee := core.Input{Name: "BEE", DataType: core.TypeFP32, Shape: []int64{2, 2}, Buffers: [][]byte{make([]byte, 4), make([]byte, 12)}}
	everyParam := []core.Parameter{core.StringParam("s", "a string of some length"), core.StringParam("empty", ""),
		core.IntParam("i", -7), core.BoolParam("b", true), core.DoubleParam("d", 0.5),
		{Name: "bytes", Type: core.ParamBytes, Bytes: []byte{1, 2, 3}}}
	for _, tc := range []struct {
		traced bool
		req    core.Submission
	}{
		{false, core.Submission{Inputs: []core.Input{a, bee}}},
		{false, core.Submission{ID: "numeric-correlation", CorrelationID: core.CorrelationID{Uint: 9}, Inputs: []core.Input{a, bee}, Outputs: []string{"WHY"}}},
		{false, core.Submission{ID: "every-field", CorrelationID: core.CorrelationID{String: "sequence-seven", IsString: true},
			Inputs: []core.Input{bee, a}, Outputs: []string{"X", "WHY"}, Parameters: everyParam}},
		{true, core.Submission{ID: "traced", Inputs: []core.Input{a, bee}, Parameters: everyParam[:1]}},
	} {
		tracer.on.Store(tc.traced)
		req := tc.req
		req.Model = "blocks"
		done := make(chan struct{})
		if err := srv.Infer(context.Background(), &req, func(_ *core.Response, final bool) {
			if final {
				close(done)
			}
		}); err != nil {
			t.Fatalf("request %q: %v", req.ID, err)
		}
		<-done
	}
	if n := checked.Load(); n != 4 {
		t.Errorf("%d requests checked, want 4", n)
	}
}

// BenchmarkRequestBlockLayout is the cost of sizing and laying out the
// block of one request with every kind of field (two inputs, one of two
// buffers, a string correlation id, two outputs, six parameters), ends
// checked, in memory allocated once.
func BenchmarkRequestBlockLayout(b *testing.B) {
	check := func(r *core.Request) {
		mem := make([]uint64, requestBlockSize(r, blockTraceContext(r))/8)
		st := &heldRequest{}
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			size := requestBlockSize(r, blockTraceContext(r))
			clear(mem)
			if err := st.layBlock(unsafe.Pointer(&mem[0]), size, r, &instanceHandle{}, blockTraceContext(r)); err != nil {
				b.Fatal(err)
			}
			st.pinner.Unpin()
		}
	}
	repo := testenv.Repository(b, testenv.Model{Name: "blocks", Config: blockConfig})
	srv, err := core.NewServer(core.Options{ModelRepositories: []string{repo}, Backends: blockProvider{check}})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Stop(context.Background())
	req := &core.Submission{Model: "blocks", ID: "every-field", CorrelationID: core.CorrelationID{String: "sequence-seven", IsString: true},
		Inputs: []core.Input{core.NewInput("A", core.TypeInt32, []int64{3}, make([]byte, 12)),
			{Name: "BEE", DataType: core.TypeFP32, Shape: []int64{2, 2}, Buffers: [][]byte{make([]byte, 4), make([]byte, 12)}}},
		Outputs: []string{"X", "WHY"},
		Parameters: []core.Parameter{core.StringParam("s", "a string of some length"), core.StringParam("empty", ""),
			core.IntParam("i", -7), core.BoolParam("b", true), core.DoubleParam("d", 0.5),
			{Name: "bytes", Type: core.ParamBytes, Bytes: []byte{1, 2, 3}}}}
	done := make(chan struct{})
	if err := srv.Infer(context.Background(), req, func(_ *core.Response, final bool) {
		if final {
			close(done)
		}
	}); err != nil {
		b.Fatal(err)
	}
	<-done
}
