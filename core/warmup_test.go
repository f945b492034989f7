package core_test

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/coretest"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// seen records the inputs of every request a model's backend executed, in
// order, as "<id>:<name><shape>=<bytes>" for each input.
type seen struct {
	mu   sync.Mutex
	reqs []string
}

func (s *seen) record(r *core.Request) {
	var parts []string
	for _, in := range r.Inputs() {
		parts = append(parts, fmt.Sprintf("%s%v=%x", in.Name, in.Shape, bytes.Join(in.Buffers, nil)))
	}
	slices.Sort(parts)
	s.mu.Lock()
	s.reqs = append(s.reqs, r.ID()+":"+strings.Join(parts, ","))
	s.mu.Unlock()
}

func (s *seen) list() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.reqs)
}

// empty answers each request with a response without outputs.
func empty() coretest.Behaviour {
	return coretest.Answering(coretest.Reply(func(*core.Request) *core.Response { return &core.Response{} }))
}

// TestWarmupRunsBeforeTheFirstRequest: each sample runs count times, as one
// batch of batch_size requests, before the model is ready; a client's
// request comes after.
func TestWarmupRunsBeforeTheFirstRequest(t *testing.T) {
	t.Parallel()
	var s seen
	p := coretest.NewProvider().Set("m", coretest.Inspect(s.record, empty()))
	srv := coretest.Start(t, p, coretest.ModelDir{Name: "m", Config: `backend: "go"
max_batch_size: 4
input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ 2 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ 2 ] } ]
instance_group [ { count: 2 kind: KIND_CPU } ]
model_warmup [
  { name: "pairs" batch_size: 2 count: 3 inputs { key: "INPUT0" value: { data_type: TYPE_INT32 dims: [ 2 ] zero_data: true } } },
  { name: "skipped" batch_size: 0 inputs { key: "INPUT0" value: { data_type: TYPE_INT32 dims: [ 2 ] zero_data: true } } }
]`})
	var batches []string
	for _, e := range p.Executions("m") {
		batches = append(batches, fmt.Sprintf("%s:%d", e.Instance, len(e.IDs)))
	}
	// Three iterations of a batch of two, on each instance in turn.
	want := []string{"m_0_0:2", "m_0_0:2", "m_0_0:2", "m_0_1:2", "m_0_1:2", "m_0_1:2"}
	if !slices.Equal(batches, want) {
		t.Errorf("warmup executions %v, want %v", batches, want)
	}
	for i, r := range s.list() {
		if r != ":INPUT0[1 2]=0000000000000000" {
			t.Errorf("warmup request %d: %s, want no id and INPUT0 [1 2] of zeros", i, r)
		}
	}
	coretest.Infer(t, srv, coretest.Request("m", "client", coretest.Int32Input("INPUT0", []int64{1, 2}, 7, 8))).Wait(t)
	got := s.list()
	if n := len(got); n != 13 || !strings.HasPrefix(got[12], "client:") {
		t.Errorf("requests %v: want the client's 13th, after the 12 of the warmup", got)
	}
}

// TestWarmupInputData: what each kind of input data comes to, as the
// backend sees it.
func TestWarmupInputData(t *testing.T) {
	strings2 := core.EncodeBytes([]byte("ab"), []byte("c"))
	tests := []struct {
		name   string
		config string // the model's input and its warmup sample's inputs, as %s and %s
		input  string
		sample string
		files  map[string][]byte
		want   []string
	}{
		{name: "zeros, without a batch dimension when the model does not batch",
			input:  `{ name: "IN" data_type: TYPE_INT32 dims: [ 3 ] }`,
			sample: `batch_size: 1 inputs { key: "IN" value: { data_type: TYPE_INT32 dims: [ 3 ] zero_data: true } }`,
			want:   []string{":IN[3]=000000000000000000000000"}},
		{name: "random STRING data is empty strings",
			input:  `{ name: "IN" data_type: TYPE_STRING dims: [ 2 ] }`,
			sample: `batch_size: 1 inputs { key: "IN" value: { data_type: TYPE_STRING dims: [ 2 ] random_data: true } }`,
			want:   []string{":IN[2]=0000000000000000"}},
		{name: "a file holding more than a row: its first bytes",
			input:  `{ name: "IN" data_type: TYPE_INT8 dims: [ 2 ] }`,
			sample: `batch_size: 1 inputs { key: "IN" value: { data_type: TYPE_INT8 dims: [ 2 ] input_data_file: "in.bin" } }`,
			files:  map[string][]byte{"warmup/in.bin": {1, 2, 3, 4}},
			want:   []string{":IN[2]=0102"}},
		{name: "a STRING file: the whole file",
			input:  `{ name: "IN" data_type: TYPE_STRING dims: [ 2 ] }`,
			sample: `batch_size: 1 inputs { key: "IN" value: { data_type: TYPE_STRING dims: [ 2 ] input_data_file: "s.bin" } }`,
			files:  map[string][]byte{"warmup/s.bin": strings2},
			want:   []string{fmt.Sprintf(":IN[2]=%x", strings2)}},
		{name: "count 0 runs once",
			input:  `{ name: "IN" data_type: TYPE_INT8 dims: [ 1 ] }`,
			sample: `batch_size: 1 count: 0 inputs { key: "IN" value: { data_type: TYPE_INT8 dims: [ 1 ] zero_data: true } }`,
			want:   []string{":IN[1]=00"}},
		{name: "an input the configuration does not list reaches the backend as given",
			input:  `{ name: "IN" data_type: TYPE_INT8 dims: [ 1 ] }`,
			sample: `batch_size: 1 inputs [ { key: "IN" value: { data_type: TYPE_INT8 dims: [ 1 ] zero_data: true } }, { key: "START" value: { data_type: TYPE_INT32 dims: [ 1 ] zero_data: true } } ]`,
			want:   []string{":IN[1]=00,START[1]=00000000"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var s seen
			p := coretest.NewProvider().Set("m", coretest.Inspect(s.record, empty()))
			coretest.Start(t, p, coretest.ModelDir{Name: "m", Files: tc.files, Config: fmt.Sprintf(`backend: "go"
input [ %s ]
output [ { name: "OUT" data_type: TYPE_INT8 dims: [ 1 ] } ]
model_warmup [ { name: "w" %s } ]`, tc.input, tc.sample)})
			if got := s.list(); !slices.Equal(got, tc.want) {
				t.Errorf("the backend saw %v, want %v", got, tc.want)
			}
		})
	}
	t.Run("random data", func(t *testing.T) {
		t.Parallel()
		var s seen
		p := coretest.NewProvider().Set("m", coretest.Inspect(s.record, empty()))
		coretest.Start(t, p, coretest.ModelDir{Name: "m", Config: `backend: "go"
input [ { name: "IN" data_type: TYPE_FP32 dims: [ 64 ] } ]
output [ { name: "OUT" data_type: TYPE_INT8 dims: [ 1 ] } ]
model_warmup [ { name: "w" batch_size: 1 inputs { key: "IN" value: { data_type: TYPE_FP32 dims: [ 64 ] random_data: true } } } ]`})
		got := s.list()
		if len(got) != 1 || !strings.HasPrefix(got[0], ":IN[64]=") || strings.Contains(got[0], strings.Repeat("00", 256)) {
			t.Errorf("the backend saw %v, want 256 random bytes", got)
		}
	})
}

// TestWarmupFailsTheLoad: a sample whose responses carry errors, or that
// the server cannot make, fails the load (INVALID_ARG) with Triton's text;
// what the load created is finalized.
func TestWarmupFailsTheLoad(t *testing.T) {
	input := `{ key: "IN" value: { data_type: TYPE_INT8 dims: [ 2 ] %s } }`
	tests := []struct {
		name      string
		behaviour coretest.Behaviour
		sample    string
		files     map[string][]byte
		want      string
		executed  bool
	}{
		{name: "responses with errors: each error, each followed by a semicolon",
			behaviour: coretest.Answering(coretest.FailWith(errors.New("boom"))),
			sample:    `batch_size: 2 inputs ` + fmt.Sprintf(input, "zero_data: true"),
			want:      `model "m" instance "m_0": failed to run warmup sample 'w': boom; boom; `, executed: true},
		{name: "a variable dimension",
			sample: `batch_size: 1 inputs { key: "IN" value: { data_type: TYPE_INT8 dims: [ -1 ] zero_data: true } }`,
			want:   `model "m": model_warmup 'w': warmup setting expects all variable-size dimensions are specified for input 'IN'`},
		{name: "a file shorter than a row",
			sample: `batch_size: 1 inputs ` + fmt.Sprintf(input, `input_data_file: "short.bin"`),
			files:  map[string][]byte{"warmup/short.bin": {1}},
			want:   `[request id: <id_unknown>] warmup setting expects 2 bytes, but the data provided from short.binonly has 1 bytes`},
		{name: "a file outside the model directory",
			sample: `batch_size: 1 inputs ` + fmt.Sprintf(input, `input_data_file: "../../x"`),
			want:   `input 'IN': input_data_file: "../../x" must be a relative path inside`},
		{name: "no data",
			sample: `batch_size: 1 inputs ` + fmt.Sprintf(input, ""),
			want:   `[request id: <id_unknown>] warmup setting expects input 'IN' to have input_data_type set`},
		{name: "a data type the model does not take",
			sample: `batch_size: 1 inputs { key: "IN" value: { data_type: TYPE_INT32 dims: [ 2 ] zero_data: true } }`,
			want:   `model "m": model_warmup 'w': [request id: <id_unknown>] inference input 'IN' data-type is 'INT32', but model 'm' expects 'INT8'`},
		{name: "more requests than a warmup execution holds",
			sample: `batch_size: 100000 inputs ` + fmt.Sprintf(input, "zero_data: true"),
			want:   `batch_size 100000 is more than 4096`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := coretest.NewProvider()
			if tc.behaviour != nil {
				p.Set("m", tc.behaviour)
			}
			srv := coretest.Serve(t, core.Options{Backends: p, ExplicitModelControl: true}, coretest.ModelDir{Name: "m", Files: tc.files, Config: `backend: "go"
input [ { name: "IN" data_type: TYPE_INT8 dims: [ 2 ] } ]
output [ { name: "OUT" data_type: TYPE_INT8 dims: [ 2 ] } ]
model_warmup [ { name: "w" ` + tc.sample + ` } ]`})
			coretest.WantError(t, "load", srv.LoadModel("m"), core.CodeInvalidArg, tc.want)
			if got := len(p.Executions("m")) > 0; got != tc.executed {
				t.Errorf("executed: %v, want %v", got, tc.executed)
			}
			p.WaitEvent(t, "finalize instance m/m_0")
			p.WaitEvent(t, "finalize model m")
		})
	}
}

// TestWarmupBeforeReady: the model is not ready while its warmup runs; a
// decoupled model's warmup request is done at its final flag.
func TestWarmupBeforeReady(t *testing.T) {
	t.Parallel()
	gate := coretest.NewGate(t)
	p := coretest.NewProvider().Set("m", coretest.Async(coretest.Then(coretest.Send(false), coretest.After(gate, coretest.SendFinal()))))
	srv := coretest.Serve(t, core.Options{Backends: p, ExplicitModelControl: true}, coretest.ModelDir{Name: "m", Config: vectorConfig(decoupled, `
model_warmup [ { name: "w" batch_size: 1 inputs { key: "INPUT0" value: { data_type: TYPE_INT32 dims: [ 2 ] zero_data: true } } } ]`)})
	loaded := make(chan error, 1)
	go func() { loaded <- srv.LoadModel("m") }()
	p.WaitCalls(t, "", "Send", 1) // the warmup request had its first response
	if _, err := srv.Model("m", 0); err == nil {
		t.Error("the model is ready while its warmup waits for its final flag")
	}
	select {
	case err := <-loaded:
		t.Fatalf("the load returned (%v) before the warmup's final flag", err)
	default:
	}
	gate.Open()
	if err := <-loaded; err != nil {
		t.Fatal(err)
	}
	got := coretest.Infer(t, srv, coretest.Request("m", "client", coretest.Int32Input("INPUT0", []int64{1}, 5))).Wait(t)
	if len(got.Responses) != 1 || got.Responses[0].Err != nil || !got.FlagsOnlyFinal {
		t.Fatalf("the client's request got %+v, want one response and a flags-only final", got)
	}
	if n := len(p.Executions("m")); n != 2 {
		t.Errorf("%d executions, want the warmup's and the client's", n)
	}
}

// TestWarmupIsBoundedByTheCallTimeout: a sample that does not finish
// within the backend call timeout fails the load, naming it.
func TestWarmupIsBoundedByTheCallTimeout(t *testing.T) {
	t.Parallel()
	gate := coretest.NewGate(t)
	p := coretest.NewProvider().Set("m", coretest.Gated(gate, empty()))
	srv := coretest.Serve(t, core.Options{Backends: p, ExplicitModelControl: true, BackendCallTimeout: 200 * time.Millisecond},
		coretest.ModelDir{Name: "m", Config: vectorConfig(`
model_warmup [ { name: "w" batch_size: 1 inputs { key: "INPUT0" value: { data_type: TYPE_INT32 dims: [ 2 ] zero_data: true } } } ]`)})
	coretest.WantError(t, "load", srv.LoadModel("m"), core.CodeUnavailable, `warmup sample "w" on instance "m_0" did not return within 200ms`)
	gate.Open()
	p.WaitEvent(t, "finalize model m")
	testenv.WaitUntil(t, "the model to be unavailable", func() bool {
		for _, st := range srv.RepositoryIndex() {
			if st.Name == "m" && st.Readiness == core.ModelUnavailable {
				return true
			}
		}
		return false
	})
}
