package grpcserver_test

import (
	"bytes"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"unsafe"

	"google.golang.org/grpc/codes"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/coretest"
	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
	"github.com/tritonhost/tritonhost/internal/protocol"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// bufferProvider serves coretest's models, each of which gives input
// buffers (core.InputMemory), counting those given and released.
type bufferProvider struct {
	*coretest.Provider
	mu      sync.Mutex
	given   []*countedBuffer
	doubled atomic.Int64 // buffers released twice
}

func (p *bufferProvider) LoadModel(m *core.Model) (core.BackendModel, error) {
	bm, err := p.Provider.LoadModel(m)
	if err != nil {
		return nil, err
	}
	return bufferModel{bm, p}, nil
}

// outstanding is how many buffers given are not released.
func (p *bufferProvider) outstanding() (given, held int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, b := range p.given {
		if !b.released.Load() {
			held++
		}
	}
	return len(p.given), held
}

type bufferModel struct {
	core.BackendModel
	p *bufferProvider
}

func (m bufferModel) InputBuffer(n int) core.InputBuffer {
	b := &countedBuffer{buf: make([]byte, n), p: m.p}
	m.p.mu.Lock()
	m.p.given = append(m.p.given, b)
	m.p.mu.Unlock()
	return b
}

type countedBuffer struct {
	buf      []byte
	p        *bufferProvider
	released atomic.Bool
}

func (b *countedBuffer) Bytes() []byte { return b.buf }

func (b *countedBuffer) Release() {
	if b.released.Swap(true) {
		b.p.doubled.Add(1)
	}
}

// inBuffer reports whether every input of r lies in its InputBuffer.
func inBuffer(r *core.Request) bool {
	b, ok := r.InputBuffer().(*countedBuffer)
	if !ok || len(r.Inputs()) == 0 {
		return false
	}
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b.buf)))
	for _, in := range r.Inputs() {
		for _, d := range in.Buffers {
			at := uintptr(unsafe.Pointer(unsafe.SliceData(d)))
			if at < start || at+uintptr(len(d)) > start+uintptr(len(b.buf)) {
				return false
			}
		}
	}
	return true
}

// TestALargeRequestIsReceivedIntoItsModelsBuffer: a unary request of at
// least 1 MiB to a model that gives input buffers (core.InputMemory) is
// received into one, its inputs' data lying there when the backend runs
// it; every buffer given is released exactly once, after its request
// finished, whether it was answered or refused (a byte size that is not
// the shape's, a parameter of the wrong type, too many parameters), a
// request for a version that does not exist gets none, and neither does
// a small request.
func TestALargeRequestIsReceivedIntoItsModelsBuffer(t *testing.T) {
	t.Parallel()
	var bp *bufferProvider
	h := newHarness(t, setup{backends: func(p *coretest.Provider) core.BackendProvider {
		bp = &bufferProvider{Provider: p}
		return bp
	}}, coretest.ModelDir{Name: "echo", Config: vector("")})
	var placed, runs atomic.Int64
	h.p.Set("echo", func(x *coretest.Exec) error {
		for _, r := range x.Batch {
			runs.Add(1)
			if inBuffer(r) {
				placed.Add(1)
			}
		}
		return coretest.Echo()(x)
	})
	const n = 1 << 18 // INT32 elements: 1 MiB
	data := make([]byte, 4*n)
	for i := range data {
		data[i] = byte(i * 13)
	}
	request := func(shape int64, version string) *pb.ModelInferRequest {
		return &pb.ModelInferRequest{ModelName: "echo", ModelVersion: version, Id: "big",
			Inputs:           []*pb.ModelInferRequest_InferInputTensor{{Name: "INPUT0", Datatype: "INT32", Shape: []int64{shape}}},
			RawInputContents: [][]byte{data}}
	}
	for i := range 3 {
		resp, err := h.client.ModelInfer(t.Context(), request(n, ""))
		if err != nil {
			t.Fatal(err)
		}
		if raw := resp.GetRawOutputContents(); len(raw) != 1 || !bytes.Equal(raw[0], data) {
			t.Fatalf("request %d: the output is not the input", i)
		}
	}
	if placed.Load() != 3 || runs.Load() != 3 {
		t.Errorf("%d of %d executed requests had their input in their buffer, want 3 of 3", placed.Load(), runs.Load())
	}
	_, err := h.client.ModelInfer(t.Context(), request(n+1, ""))
	wantStatusPrefix(t, "a byte size that is not the shape's", err, codes.InvalidArgument, "[request id: big] input byte size mismatch")
	_, err = h.client.ModelInfer(t.Context(), request(n, "7"))
	wantStatusPrefix(t, "an unknown version", err, codes.NotFound, "Request for unknown model")
	bad := request(n, "")
	bad.Parameters = map[string]*pb.InferParameter{"priority": {ParameterChoice: &pb.InferParameter_StringParam{StringParam: "high"}}}
	_, err = h.client.ModelInfer(t.Context(), bad)
	if err == nil {
		t.Error("a priority of the wrong type was accepted")
	}
	// Refused on the wire, before it is resolved: the call releases it.
	crowded := request(n, "")
	crowded.Parameters = map[string]*pb.InferParameter{}
	for i := range protocol.MaxRequestParameters + 1 {
		crowded.Parameters[fmt.Sprint("p", i)] = &pb.InferParameter{ParameterChoice: &pb.InferParameter_BoolParam{BoolParam: true}}
	}
	_, err = h.client.ModelInfer(t.Context(), crowded)
	wantStatusPrefix(t, "too many parameters", err, codes.InvalidArgument, "")
	small := request(4, "")
	small.RawInputContents = [][]byte{data[:16]}
	if _, err := h.client.ModelInfer(t.Context(), small); err != nil {
		t.Fatal(err)
	}
	// A request's buffer goes once it finished, which may be just after
	// its response.
	testenv.Eventually(func() bool { _, held := bp.outstanding(); return held == 0 })
	if given, held := bp.outstanding(); given != 6 || held != 0 || bp.doubled.Load() != 0 {
		t.Errorf("%d buffers given (want 6: three answered, three refused past the lookup), %d not released, %d released twice", given, held, bp.doubled.Load())
	}
}
