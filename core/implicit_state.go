package core

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/tritonhost/tritonhost/core/configpb"
	"github.com/tritonhost/tritonhost/internal/repofile"
)

// Implicit state (sequence_batching.state): values a stateful backend reads
// as inputs of each request of a sequence and sets, for the next request,
// through the request (TRITONBACKEND_StateNew, TRITONBACKEND_StateUpdate).
// The sequence batcher keeps a StateRun per sequence and ties it to each
// request it dispatches (SchedulerData.States); the backend reaches it
// through the request, with core's checks and limits.

// States are the implicit states a model version declares, each with the
// value a sequence starts with. The sequence batcher reads them once, when
// it is made (NewStates), and starts a StateRun for each run of a
// sequence. Only read after NewStates.
type States struct {
	model    *Model
	specs    []*stateSpec
	byOutput map[string]*stateSpec // by output_name
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

// NewStates reads the states m's sequence_batching declares, as Triton's
// sequence batcher checks them when it is made: input and output names
// set, each used once and no state input among reserved (the batcher's
// control inputs), initial_state of the right type and shape, its data file
// inside the model's directory and large enough, and no initial value
// larger than MaxTensorBytes. It returns nil when m declares no state.
func NewStates(m *Model, reserved map[string]bool) (*States, error) {
	sb := m.Config().GetSequenceBatching()
	if len(sb.GetState()) == 0 {
		return nil, nil
	}
	s := &States{model: m, byOutput: map[string]*stateSpec{}}
	inputs := map[string]bool{}
	for _, st := range sb.GetState() {
		spec, err := newStateSpec(m, st, m.maxBatch > 0)
		if err != nil {
			return nil, err
		}
		if reserved[spec.input] || inputs[spec.input] {
			return nil, Errorf(CodeInvalidArg, "model %q: state input name %q is specified more than once (or is also a control input)", m.name, spec.input)
		}
		if s.byOutput[spec.output] != nil {
			return nil, Errorf(CodeInvalidArg, "model %q: state output name %q is specified more than once", m.name, spec.output)
		}
		inputs[spec.input] = true
		s.byOutput[spec.output] = spec
		s.specs = append(s.specs, spec)
	}
	return s, nil
}

// InputNames returns the inputs the states are read from, in
// configuration order.
func (s *States) InputNames() []string {
	if s == nil {
		return nil
	}
	names := make([]string, len(s.specs))
	for i, spec := range s.specs {
		names[i] = spec.input
	}
	return names
}

// StateRun is the implicit state of one run of a sequence, from the
// dispatch of its START request until the sequence ends, times out or
// starts again (a new START gets a new StateRun, so that a late update from
// an earlier run cannot leak into it). Safe for concurrent use.
type StateRun struct {
	states *States

	mu     sync.Mutex
	values map[string]stateValue // by state input name
}

// stateValue is one state tensor. Its slices are never modified once
// stored: an update replaces the value, so a request that was handed the
// previous value keeps reading it undisturbed.
type stateValue struct {
	dtype DataType
	shape []int64
	data  []byte
}

// NewRun returns the state of a new run of a sequence, every state at its
// initial value; nil when s is nil (the model declares no state).
func (s *States) NewRun() *StateRun {
	if s == nil {
		return nil
	}
	run := &StateRun{states: s, values: make(map[string]stateValue, len(s.specs))}
	for _, spec := range s.specs {
		run.values[spec.input] = stateValue{dtype: spec.dtype, shape: spec.initShape, data: spec.initData}
	}
	return run
}

// Inputs returns the current state values as the request inputs the
// backend reads them from. The buffers are shared and must not be
// modified.
func (s *StateRun) Inputs() []Input {
	s.mu.Lock()
	defer s.mu.Unlock()
	ins := make([]Input, 0, len(s.states.specs))
	for _, spec := range s.states.specs {
		v := s.values[spec.input]
		ins = append(ins, NewInput(spec.input, v.dtype, v.shape, v.data))
	}
	return ins
}

// states returns the state run r was dispatched with, or an error naming
// the model when the model keeps no implicit state.
func (r *Request) states(name string) (*StateRun, error) {
	if d := r.sched.Load(); d != nil && d.States != nil {
		return d.States, nil
	}
	return nil, Errorf(CodeInvalidArg, "unable to add state %q. State configuration is missing for model %q", name, r.model.name)
}

func (s *StateRun) spec(name string) (*stateSpec, error) {
	if spec := s.states.byOutput[name]; spec != nil {
		return spec, nil
	}
	names := make([]string, 0, len(s.states.specs))
	for _, spec := range s.states.specs {
		names = append(names, spec.output)
	}
	slices.Sort(names)
	return nil, Errorf(CodeInvalidArg, "state %q is not a valid state name for model %q; its state outputs are [%s]", name, s.states.model.name, strings.Join(quoteAll(names), ", "))
}

// CheckStateOutput reports whether a backend may create the next value of
// state output name for r (TRITONBACKEND_StateNew): r must belong to a
// sequence of a model whose sequence_batching declares that state.
func (r *Request) CheckStateOutput(name string) error {
	s, err := r.states(name)
	if err != nil {
		return err
	}
	_, err = s.spec(name)
	return err
}

// CheckStateSize refuses a state value of size bytes that is larger than
// the server holds (Options.MaxTensorBytes). UpdateState applies it; a
// backend layer that copies state values can apply it first and copy
// nothing.
func (r *Request) CheckStateSize(name string, size int64) error {
	if limit := r.model.maxTensor; size > limit.bytes || size < 0 {
		return Errorf(CodeInvalidArg, "model %q: state %q of request %q: the value is %s", r.model.name, name, r.ID(), limit.tooLarge(size))
	}
	return nil
}

// UpdateState makes data, of dtype and shape, the value of state output
// name for the next request of r's sequence (TRITONBACKEND_StateUpdate).
// The sequence batcher dispatches that request after r's execution returns,
// so an update made during Execute is always seen; a later one (from a
// backend thread) is seen by requests dispatched after it. The data must
// match the shape and type, and is owned by the server afterwards: the
// caller must not modify it.
func (r *Request) UpdateState(name string, dtype DataType, shape []int64, data []byte) error {
	s, err := r.states(name)
	if err != nil {
		return err
	}
	spec, err := s.spec(name)
	if err != nil {
		return err
	}
	bad := func(format string, args ...any) error {
		return Errorf(CodeInvalidArg, "model %q: state %q of request %q: "+format, append([]any{r.model.name, name, r.ID()}, args...)...)
	}
	if !dtype.Valid() {
		return bad("invalid data type %d", dtype)
	}
	count := ElementCount(shape)
	if count < 0 || dtype != TypeBytes && count > math.MaxInt64/int64(dtype.ByteSize()) {
		return bad("shape %s has a negative dimension or more bytes than an int64 counts", dimsString(shape))
	}
	if err := r.CheckStateSize(name, int64(len(data))); err != nil {
		return err
	}
	if dtype == TypeBytes {
		if got := countBytesElements([][]byte{data}); got != count {
			return bad("the buffer holds %d BYTES element(s), shape %s needs %d", got, dimsString(shape), count)
		}
	} else if want := count * int64(dtype.ByteSize()); int64(len(data)) != want {
		return bad("the buffer has %d bytes, shape %s of %s needs %d", len(data), dimsString(shape), dtype, want)
	}
	s.mu.Lock()
	s.values[spec.input] = stateValue{dtype: dtype, shape: slices.Clone(shape), data: data}
	s.mu.Unlock()
	if r.forward != nil && r.forward.updateState != nil {
		r.forward.updateState(name, dtype, shape, data)
	}
	return nil
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
			data, err := m.readFile(path, m.maxTensor, false)
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
		data, err := m.readFile(path, tensorLimit{bytes: want}, true)
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

// readFile reads the regular file at path, through the server's bounded
// reader (Options.RepositoryFiles): all of it, failing when it is larger
// than limit, or with prefix set its first limit bytes (the rest is not
// read).
func (m *Model) readFile(path string, limit tensorLimit, prefix bool) ([]byte, error) {
	files := m.srv.files
	if prefix {
		return files.ReadPrefix(path, limit.bytes)
	}
	data, err := files.ReadFileLimit(path, limit.bytes)
	if tl := (*repofile.TooLargeError)(nil); errors.As(err, &tl) {
		if tl.Size < 0 {
			return nil, fmt.Errorf("%s grew past %d bytes, the largest tensor the server holds (%s), as it was read", path, limit.bytes, limit.setting)
		}
		return nil, fmt.Errorf("%s is %s", path, limit.tooLarge(tl.Size))
	}
	return data, err
}

// zeroTensor returns count zero elements of dtype; for BYTES, count empty
// strings (each a zero length prefix).
func zeroTensor(dtype DataType, count int64) []byte {
	if dtype == TypeBytes {
		return make([]byte, 4*count)
	}
	return make([]byte, count*int64(dtype.ByteSize()))
}
