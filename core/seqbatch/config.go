package seqbatch

import (
	"encoding/binary"
	"math"
	"time"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/configpb"
)

// maxSlots bounds the sequence slots of one instance (max_batch_size for
// the direct strategy, max_candidate_sequences for oldest), which the
// batcher allocates up front and scans for every new sequence: a
// configuration that asks for more fails to load instead of exhausting
// memory.
const maxSlots = 1 << 16

// sequenceConfig is what the sequence batcher reads from sequence_batching,
// prepared once per model version.
type sequenceConfig struct {
	idle      time.Duration // max_sequence_idle_microseconds (normalization sets 1s for 0)
	oldest    bool          // strategy oldest (otherwise direct)
	slots     int           // sequence slots per instance
	maxBatch  int           // requests per execution: max(1, max_batch_size)
	batchDim  bool          // the model batches: control and state tensors get a leading 1
	delay     time.Duration // max_queue_delay_microseconds of the strategy
	minUtil   float32       // direct.minimum_slot_utilization
	preferred []int         // oldest.preferred_batch_size
	// iterative: iterative_sequence; a request without a correlation id
	// is a sequence of its own, which the backend reschedules until done.
	iterative bool

	controls []boolControl // START, END and READY, in that order when present
	corrID   *corrIDControl
	states   *core.States    // nil when the model declares no state
	provided map[string]bool // inputs the batcher provides (controls and states)
}

// boolControl is a START, END or READY control: one input with the values
// for false and true.
type boolControl struct {
	kind       configpb.ModelSequenceBatching_Control_Kind
	input      string
	dtype      core.DataType
	falseValue []byte
	trueValue  []byte
}

// corrIDControl is the CONTROL_SEQUENCE_CORRID control.
type corrIDControl struct {
	input string
	dtype core.DataType
}

// newSequenceConfig reads the sequence_batching section of m's
// configuration. Control inputs were validated with the configuration;
// implicit states are checked by core.NewStates as Triton's sequence
// batcher checks them when it is created (initial_state of the right type
// and shape, its data file present and large enough).
func newSequenceConfig(m *core.Model) (*sequenceConfig, error) {
	sb := m.Config().GetSequenceBatching()
	c := &sequenceConfig{
		iterative: sb.GetIterativeSequence(),
		idle:      time.Duration(sb.GetMaxSequenceIdleMicroseconds()) * time.Microsecond,
		maxBatch:  int(max(m.MaxBatchSize(), 1)),
		batchDim:  m.MaxBatchSize() > 0,
		provided:  map[string]bool{},
	}
	if c.idle <= 0 {
		c.idle = time.Second
	}
	c.slots = c.maxBatch
	if o := sb.GetOldest(); o != nil {
		c.oldest = true
		if o.GetMaxCandidateSequences() > 0 {
			c.slots = int(o.GetMaxCandidateSequences())
		}
		c.delay = time.Duration(o.GetMaxQueueDelayMicroseconds()) * time.Microsecond
		for _, p := range o.GetPreferredBatchSize() {
			c.preferred = append(c.preferred, int(p))
		}
	} else if d := sb.GetDirect(); d != nil {
		c.delay = time.Duration(d.GetMaxQueueDelayMicroseconds()) * time.Microsecond
		c.minUtil = d.GetMinimumSlotUtilization()
	}
	if c.slots > maxSlots {
		return nil, core.Errorf(core.CodeInvalidArg, "model %q: sequence_batching asks for %d sequence slots per instance (max_batch_size, or oldest.max_candidate_sequences); at most %d are supported", m.Name(), c.slots, maxSlots)
	}
	for _, ci := range sb.GetControlInput() {
		for _, ctl := range ci.GetControl() {
			c.provided[ci.GetName()] = true
			if ctl.GetKind() == configpb.ModelSequenceBatching_Control_CONTROL_SEQUENCE_CORRID {
				c.corrID = &corrIDControl{input: ci.GetName(), dtype: core.DataType(ctl.GetDataType())}
				continue
			}
			c.controls = append(c.controls, newBoolControl(ci.GetName(), ctl))
		}
	}
	states, err := core.NewStates(m, c.provided)
	if err != nil {
		return nil, err
	}
	c.states = states
	for _, name := range states.InputNames() {
		c.provided[name] = true
	}
	return c, nil
}

func newBoolControl(input string, ctl *configpb.ModelSequenceBatching_Control) boolControl {
	b := boolControl{kind: ctl.GetKind(), input: input}
	switch {
	case len(ctl.GetInt32FalseTrue()) == 2:
		b.dtype = core.TypeInt32
		v := ctl.GetInt32FalseTrue()
		b.falseValue = binary.LittleEndian.AppendUint32(nil, uint32(v[0]))
		b.trueValue = binary.LittleEndian.AppendUint32(nil, uint32(v[1]))
	case len(ctl.GetFp32FalseTrue()) == 2:
		b.dtype = core.TypeFP32
		v := ctl.GetFp32FalseTrue()
		b.falseValue = binary.LittleEndian.AppendUint32(nil, math.Float32bits(v[0]))
		b.trueValue = binary.LittleEndian.AppendUint32(nil, math.Float32bits(v[1]))
	default:
		b.dtype = core.TypeBool
		v := ctl.GetBoolFalseTrue()
		b.falseValue, b.trueValue = []byte{boolByte(v[0])}, []byte{boolByte(v[1])}
	}
	return b
}

func boolByte(v bool) byte {
	if v {
		return 1
	}
	return 0
}
