package abi_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// accumulateConfig serves testdata/accumulate.c: a sequence model whose
// running sum lives in implicit state, with a START control it ignores
// (the host still adds it).
func accumulateConfig(maxBatch, instances int) string {
	return fmt.Sprintf(`name: "accumulate"
backend: "accumulate"
max_batch_size: %d
input [ { name: "INPUT" data_type: TYPE_INT32 dims: [ 1 ] } ]
output [ { name: "OUTPUT" data_type: TYPE_INT32 dims: [ 1 ] } ]
sequence_batching {
  max_sequence_idle_microseconds: 5000000
  control_input [ { name: "START" control [ { kind: CONTROL_SEQUENCE_START int32_false_true: [ 0, 1 ] } ] } ]
  state [ { input_name: "INPUT_STATE" output_name: "OUTPUT_STATE" data_type: TYPE_INT32 dims: [ 1 ] } ]
}
instance_group [ { count: %d kind: KIND_CPU } ]
`, maxBatch, instances)
}

// accStep is one request of a sequence and the OUTPUT it must get.
type accStep struct {
	corr  core.CorrelationID
	flags uint32
	in    int32
	want  int32
}

func TestAccumulateKeepsOneRunningSumPerSequence(t *testing.T) {
	t.Parallel()
	lib := fixture(t, "accumulate", "accumulate.c")
	num, str := core.CorrelationID{Uint: 11}, core.CorrelationID{String: "bee", IsString: true}
	start, end := core.RequestFlagSequenceStart, core.RequestFlagSequenceEnd
	steps := []accStep{
		{num, start, 1, 1},
		{str, start, 10, 10},
		{num, 0, 2, 3},
		{str, 0, 20, 30},
		{num, 0, 3, 6},
		{num, start, 5, 5}, // START on a running sequence: the sum starts over
		{str, 0, 30, 60},
		{num, 0, 4, 9},
		{num, end, 1, 10},
		{str, end, 40, 100},
		{num, start | end, 7, 7}, // a new sequence with the same id starts from zero
	}
	for _, tt := range []struct {
		name                string
		maxBatch, instances int
	}{
		{"two instances", 0, 2},
		{"two slots on one batching instance", 2, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			repo := testenv.Repository(t, testenv.Model{Name: "accumulate", Config: accumulateConfig(tt.maxBatch, tt.instances), Files: []string{lib}})
			srv := startServer(t, repo)
			shape := []int64{1}
			if tt.maxBatch > 0 {
				shape = []int64{1, 1}
			}
			request := func(i int, s accStep) *core.Submission {
				return &core.Submission{Model: "accumulate", ID: fmt.Sprint(i), CorrelationID: s.corr, Flags: s.flags,
					Inputs: []core.Input{core.NewInput("INPUT", core.TypeInt32, shape, int32s(s.in))}}
			}
			// One at a time, then all at once: the order within each
			// sequence is kept either way.
			for i, s := range steps {
				checkSum(t, infer(t, srv, request(i, s)), s.want)
			}
			collectors := make([]*collector, len(steps))
			for i, s := range steps {
				collectors[i] = newCollector()
				if err := srv.Infer(context.Background(), request(i, s), collectors[i].fn); err != nil {
					t.Fatalf("Infer %d: %v", i, err)
				}
			}
			for i, c := range collectors {
				checkSum(t, c.wait(t), steps[i].want)
			}
		})
	}
}

func TestAccumulateStateErrorsAndDroppedStates(t *testing.T) {
	t.Parallel()
	lib := fixture(t, "accumulate", "accumulate.c")
	repo := testenv.Repository(t, testenv.Model{Name: "accumulate", Config: accumulateConfig(0, 1), Files: []string{lib}})
	srv := startServer(t, repo)
	id := core.CorrelationID{Uint: 3}
	send := func(flags uint32, in int32) []event {
		return infer(t, srv, &core.Submission{Model: "accumulate", CorrelationID: id, Flags: flags,
			Inputs: []core.Input{core.NewInput("INPUT", core.TypeInt32, []int64{1}, int32s(in))}})
	}
	checkSum(t, send(core.RequestFlagSequenceStart, 4), 4)

	// StateNew with a name that is not a configured state output.
	events := send(0, -1)
	if len(events) != 1 || events[0].resp == nil || core.CodeOf(events[0].resp.Err) != core.CodeInvalidArg ||
		!strings.Contains(events[0].resp.Err.Error(), `"NOT_A_STATE" is not a valid state name`) {
		t.Fatalf("StateNew(NOT_A_STATE): got %+v, want an INVALID_ARG error response naming the state", events)
	}
	// A state created but never updated is freed at release; the sequence
	// keeps the state it had.
	checkSum(t, send(0, -2), 4)
	checkSum(t, send(core.RequestFlagSequenceEnd, 1), 5)
	// startServer's cleanup checks that no state object is left.
}

// checkSum checks that events are one final response with OUTPUT = want.
func checkSum(t *testing.T, events []event, want int32) {
	t.Helper()
	if len(events) != 1 || !events[0].final || events[0].resp == nil {
		t.Fatalf("got %+v, want one final response", events)
	}
	resp := events[0].resp
	if resp.Err != nil {
		t.Fatalf("request: %v", resp.Err)
	}
	if got := scalarInt32(t, resp, "OUTPUT"); got != want {
		t.Errorf("OUTPUT = %d, want %d", got, want)
	}
}
