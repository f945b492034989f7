package core

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"
)

// schedBackend is a Go-native backend for scheduler tests: every Execute
// records the ids of its batch, waits for the gate (if set), then answers
// and releases each request.
type schedBackend struct {
	mu      sync.Mutex
	batches [][]string
	gate    chan struct{}
	started chan struct{} // receives once per Execute
}

func (b *schedBackend) LoadModel(*Model) (BackendModel, error) { return schedModel{b}, nil }
func (b *schedBackend) Close() error                           { return nil }

type schedModel struct{ b *schedBackend }

func (m schedModel) NewInstance(*Instance) (BackendInstance, error) { return schedInstance(m), nil }
func (schedModel) ParallelInstanceLoading() bool                    { return false }
func (schedModel) Finalize() error                                  { return nil }

type schedInstance struct{ b *schedBackend }

func (i schedInstance) Execute(batch []*Request) error {
	ids := make([]string, len(batch))
	for k, r := range batch {
		ids[k] = r.ID()
	}
	i.b.mu.Lock()
	i.b.batches = append(i.b.batches, ids)
	i.b.mu.Unlock()
	if i.b.started != nil {
		i.b.started <- struct{}{}
	}
	if i.b.gate != nil {
		<-i.b.gate
	}
	for _, r := range batch {
		in := r.Inputs()[0]
		_ = r.Responder().Send(&Response{Outputs: []Output{{Name: "OUTPUT0", DataType: in.DataType, Shape: in.Shape, Data: in.Buffers[0]}}}, true)
		_ = r.Release(ReleaseAll)
	}
	return nil
}
func (schedInstance) Finalize() error { return nil }

func (b *schedBackend) recorded() [][]string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.batches)
}

// schedServer serves one model with config text and the given backend.
func schedServer(t *testing.T, config string, b *schedBackend) *Server {
	t.Helper()
	repo := t.TempDir()
	dir := filepath.Join(repo, "m")
	if err := os.MkdirAll(filepath.Join(dir, "1"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ConfigFileName), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	srv, err := NewServer(Options{ModelRepositories: []string{repo}, Backends: b})
	if err != nil {
		t.Fatal(err)
	}
	if !srv.Ready() {
		t.Fatalf("model did not load: %+v", srv.RepositoryIndex())
	}
	t.Cleanup(func() {
		if err := srv.Stop(context.Background()); err != nil {
			t.Error(err)
		}
		if n := srv.LiveRequests(); n != 0 {
			t.Errorf("%d requests live after Stop", n)
		}
	})
	return srv
}

const batchingConfig = `name: "m"
backend: "go"
max_batch_size: 4
input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ 1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ 1 ] } ]
instance_group [ { count: 1 kind: KIND_CPU } ]
`

func int32Input(rows int) Input {
	data := make([]byte, 4*rows)
	for i := range rows {
		binary.LittleEndian.PutUint32(data[4*i:], uint32(i))
	}
	return NewInput("INPUT0", TypeInt32, []int64{int64(rows), 1}, data)
}

// submit sends a request of rows rows and returns a channel closed at its
// final response.
func submit(t *testing.T, srv *Server, id string, rows int) <-chan struct{} {
	t.Helper()
	done := make(chan struct{})
	err := srv.Infer(context.Background(), &InferenceRequest{Model: "m", ID: id, Inputs: []Input{int32Input(rows)}},
		func(resp *Response, final bool) {
			if resp != nil && resp.Err != nil {
				t.Errorf("request %s: %v", id, resp.Err)
			}
			if final {
				close(done)
			}
		})
	if err != nil {
		t.Fatalf("Infer %s: %v", id, err)
	}
	return done
}

func TestDynamicBatcherRules(t *testing.T) {
	tests := []struct {
		name    string
		batcher string
		queued  []int // batch sizes of the requests queued while the instance is busy
		want    [][]string
	}{
		{"no delay: everything queued goes, up to max_batch_size", "dynamic_batching { }",
			[]int{1, 1, 1, 1, 1, 1}, [][]string{{"q0", "q1", "q2", "q3"}, {"q4", "q5"}}},
		{"a full batch goes at once despite the delay", "dynamic_batching { max_queue_delay_microseconds: 5000000 }",
			[]int{2, 2}, [][]string{{"q0", "q1"}}},
		{"the longest run ending on a preferred size goes at once", "dynamic_batching { preferred_batch_size: [ 2 ] max_queue_delay_microseconds: 5000000 }",
			[]int{1, 1, 1, 1}, [][]string{{"q0", "q1"}, {"q2", "q3"}}},
		{"batch sizes of requests add up", "dynamic_batching { preferred_batch_size: [ 3 ] max_queue_delay_microseconds: 5000000 }",
			[]int{2, 1, 3}, [][]string{{"q0", "q1"}, {"q2"}}},
		{"what does not reach a preferred size waits for the delay", "dynamic_batching { preferred_batch_size: [ 4 ] max_queue_delay_microseconds: 100000 }",
			[]int{1, 1, 1}, [][]string{{"q0", "q1", "q2"}}},
		{"without dynamic batching one request per execution", "",
			[]int{1, 1}, [][]string{{"q0"}, {"q1"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := &schedBackend{gate: make(chan struct{}), started: make(chan struct{}, 16)}
			srv := schedServer(t, batchingConfig+tc.batcher, b)
			busy := submit(t, srv, "busy", 4) // a full batch: it starts at once
			<-b.started                       // the instance is now executing "busy" and waits at the gate
			var done []<-chan struct{}
			for i, rows := range tc.queued {
				done = append(done, submit(t, srv, fmt.Sprintf("q%d", i), rows))
			}
			time.Sleep(20 * time.Millisecond) // let every request reach the queue
			close(b.gate)
			<-busy
			for _, d := range done {
				select {
				case <-d:
				case <-time.After(10 * time.Second):
					t.Fatalf("a request never completed; batches so far: %v", b.recorded())
				}
			}
			got := b.recorded()[1:]
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("batches %v, want %v", got, tc.want)
			}
		})
	}
}

func TestIncompatibleShapesDoNotShareABatch(t *testing.T) {
	cfg := `name: "m"
backend: "go"
max_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ -1 ] } ]
instance_group [ { count: 1 kind: KIND_CPU } ]
dynamic_batching { }
`
	b := &schedBackend{gate: make(chan struct{}), started: make(chan struct{}, 16)}
	srv := schedServer(t, cfg, b)
	busy := submit(t, srv, "busy", 1)
	<-b.started
	var done []<-chan struct{}
	for i, width := range []int{2, 2, 3, 2} {
		data := make([]byte, 4*width)
		id := fmt.Sprintf("w%d", i)
		d := make(chan struct{})
		err := srv.Infer(context.Background(), &InferenceRequest{Model: "m", ID: id,
			Inputs: []Input{NewInput("INPUT0", TypeInt32, []int64{1, int64(width)}, data)}},
			func(_ *Response, final bool) {
				if final {
					close(d)
				}
			})
		if err != nil {
			t.Fatal(err)
		}
		done = append(done, d)
	}
	time.Sleep(20 * time.Millisecond)
	close(b.gate)
	<-busy
	for _, d := range done {
		<-d
	}
	if got := fmt.Sprint(b.recorded()[1:]); got != "[[w0 w1] [w2] [w3]]" {
		t.Errorf("batches %s: a request of another shape must end the batch", got)
	}
}

func TestQueuedRequestTimesOut(t *testing.T) {
	b := &schedBackend{gate: make(chan struct{}), started: make(chan struct{}, 16)}
	srv := schedServer(t, batchingConfig, b)
	busy := submit(t, srv, "busy", 4)
	<-b.started
	var got *Response
	done := make(chan struct{})
	if err := srv.Infer(context.Background(), &InferenceRequest{Model: "m", ID: "late", Timeout: time.Millisecond,
		Inputs: []Input{int32Input(1)}}, func(resp *Response, final bool) {
		if final {
			got = resp
			close(done)
		}
	}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond)
	close(b.gate)
	<-busy
	<-done
	if got == nil || CodeOf(got.Err) != CodeUnavailable {
		t.Fatalf("timed-out request: %+v, want an UNAVAILABLE error", got)
	}
	if n := len(b.recorded()); n != 1 {
		t.Errorf("the timed-out request was executed (%d executions)", n)
	}
}

func TestFullQueueRefusesRequests(t *testing.T) {
	b := &schedBackend{gate: make(chan struct{}), started: make(chan struct{}, 16)}
	srv := schedServer(t, batchingConfig+`dynamic_batching { default_queue_policy { max_queue_size: 1 } }`, b)
	busy := submit(t, srv, "busy", 4)
	<-b.started
	queued := submit(t, srv, "queued", 1)
	err := srv.Infer(context.Background(), &InferenceRequest{Model: "m", ID: "extra", Inputs: []Input{int32Input(1)}},
		func(*Response, bool) { t.Error("a refused request got a response") })
	if CodeOf(err) != CodeUnavailable {
		t.Errorf("third request: %v, want UNAVAILABLE (queue full)", err)
	}
	close(b.gate)
	<-busy
	<-queued
}
