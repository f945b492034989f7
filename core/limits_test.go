package core_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/coretest"
)

// stateModel is a sequence model from INPUT to OUTPUT with the given
// max_batch_size and sequence_batching body.
func stateModel(maxBatch int, batching string) string {
	return fmt.Sprintf(`backend: "go"
max_batch_size: %d
input [ { name: "INPUT" data_type: TYPE_INT32 dims: [ 1 ] } ]
output [ { name: "OUTPUT" data_type: TYPE_INT32 dims: [ 1 ] } ]
sequence_batching { %s }`, maxBatch, batching)
}

// state is a sequence_batching state entry STATE_IN/STATE_OUT of type and
// dims, with extra fields (an initial_state).
func state(dtype, dims, extra string) string {
	return fmt.Sprintf(`state [ { input_name: "STATE_IN" output_name: "STATE_OUT" data_type: %s dims: %s %s } ]`, dtype, dims, extra)
}

// TestOversizedModelsDoNotLoad: a configuration that asks the server to
// allocate more than it holds (a sequence state or its initial_state past
// MaxTensorBytes or past 64 bits, too many sequence slots or instances)
// fails to load with an error naming the model, what is too large and the
// limit, before anything that large is allocated; the other model serves.
func TestOversizedModelsDoNotLoad(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		config string
		files  map[string][]byte
		limit  int64 // MaxTensorBytes (0: the default)
		parts  []string
	}{
		{name: "state dims past the limit, without initial_state", config: stateModel(0, state("TYPE_INT32", "[ 1099511627776 ]", "")),
			parts: []string{`"STATE_IN"`, "[1099511627776]", "4398046511104 bytes", "268435456 bytes (MaxTensorBytes)"}},
		{name: "state dims past the limit, batching", config: stateModel(4, state("TYPE_FP64", "[ 65536, 1024 ]", "")),
			parts: []string{`"STATE_IN"`, "[1,65536,1024]", "536870912 bytes", "MaxTensorBytes"}},
		{name: "state dims past 64 bits", config: stateModel(0, state("TYPE_INT32", "[ 4294967296, 4294967296 ]", "")),
			parts: []string{`"STATE_IN"`, "more elements than an int64 counts"}},
		{name: "state bytes past 64 bits", config: stateModel(0, state("TYPE_INT64", "[ 2305843009213693952 ]", "")),
			parts: []string{`"STATE_IN"`, "more bytes than an int64 counts", "MaxTensorBytes"}},
		{name: "BYTES state past the limit", config: stateModel(0, state("TYPE_STRING", "[ 100000000 ]", "")),
			parts: []string{`"STATE_IN"`, "400000000 bytes", "MaxTensorBytes"}},
		{name: "zero initial_state past the limit", config: stateModel(0, state("TYPE_INT64", "[ -1 ]",
			`initial_state: { data_type: TYPE_INT64 dims: [ 1073741824 ] zero_data: true name: "zeros" }`)),
			parts: []string{`"STATE_IN"`, "initial_state", "8589934592 bytes", "MaxTensorBytes"}},
		{name: "initial_state file past the limit", config: stateModel(0, state("TYPE_INT32", "[ -1 ]",
			`initial_state: { data_type: TYPE_INT32 dims: [ 1000 ] data_file: "big" name: "from file" }`)),
			files: map[string][]byte{"initial_state/big": make([]byte, 4000)}, limit: 1000,
			parts: []string{`"STATE_IN"`, "initial_state", "4000 bytes", "1000 bytes (MaxTensorBytes)"}},
		{name: "BYTES initial_state file past the limit", config: stateModel(0, state("TYPE_STRING", "[ 1 ]",
			`initial_state: { data_type: TYPE_STRING dims: [ 1 ] data_file: "text" name: "from file" }`)),
			files: map[string][]byte{"initial_state/text": core.EncodeBytes(make([]byte, 2000))}, limit: 1000,
			parts: []string{`"STATE_IN"`, "initial_state", "2004 bytes", "1000 bytes (MaxTensorBytes)"}},
		{name: "input dims past 64 bits", config: `backend: "go"
max_batch_size: 0
input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ 4611686018427387904 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ -1 ] } ]`,
			parts: []string{`input "INPUT0"`, "[4611686018427387904]", "more bytes than an int64 counts", "MaxTensorBytes"}},
		{name: "output dims past the limit", config: `backend: "go"
max_batch_size: 4
input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ -1, 1000, 100000 ] } ]`,
			parts: []string{`output "OUTPUT0"`, "[1,1,1000,100000]", "400000000 bytes", "MaxTensorBytes"}},
		{name: "too many sequence slots", config: stateModel(100000, state("TYPE_INT32", "[ 1 ]", "")),
			parts: []string{"100000 sequence slots", "65536"}},
		{name: "too many instances", config: vectorConfig(`instance_group [ { count: 2147483647 kind: KIND_CPU } ]`),
			parts: []string{"instance_group", "4096 instances"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := coretest.NewProvider()
			srv := coretest.Serve(t, core.Options{Backends: p, MaxTensorBytes: tc.limit},
				coretest.ModelDir{Name: "big", Config: tc.config, Files: tc.files},
				coretest.ModelDir{Name: "m", Config: vectorConfig()})
			for _, st := range srv.RepositoryIndex() {
				if st.Name != "big" {
					continue
				}
				if st.Readiness != core.ModelUnavailable {
					t.Errorf("big is %v, want UNAVAILABLE", st.Readiness)
				}
				for _, part := range append([]string{`model "big"`}, tc.parts...) {
					if !strings.Contains(st.Reason, part) {
						t.Errorf("reason %q does not mention %q", st.Reason, part)
					}
				}
			}
			coretest.Succeeded(t, coretest.Infer(t, srv, vector("r", 1)))
			// Whatever the backend created for big was finalized.
			events := p.Events()
			loaded := slices.Contains(events, "load big")
			if loaded != slices.Contains(events, "finalize model big") {
				t.Errorf("events %v: the backend's model big was not finalized", events)
			}
		})
	}
}

// TestTensorsOverMaxTensorBytesAreRefused: an input larger than
// MaxTensorBytes is refused with INVALID_ARG naming the model and the
// input, before the backend sees it; an output larger becomes an error
// response naming it; a state update larger is refused; tensors of exactly
// the limit go through.
func TestTensorsOverMaxTensorBytesAreRefused(t *testing.T) {
	t.Parallel()
	const limit = 16
	p := coretest.NewProvider()
	srv := coretest.Serve(t, core.Options{Backends: p, MaxTensorBytes: limit},
		coretest.ModelDir{Name: "m", Config: vectorConfig()},
		coretest.ModelDir{Name: "text", Config: `backend: "go"
input [ { name: "TEXT" data_type: TYPE_STRING dims: [ -1 ] } ]
output [ { name: "OUT" data_type: TYPE_STRING dims: [ -1 ] } ]`})

	ok := coretest.Infer(t, srv, vector("four", 1, 2, 3, 4))
	coretest.Succeeded(t, ok)
	coretest.WantError(t, "five INT32", srv.Infer(t.Context(), vector("five", 1, 2, 3, 4, 5), coretest.NewCollector().Receive),
		core.CodeInvalidArg, `model "m"`, `input "INPUT0"`, "20 bytes", "16 bytes (MaxTensorBytes)")
	text := func(id string, size int) *core.Submission {
		return coretest.Request("text", id, core.NewInput("TEXT", core.TypeBytes, []int64{1}, core.EncodeBytes(make([]byte, size))))
	}
	coretest.Succeeded(t, coretest.Infer(t, srv, text("twelve", 12)))
	coretest.WantError(t, "BYTES of 17 bytes", srv.Infer(t.Context(), text("thirteen", 13), coretest.NewCollector().Receive),
		core.CodeInvalidArg, `model "text"`, `input "TEXT"`, "17 bytes", "MaxTensorBytes")
	if p.Executed("five") || p.Executed("thirteen") {
		t.Error("the backend saw a refused request")
	}

	p.Set("m", coretest.Answering(coretest.Reply(func(r *core.Request) *core.Response {
		n := 4 * len(r.Inputs()[0].Buffers[0])
		return &core.Response{Outputs: []core.Output{{Name: "OUTPUT0", DataType: core.TypeInt32, Shape: []int64{int64(n / 4)}, Data: make([]byte, n)}}}
	})))
	coretest.Succeeded(t, coretest.Infer(t, srv, vector("out16", 1)))
	resp := coretest.Infer(t, srv, vector("out32", 1, 2)).Single(t)
	coretest.WantError(t, "an output of 32 bytes", resp.Err, core.CodeInternal, `model "m"`, `output "OUTPUT0"`, "32 bytes", "MaxTensorBytes")
}

// TestOversizedModelFailsAnExplicitLoad: under explicit model control,
// loading a model whose sequence state is past MaxTensorBytes fails with
// the reason, and the server goes on serving the model it had loaded.
func TestOversizedModelFailsAnExplicitLoad(t *testing.T) {
	t.Parallel()
	p := coretest.NewProvider()
	srv := coretest.Serve(t, core.Options{Backends: p, ExplicitModelControl: true, StartupModels: []string{"m"}},
		coretest.ModelDir{Name: "big", Config: stateModel(0, state("TYPE_INT32", "[ 1099511627776 ]", ""))},
		coretest.ModelDir{Name: "m", Config: vectorConfig()})
	var err error
	coretest.Track(t, func() { err = srv.LoadModel("big") })
	coretest.WantError(t, "LoadModel(big)", err, core.CodeInvalidArg, `model "big"`, `"STATE_IN"`, "MaxTensorBytes")
	coretest.Succeeded(t, coretest.Infer(t, srv, vector("r", 1)))
}

// TestOversizedTensorsFailWhateverTheConfigSource: a configuration whose
// input is larger than MaxTensorBytes fails to load with the same error
// whether it is the directory's config.pbtxt, the override of a load
// request, or the override that comes with the request's files; the
// model loaded before goes on serving.
func TestOversizedTensorsFailWhateverTheConfigSource(t *testing.T) {
	const huge = `backend: "go"
max_batch_size: 0
input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ 4611686018427387904 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ -1 ] } ]`
	const hugeJSON = `{"backend":"go","max_batch_size":0,
		"input":[{"name":"INPUT0","data_type":"TYPE_INT32","dims":[4611686018427387904]}],
		"output":[{"name":"OUTPUT0","data_type":"TYPE_INT32","dims":[-1]}]}`
	p := coretest.NewProvider()
	srv := explicitServer(t, p, coretest.ModelDir{Name: "m", Config: vectorConfig()},
		coretest.ModelDir{Name: "fine", Config: vectorConfig()}, coretest.ModelDir{Name: "big", Config: huge})
	if err := loadWith(t, srv, "m", core.LoadOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		source, model string
		opts          core.LoadOptions
	}{
		{"config.pbtxt", "big", core.LoadOptions{}},
		{"config override", "fine", core.LoadOptions{Config: []byte(hugeJSON)}},
		{"config override with files", "uploaded", core.LoadOptions{Config: []byte(hugeJSON), Files: map[string][]byte{"1/weights": []byte("w")}}},
	} {
		err := loadWith(t, srv, tc.model, tc.opts)
		coretest.WantError(t, tc.source, err, core.CodeInvalidArg, fmt.Sprintf("load failed for model '%s'", tc.model),
			`input "INPUT0"`, "[4611686018427387904]", "more bytes than an int64 counts", "MaxTensorBytes")
	}
	coretest.Succeeded(t, coretest.Infer(t, srv, vector("r", 1)))
	if err := srv.UnloadModel(t.Context(), "m"); err != nil {
		t.Fatal(err)
	}
	if slices.Contains(p.Events(), "load fine") || slices.Contains(p.Events(), "load uploaded") {
		t.Errorf("events %v: the backend was asked to load a refused configuration", p.Events())
	}
}
