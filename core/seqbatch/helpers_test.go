package seqbatch_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"sync"
	"testing"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/coretest"
)

// accBackend is the stateful backend of the sequence batcher tests, a
// coretest.Provider whose model "acc" runs execute: each request adds its
// INPUT (INT32) to the state input STATE_IN when the model has one, stores
// the sum with UpdateState("STATE_OUT") and answers OUTPUT = the sum (or
// INPUT without state). Every execution is recorded, with the decoded value
// of every input the backend saw.
type accBackend struct {
	*coretest.Provider
	mu      sync.Mutex
	execs   []accExec
	batches map[string]int // executions so far, by instance
}

// accExec is one request as one execution saw it.
type accExec struct {
	instance string
	batch    int // index of the execution on that instance
	size     int // requests in the batch
	id       string
	corrID   core.CorrelationID
	inputs   map[string]any     // decoded: int32, float32, bool, uint64, uint32, int64, string
	shapes   map[string][]int64 // input shapes
	output   int32
	err      error // UpdateState's error
}

func newAccBackend() *accBackend {
	b := &accBackend{Provider: coretest.NewProvider(), batches: map[string]int{}}
	b.Set("acc", b.execute)
	return b
}

// gated makes every execution holding one of ids (every execution when ids
// is empty) wait for the returned gate before it computes.
func (b *accBackend) gated(t *testing.T, ids ...string) *coretest.Gate {
	g := coretest.NewGate(t)
	b.Set("acc", coretest.Gated(g, b.execute, ids...))
	return g
}

func (b *accBackend) execute(x *coretest.Exec) error {
	inst := x.Instance.Name()
	b.mu.Lock()
	n := b.batches[inst]
	b.batches[inst]++
	b.mu.Unlock()
	recs := make([]accExec, len(x.Batch))
	for k, r := range x.Batch {
		rec := &recs[k]
		*rec = accExec{instance: inst, batch: n, size: len(x.Batch), id: r.ID(), corrID: r.CorrelationID(),
			inputs: map[string]any{}, shapes: map[string][]int64{}}
		for _, in := range r.Inputs() {
			rec.inputs[in.Name] = decode(in)
			rec.shapes[in.Name] = slices.Clone(in.Shape)
		}
		sum, _ := rec.inputs["INPUT"].(int32)
		if st, ok := rec.inputs["STATE_IN"].(int32); ok {
			sum += st
			rec.err = r.UpdateState("STATE_OUT", core.TypeInt32, rec.shapes["STATE_IN"], binary.LittleEndian.AppendUint32(nil, uint32(sum)))
		}
		rec.output = sum
	}
	b.mu.Lock()
	b.execs = append(b.execs, recs...)
	b.mu.Unlock()
	for k, r := range x.Batch {
		shape := []int64{1}
		if m := r.Model().MaxBatchSize(); m > 0 {
			shape = []int64{1, 1}
		}
		_ = x.Send(r, &core.Response{Outputs: []core.Output{{Name: "OUTPUT", DataType: core.TypeInt32, Shape: shape,
			Data: binary.LittleEndian.AppendUint32(nil, uint32(recs[k].output))}}}, true)
		_ = x.Release(r, core.ReleaseAll)
	}
	return nil
}

// decode returns the first element of a one-element tensor.
func decode(in core.Input) any {
	var data []byte
	for _, b := range in.Buffers {
		data = append(data, b...)
	}
	switch in.DataType {
	case core.TypeInt32:
		if len(data) >= 4 {
			return int32(binary.LittleEndian.Uint32(data))
		}
	case core.TypeUint32:
		if len(data) >= 4 {
			return binary.LittleEndian.Uint32(data)
		}
	case core.TypeFP32:
		if len(data) >= 4 {
			return math.Float32frombits(binary.LittleEndian.Uint32(data))
		}
	case core.TypeBool:
		if len(data) >= 1 {
			return data[0] != 0
		}
	case core.TypeUint64:
		if len(data) >= 8 {
			return binary.LittleEndian.Uint64(data)
		}
	case core.TypeInt64:
		if len(data) >= 8 {
			return int64(binary.LittleEndian.Uint64(data))
		}
	case core.TypeBytes:
		elems, err := core.DecodeBytes(data)
		if err == nil && len(elems) > 0 {
			return string(elems[0])
		}
	}
	return nil
}

func (b *accBackend) recorded() []accExec {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.execs)
}

// byID returns the recorded execution of request id.
func (b *accBackend) byID(t *testing.T, id string) accExec {
	t.Helper()
	for _, e := range b.recorded() {
		if e.id == id {
			return e
		}
	}
	t.Fatalf("request %q was not executed; executed: %v", id, b.recorded())
	return accExec{}
}

// seqServer serves one model "acc" with the given configuration (plus
// extra files under the model directory) on b, with options adjusted by
// mutate.
func seqServer(t *testing.T, config string, b core.BackendProvider, files map[string][]byte, mutate ...func(*core.Options)) *core.Server {
	t.Helper()
	opts := core.Options{Backends: b}
	for _, f := range mutate {
		f(&opts)
	}
	srv := coretest.Serve(t, opts, coretest.ModelDir{Name: "acc", Config: config, Files: files})
	if !srv.Ready() {
		t.Fatalf("model did not load: %+v", srv.RepositoryIndex())
	}
	return srv
}

// accConfig is a sequence model with INPUT/OUTPUT, the given
// sequence_batching body and extra lines.
func accConfig(maxBatch int, batching, extra string) string {
	return fmt.Sprintf(`name: "acc"
backend: "go"
max_batch_size: %d
input [ { name: "INPUT" data_type: TYPE_INT32 dims: [ 1 ] } ]
output [ { name: "OUTPUT" data_type: TYPE_INT32 dims: [ 1 ] } ]
sequence_batching {
%s
}
%s
`, maxBatch, batching, extra)
}

// stateBatching is a sequence_batching body with the STATE_IN/STATE_OUT
// implicit state.
const stateBatching = `state [ { input_name: "STATE_IN" output_name: "STATE_OUT" data_type: TYPE_INT32 dims: [ 1 ] } ]`

// seqReq describes one request of a sequence.
type seqReq struct {
	id    string
	corr  core.CorrelationID
	flags uint32
	value int32
	ctx   context.Context
}

func uintID(v uint64) core.CorrelationID { return core.CorrelationID{Uint: v} }
func strID(s string) core.CorrelationID  { return core.CorrelationID{String: s, IsString: true} }
func int32Bytes(v int32) []byte          { return binary.LittleEndian.AppendUint32(nil, uint32(v)) }
func shapeFor(srvMaxBatch int) []int64 {
	return map[bool][]int64{true: {1, 1}, false: {1}}[srvMaxBatch > 0]
}
func startEnd(start, end bool) (f uint32) {
	if start {
		f |= core.RequestFlagSequenceStart
	}
	if end {
		f |= core.RequestFlagSequenceEnd
	}
	return f
}

// send submits a request of model "acc" and returns its collector; Infer's
// error fails the test.
func send(t *testing.T, srv *core.Server, maxBatch int, q seqReq) *coretest.Collector {
	t.Helper()
	r, err := trySend(srv, maxBatch, q)
	if err != nil {
		t.Fatalf("Infer(%s): %v", q.id, err)
	}
	return r
}

func trySend(srv *core.Server, maxBatch int, q seqReq) (*coretest.Collector, error) {
	r := coretest.NewCollector()
	ctx := q.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	err := srv.Infer(ctx, &core.Submission{
		Model: "acc", ID: q.id, CorrelationID: q.corr, Flags: q.flags,
		Inputs: []core.Input{core.NewInput("INPUT", core.TypeInt32, shapeFor(maxBatch), int32Bytes(q.value))},
	}, r.Receive)
	return r, err
}

// outputOf returns OUTPUT of a successful response.
func outputOf(t *testing.T, resp *core.Response) int32 {
	t.Helper()
	if resp.Err != nil {
		t.Fatalf("response: %v", resp.Err)
	}
	for _, o := range resp.Outputs {
		if o.Name == "OUTPUT" && len(o.Data) == 4 {
			return int32(binary.LittleEndian.Uint32(o.Data))
		}
	}
	t.Fatalf("response has no INT32 OUTPUT: %+v", resp)
	return 0
}
