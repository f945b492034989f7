package core

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"time"

	"tritonhost/core/configpb"
)

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

	controls []boolControl // START, END and READY, in that order when present
	corrID   *corrIDControl
	states   []*stateSpec
	byOutput map[string]*stateSpec // by output_name
	provided map[string]bool       // inputs the batcher provides (controls and states)
}

// boolControl is a START, END or READY control: one input with the values
// for false and true.
type boolControl struct {
	kind       configpb.ModelSequenceBatching_Control_Kind
	input      string
	dtype      DataType
	falseValue []byte
	trueValue  []byte
}

// corrIDControl is the CONTROL_SEQUENCE_CORRID control.
type corrIDControl struct {
	input string
	dtype DataType
}

// stateSpec is one implicit state: the input the backend reads it from, the
// output name it writes the next value under, and its value at the start of
// a sequence.
type stateSpec struct {
	input, output string
	dtype         DataType
	initShape     []int64 // with the batch dimension when the model batches
	initData      []byte  // never modified; shared by every new sequence
}

// newSequenceConfig reads the sequence_batching section of m's
// configuration. Control inputs were validated with the configuration;
// implicit states are checked here as Triton's sequence batcher checks them
// when it is created (initial_state of the right type and shape, its data
// file present and large enough).
func newSequenceConfig(m *Model) (*sequenceConfig, error) {
	sb := m.cfg.GetSequenceBatching()
	c := &sequenceConfig{
		idle:     time.Duration(sb.GetMaxSequenceIdleMicroseconds()) * time.Microsecond,
		maxBatch: int(max(m.maxBatch, 1)),
		batchDim: m.maxBatch > 0,
		byOutput: map[string]*stateSpec{},
		provided: map[string]bool{},
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
	if c.slots > maxSequenceSlots {
		return nil, Errorf(CodeInvalidArg, "model %q: sequence_batching asks for %d sequence slots per instance (max_batch_size, or oldest.max_candidate_sequences); at most %d are supported", m.name, c.slots, maxSequenceSlots)
	}
	for _, ci := range sb.GetControlInput() {
		for _, ctl := range ci.GetControl() {
			c.provided[ci.GetName()] = true
			if ctl.GetKind() == configpb.ModelSequenceBatching_Control_CONTROL_SEQUENCE_CORRID {
				c.corrID = &corrIDControl{input: ci.GetName(), dtype: DataType(ctl.GetDataType())}
				continue
			}
			c.controls = append(c.controls, newBoolControl(ci.GetName(), ctl))
		}
	}
	for _, st := range sb.GetState() {
		spec, err := newStateSpec(m, st, c.batchDim)
		if err != nil {
			return nil, err
		}
		if c.provided[spec.input] {
			return nil, Errorf(CodeInvalidArg, "model %q: state input name %q is specified more than once (or is also a control input)", m.name, spec.input)
		}
		if c.byOutput[spec.output] != nil {
			return nil, Errorf(CodeInvalidArg, "model %q: state output name %q is specified more than once", m.name, spec.output)
		}
		c.provided[spec.input] = true
		c.byOutput[spec.output] = spec
		c.states = append(c.states, spec)
	}
	return c, nil
}

func newBoolControl(input string, ctl *configpb.ModelSequenceBatching_Control) boolControl {
	b := boolControl{kind: ctl.GetKind(), input: input}
	switch {
	case len(ctl.GetInt32FalseTrue()) == 2:
		b.dtype = TypeInt32
		v := ctl.GetInt32FalseTrue()
		b.falseValue = binary.LittleEndian.AppendUint32(nil, uint32(v[0]))
		b.trueValue = binary.LittleEndian.AppendUint32(nil, uint32(v[1]))
	case len(ctl.GetFp32FalseTrue()) == 2:
		b.dtype = TypeFP32
		v := ctl.GetFp32FalseTrue()
		b.falseValue = binary.LittleEndian.AppendUint32(nil, math.Float32bits(v[0]))
		b.trueValue = binary.LittleEndian.AppendUint32(nil, math.Float32bits(v[1]))
	default:
		b.dtype = TypeBool
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

// newStateSpec checks one state entry and prepares its initial value:
// initial_state's data (zeros or a file under <model>/initial_state/, which
// must not lead out of the model's directory; see modelFile) with
// initial_state's dims, or without initial_state zeros shaped by the state's
// dims with every variable dimension 1 (Triton leaves that memory
// uninitialized; zeros make it deterministic). A BYTES state starts as
// empty strings. The initial value is never larger than MaxTensorBytes:
// its size is checked before it is allocated or read.
func newStateSpec(m *Model, st *configpb.ModelSequenceBatching_State, batchDim bool) (*stateSpec, error) {
	bad := func(format string, args ...any) error {
		return Errorf(CodeInvalidArg, "model %q: sequence_batching.state %q: %s", m.name, st.GetInputName(), fmt.Sprintf(format, args...))
	}
	if st.GetInputName() == "" || st.GetOutputName() == "" {
		return nil, bad("input_name and output_name must both be set")
	}
	spec := &stateSpec{input: st.GetInputName(), output: st.GetOutputName(), dtype: DataType(st.GetDataType())}
	if !spec.dtype.Valid() {
		return nil, bad("data_type must be set")
	}
	if batchDim {
		spec.initShape = append(spec.initShape, 1)
	}
	inits := st.GetInitialState()
	if len(inits) > 1 {
		return nil, bad("initial_state must contain exactly one or zero element, found %d", len(inits))
	}
	if len(inits) == 0 {
		for _, d := range st.GetDims() {
			spec.initShape = append(spec.initShape, max(d, 1))
		}
		count, err := m.initialStateSize(spec, "its initial value (zeros shaped by its dims)")
		if err != nil {
			return nil, bad("%v", err)
		}
		spec.initData = zeroTensor(spec.dtype, count)
		return spec, nil
	}
	init := inits[0]
	if init.GetDataType() != st.GetDataType() {
		return nil, bad("the data type of initial_state does not match the state's data type")
	}
	if init.GetName() == "" {
		return nil, bad("initial_state must have a name")
	}
	if len(init.GetDims()) != len(st.GetDims()) {
		return nil, bad("initial_state has %d dimension(s), the state %d", len(init.GetDims()), len(st.GetDims()))
	}
	for i, d := range init.GetDims() {
		if d < 0 {
			return nil, bad("initial_state dims %s contain a variable dimension", dimsString(init.GetDims()))
		}
		if sd := st.GetDims()[i]; sd != -1 && sd != d {
			return nil, bad("initial_state dim %d does not match the state's dim %d", d, sd)
		}
		spec.initShape = append(spec.initShape, d)
	}
	count, err := m.initialStateSize(spec, "initial_state")
	if err != nil {
		return nil, bad("%v", err)
	}
	switch init.GetStateData().(type) {
	case *configpb.ModelSequenceBatching_InitialState_ZeroData:
		spec.initData = zeroTensor(spec.dtype, count)
	case *configpb.ModelSequenceBatching_InitialState_DataFile:
		path, err := modelFile(m.dir, "initial_state", init.GetDataFile())
		if err != nil {
			return nil, bad("initial_state data_file: %v", err)
		}
		if spec.dtype == TypeBytes {
			data, err := readFile(path, m.maxTensor, false)
			if err != nil {
				return nil, bad("initial_state data_file: %v", err)
			}
			if countBytesElements([][]byte{data}) != count {
				return nil, bad("initial_state data_file %s does not hold %d BYTES element(s)", path, count)
			}
			spec.initData = data
			break
		}
		want, _ := fixedByteSize(spec.dtype, count) // initialStateSize checked it
		data, err := readFile(path, tensorLimit{bytes: want}, true)
		if err != nil {
			return nil, bad("initial_state data_file: %v", err)
		}
		if int64(len(data)) < want {
			return nil, bad("initial_state expects %d bytes, but data_file %s only has %d bytes", want, path, len(data))
		}
		spec.initData = data
	default:
		return nil, bad("initial_state must set zero_data or data_file")
	}
	return spec, nil
}

// initialStateSize returns the element count of a state's initial value,
// shaped spec.initShape, after checking that its size (for BYTES, that
// many empty strings at least) is within MaxTensorBytes: a configuration
// cannot make the server allocate more, whatever its dims say.
func (m *Model) initialStateSize(spec *stateSpec, what string) (int64, error) {
	count := ElementCount(spec.initShape)
	if count < 0 {
		return 0, fmt.Errorf("%s, shape %s, has more elements than an int64 counts", what, dimsString(spec.initShape))
	}
	size, ok := fixedByteSize(spec.dtype, count)
	if !ok {
		size = -1
	}
	if !ok || size > m.maxTensor.bytes {
		return 0, fmt.Errorf("%s, shape %s of %s, is %s", what, dimsString(spec.initShape), spec.dtype, m.maxTensor.tooLarge(size))
	}
	return count, nil
}

// readFile reads the regular file at path: all of it, failing when it
// is larger than limit, or with prefix set its first limit bytes (the
// rest is not read).
func readFile(path string, limit tensorLimit, prefix bool) ([]byte, error) {
	// Stat first: opening a FIFO would wait for a writer.
	if st, err := os.Stat(path); err != nil {
		return nil, err
	} else if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !prefix && st.Size() > limit.bytes {
		return nil, fmt.Errorf("%s is %s", path, limit.tooLarge(st.Size()))
	}
	data := make([]byte, min(st.Size(), limit.bytes))
	n, err := io.ReadFull(f, data)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) { // a file that shrank: the caller sees it short
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return data[:n:n], nil
}

// zeroTensor returns count zero elements of dtype; for BYTES, count empty
// strings (each a zero length prefix).
func zeroTensor(dtype DataType, count int64) []byte {
	if dtype == TypeBytes {
		return make([]byte, 4*count)
	}
	return make([]byte, count*int64(dtype.ByteSize()))
}
