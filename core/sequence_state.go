package core

import (
	"math"
	"slices"
	"strings"
	"sync"
)

// sequenceStates is the implicit state of one run of a sequence, from the
// dispatch of its START request until the sequence ends, times out or
// starts again (a new START gets a new sequenceStates, so a late update from
// an earlier run cannot leak into it).
type sequenceStates struct {
	model *Model
	cfg   *sequenceConfig

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

// seqTicket ties a dispatched request to its sequence and to the state run
// it was given.
type seqTicket struct {
	seq    *sequence
	states *sequenceStates // nil when the model declares no state
}

func newSequenceStates(m *Model, cfg *sequenceConfig) *sequenceStates {
	if len(cfg.states) == 0 {
		return nil
	}
	s := &sequenceStates{model: m, cfg: cfg, values: make(map[string]stateValue, len(cfg.states))}
	for _, spec := range cfg.states {
		s.values[spec.input] = stateValue{dtype: spec.dtype, shape: spec.initShape, data: spec.initData}
	}
	return s
}

// inputs returns the current state values as the request inputs the
// backend reads them from.
func (s *sequenceStates) inputs() []Input {
	s.mu.Lock()
	defer s.mu.Unlock()
	ins := make([]Input, 0, len(s.cfg.states))
	for _, spec := range s.cfg.states {
		v := s.values[spec.input]
		ins = append(ins, NewInput(spec.input, v.dtype, v.shape, v.data))
	}
	return ins
}

// states returns the state run r was dispatched with, or an error naming
// the model when the model keeps no implicit state.
func (r *Request) states(name string) (*sequenceStates, error) {
	if t := r.seq.Load(); t != nil && t.states != nil {
		return t.states, nil
	}
	return nil, Errorf(CodeInvalidArg, "unable to add state %q. State configuration is missing for model %q", name, r.model.name)
}

func (s *sequenceStates) spec(name string) (*stateSpec, error) {
	if spec := s.cfg.byOutput[name]; spec != nil {
		return spec, nil
	}
	names := make([]string, 0, len(s.cfg.states))
	for _, spec := range s.cfg.states {
		names = append(names, spec.output)
	}
	slices.Sort(names)
	return nil, Errorf(CodeInvalidArg, "state %q is not a valid state name for model %q; its state outputs are [%s]", name, s.model.name, strings.Join(quoteAll(names), ", "))
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
	return nil
}
