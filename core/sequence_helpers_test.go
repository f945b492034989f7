package core_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"tritonhost/core"
)

// accBackend is a Go-native stateful backend for the sequence batcher
// tests. Each request adds its INPUT (INT32) to the state input STATE_IN
// when the model has one, stores the sum with UpdateState("STATE_OUT") and
// answers OUTPUT = the sum (or INPUT without state). Every execution is
// recorded, with the decoded value of every input the backend saw.
type accBackend struct {
	mu    sync.Mutex
	execs []accExec
	// gate, when set, is waited on by every execution whose request id is
	// in hold (all executions when hold is nil), after it is recorded.
	gate    chan struct{}
	hold    map[string]bool
	started chan string // receives the request id of each recorded execution (if set)
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

func (b *accBackend) LoadModel(*core.Model) (core.BackendModel, error) { return accModel{b}, nil }
func (b *accBackend) Close() error                                     { return nil }

type accModel struct{ b *accBackend }

func (m accModel) NewInstance(inst *core.Instance) (core.BackendInstance, error) {
	return &accInstance{b: m.b, inst: inst}, nil
}
func (accModel) ParallelInstanceLoading() bool { return false }
func (accModel) Finalize() error               { return nil }

type accInstance struct {
	b    *accBackend
	inst *core.Instance
	n    int
}

func (i *accInstance) Finalize() error { return nil }

func (i *accInstance) Execute(batch []*core.Request) error {
	recs := make([]accExec, len(batch))
	for k, r := range batch {
		recs[k] = accExec{instance: i.inst.Name(), batch: i.n, size: len(batch), id: r.ID(), corrID: r.CorrelationID(),
			inputs: map[string]any{}, shapes: map[string][]int64{}}
		for _, in := range r.Inputs() {
			recs[k].inputs[in.Name] = decode(in)
			recs[k].shapes[in.Name] = slices.Clone(in.Shape)
		}
	}
	i.n++
	held := false
	for _, rec := range recs {
		if i.b.started != nil {
			i.b.started <- rec.id
		}
		held = held || i.b.hold == nil || i.b.hold[rec.id]
	}
	if i.b.gate != nil && held {
		<-i.b.gate
	}
	for k, r := range batch {
		rec := &recs[k]
		sum, _ := rec.inputs["INPUT"].(int32)
		if st, ok := rec.inputs["STATE_IN"].(int32); ok {
			sum += st
			rec.err = r.UpdateState("STATE_OUT", core.TypeInt32, rec.shapes["STATE_IN"], binary.LittleEndian.AppendUint32(nil, uint32(sum)))
		}
		rec.output = sum
	}
	i.b.mu.Lock()
	i.b.execs = append(i.b.execs, recs...)
	i.b.mu.Unlock()
	for k, r := range batch {
		shape := []int64{1}
		if m := r.Model().MaxBatchSize(); m > 0 {
			shape = []int64{1, 1}
		}
		_ = r.Responder().Send(&core.Response{Outputs: []core.Output{{Name: "OUTPUT", DataType: core.TypeInt32, Shape: shape,
			Data: binary.LittleEndian.AppendUint32(nil, uint32(recs[k].output))}}}, true)
		_ = r.Release(core.ReleaseAll)
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
// extra files under the model directory) on backend b. At cleanup it stops
// the server and checks that no request is left.
func seqServer(t *testing.T, config string, b *accBackend, files map[string][]byte) *core.Server {
	t.Helper()
	return seqServerWith(t, config, b, files)
}

// seqServerWith is seqServer for any backend, with options adjusted by
// mutate.
func seqServerWith(t *testing.T, config string, b core.BackendProvider, files map[string][]byte, mutate ...func(*core.Options)) *core.Server {
	t.Helper()
	repo := t.TempDir()
	dir := filepath.Join(repo, "acc")
	if err := os.MkdirAll(filepath.Join(dir, "1"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, core.ConfigFileName), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, data := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	opts := core.Options{ModelRepositories: []string{repo}, Backends: b}
	for _, f := range mutate {
		f(&opts)
	}
	srv, err := core.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	if !srv.Ready() {
		t.Fatalf("model did not load: %+v", srv.RepositoryIndex())
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := srv.Stop(ctx); err != nil {
			t.Error(err)
		}
		if n := srv.LiveRequests(); n != 0 {
			t.Errorf("%d requests live after Stop", n)
		}
	})
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

// reply is the outcome of one request: its responses, counted.
type reply struct {
	mu     sync.Mutex
	resps  []*core.Response
	finals int
	done   chan struct{}
}

func (r *reply) fn(resp *core.Response, final bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if resp != nil {
		r.resps = append(r.resps, resp)
	}
	if final {
		r.finals++
		if r.finals == 1 {
			close(r.done)
		}
	}
}

// wait returns the final response, failing the test after a timeout.
func (r *reply) wait(t *testing.T) *core.Response {
	t.Helper()
	select {
	case <-r.done:
	case <-time.After(15 * time.Second):
		t.Fatal("timed out waiting for a final response")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.resps) != 1 || r.finals != 1 {
		t.Fatalf("got %d responses and %d finals, want exactly one final response", len(r.resps), r.finals)
	}
	return r.resps[0]
}

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

// send submits a request of model "acc" and returns its reply; Infer's
// error fails the test.
func send(t *testing.T, srv *core.Server, maxBatch int, q seqReq) *reply {
	t.Helper()
	r, err := trySend(srv, maxBatch, q)
	if err != nil {
		t.Fatalf("Infer(%s): %v", q.id, err)
	}
	return r
}

func trySend(srv *core.Server, maxBatch int, q seqReq) (*reply, error) {
	r := &reply{done: make(chan struct{})}
	ctx := q.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	err := srv.Infer(ctx, &core.InferenceRequest{
		Model: "acc", ID: q.id, CorrelationID: q.corr, Flags: q.flags,
		Inputs: []core.Input{core.NewInput("INPUT", core.TypeInt32, shapeFor(maxBatch), int32Bytes(q.value))},
	}, r.fn)
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
