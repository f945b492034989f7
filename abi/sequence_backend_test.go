package abi_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// sequenceControl is one control input of sequence_batching.
func sequenceControl(name, kind, values string) string {
	return fmt.Sprintf("{ name: %q control [ { kind: %s %s } ] }", name, kind, values)
}

// sequenceConfig is a model served by the sequence backend: INPUT and
// OUTPUT of dt and dims, and sequence_batching with the given control
// inputs (START and READY as INT32 controls when controls is empty).
func sequenceConfig(name, dt string, maxBatch int, dims string, extra string, controls ...string) string {
	if len(controls) == 0 {
		controls = []string{
			sequenceControl("START", "CONTROL_SEQUENCE_START", "int32_false_true: [ 0, 1 ]"),
			sequenceControl("READY", "CONTROL_SEQUENCE_READY", "int32_false_true: [ 0, 1 ]"),
		}
	}
	return fmt.Sprintf(`name: %q
backend: "sequence"
max_batch_size: %d
sequence_batching { control_input [ %s ] }
input [ { name: "INPUT" data_type: %s dims: %s } ]
output [ { name: "OUTPUT" data_type: %s dims: %s } ]
%s`, name, maxBatch, strings.Join(controls, ", "), dt, dims, dt, dims, extra)
}

// TestSequenceAddsStartToEachRequest: the first request of a sequence gets
// INPUT + START (the value the batcher sends for START: 1, or another the
// configuration gives), the others INPUT back; END and CORRID controls may
// be configured too. Sequences interleave without mixing.
func TestSequenceAddsStartToEachRequest(t *testing.T) {
	t.Parallel()
	withEnd := sequenceConfig("with_end", "TYPE_INT32", 8, "[ 2 ]", "",
		sequenceControl("END", "CONTROL_SEQUENCE_END", "int32_false_true: [ 0, 1 ]"),
		sequenceControl("READY", "CONTROL_SEQUENCE_READY", "int32_false_true: [ 0, 1 ]"),
		`{ name: "CORRID" control [ { kind: CONTROL_SEQUENCE_CORRID data_type: TYPE_UINT64 } ] }`,
		sequenceControl("START", "CONTROL_SEQUENCE_START", "int32_false_true: [ 0, 1 ]"))
	// Without batching an instance holds one sequence; the two sequences
	// interleaved need two.
	const twoSlots = "instance_group [ { count: 2 kind: KIND_CPU } ]\n"
	srv := startServer(t, testenv.Repository(t,
		testenv.Model{Name: "batched", Config: sequenceConfig("batched", "TYPE_INT32", 8, "[ 1 ]", "")},
		testenv.Model{Name: "unbatched", Config: sequenceConfig("unbatched", "TYPE_INT32", 0, "[ 3 ]", twoSlots)},
		testenv.Model{Name: "start_five", Config: sequenceConfig("start_five", "TYPE_INT32", 0, "[ 1 ]", twoSlots,
			sequenceControl("START", "CONTROL_SEQUENCE_START", "int32_false_true: [ 0, 5 ]"),
			sequenceControl("READY", "CONTROL_SEQUENCE_READY", "int32_false_true: [ 0, 1 ]"))},
		testenv.Model{Name: "with_end", Config: withEnd},
	))
	for _, tc := range []struct {
		model string
		shape []int64
		// inputs of two sequences, sent alternately; the first of each
		// starts it, the last ends it
		seqs [2][][]int32
		want [2][][]int32
	}{
		{"batched", []int64{1, 1},
			[2][][]int32{{{0}, {11}, {-7}}, {{100}, {2147483647}, {5}}},
			[2][][]int32{{{1}, {11}, {-7}}, {{101}, {2147483647}, {5}}}},
		{"unbatched", []int64{3},
			[2][][]int32{{{1, 2, 3}, {4, 5, 6}}, {{2147483647, 0, -1}, {7, 8, 9}}},
			[2][][]int32{{{2, 3, 4}, {4, 5, 6}}, {{-2147483648, 1, 0}, {7, 8, 9}}}},
		{"start_five", []int64{1},
			[2][][]int32{{{10}, {20}}, {{-5}, {0}}},
			[2][][]int32{{{15}, {20}}, {{0}, {0}}}},
		{"with_end", []int64{1, 2},
			[2][][]int32{{{3, 4}, {5, 6}, {7, 8}}, {{0, 0}, {1, 1}, {2, 2}}},
			[2][][]int32{{{4, 5}, {5, 6}, {7, 8}}, {{1, 1}, {1, 1}, {2, 2}}}},
	} {
		t.Run(tc.model, func(t *testing.T) {
			for i := range tc.seqs[0] {
				for s := range tc.seqs {
					flags := uint32(0)
					if i == 0 {
						flags |= core.RequestFlagSequenceStart
					}
					if i == len(tc.seqs[s])-1 {
						flags |= core.RequestFlagSequenceEnd
					}
					req := &core.Submission{Model: tc.model, ID: fmt.Sprint(s, "_", i),
						CorrelationID: core.CorrelationID{Uint: uint64(10 + s)}, Flags: flags,
						Inputs: []core.Input{core.NewInput("INPUT", core.TypeInt32, tc.shape, int32s(tc.seqs[s][i]...))}}
					events := infer(t, srv, req)
					if len(events) != 1 || events[0].resp == nil || events[0].resp.Err != nil {
						t.Fatalf("%s: want one successful response, got %+v", req.ID, events)
					}
					o := output(t, events[0].resp, "OUTPUT")
					if o.DataType != core.TypeInt32 || !slices.Equal(o.Shape, tc.shape) || !slices.Equal(o.Data, int32s(tc.want[s][i]...)) {
						t.Errorf("%s: OUTPUT %s %v %x, want INT32 %v %v", req.ID, o.DataType, o.Shape, o.Data, tc.shape, tc.want[s][i])
					}
				}
			}
		})
	}
}

func TestSequenceRefusesBadConfigsAtLoad(t *testing.T) {
	t.Parallel()
	start := sequenceControl("START", "CONTROL_SEQUENCE_START", "int32_false_true: [ 0, 1 ]")
	ready := sequenceControl("READY", "CONTROL_SEQUENCE_READY", "int32_false_true: [ 0, 1 ]")
	tests := []struct {
		name, config string
		want         []string
	}{
		{"no_sequence_batching", strings.Replace(sequenceConfig("no_sequence_batching", "TYPE_INT32", 8, "[ 1 ]", ""),
			"sequence_batching {", "dynamic_batching { }\n#", 1),
			[]string{"'sequence_batching' is not set", "CONTROL_SEQUENCE_START and CONTROL_SEQUENCE_READY"}},
		{"no_ready", sequenceConfig("no_ready", "TYPE_INT32", 8, "[ 1 ]", "", start),
			[]string{"'sequence_batching.control_input' has no CONTROL_SEQUENCE_READY"}},
		{"no_start", sequenceConfig("no_start", "TYPE_INT32", 8, "[ 1 ]", "", ready),
			[]string{"'sequence_batching.control_input' has no CONTROL_SEQUENCE_START"}},
		{"fp32_start", sequenceConfig("fp32_start", "TYPE_INT32", 8, "[ 1 ]", "",
			sequenceControl("START", "CONTROL_SEQUENCE_START", "fp32_false_true: [ 0, 1 ]"), ready),
			[]string{"'sequence_batching.control_input[0].control[0].int32_false_true'", "(START)", "INT32 controls"}},
		{"fp32", sequenceConfig("fp32", "TYPE_FP32", 8, "[ 1 ]", ""),
			[]string{"'input[0].data_type'", "(INPUT) is TYPE_FP32", "TYPE_INT32"}},
		{"dims_differ", strings.Replace(sequenceConfig("dims_differ", "TYPE_INT32", 8, "[ 1 ]", ""),
			`"OUTPUT" data_type: TYPE_INT32 dims: [ 1 ]`, `"OUTPUT" data_type: TYPE_INT32 dims: [ 2 ]`, 1),
			[]string{"'output[0].dims'", "[2]", "[1]"}},
		{"extra_input", sequenceConfig("extra_input", "TYPE_INT32", 8, "[ 1 ]",
			`input [ { name: "OTHER" data_type: TYPE_INT32 dims: [ 1 ] } ]`),
			[]string{"'input' has 2 entries"}},
		{"renamed_output", strings.Replace(sequenceConfig("renamed_output", "TYPE_INT32", 8, "[ 1 ]", ""),
			`name: "OUTPUT"`, `name: "OUT"`, 1),
			[]string{"'output' has no OUTPUT"}},
	}
	models := []testenv.Model{{Name: "good", Config: sequenceConfig("good", "TYPE_INT32", 8, "[ 1 ]", "")}}
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
			for _, w := range append([]string{"sequence backend: model '" + tc.name + "'", "configuration field"}, tc.want...) {
				if !strings.Contains(st.Reason, w) {
					t.Errorf("reason %q does not mention %q", st.Reason, w)
				}
			}
		})
	}
}
