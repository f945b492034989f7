package core

import (
	"fmt"
	"math"
	"time"

	"github.com/tritonhost/tritonhost/core/configpb"
)

// DefaultMaxTensorBytes is Options.MaxTensorBytes when it is left 0: 256 MiB.
const DefaultMaxTensorBytes = 256 << 20

// DefaultEnsembleStepWait is Options.EnsembleStepWait when it is left 0:
// Triton's bound (kMutexTimeoutSeconds) on the wait for a step slot.
const DefaultEnsembleStepWait = 300 * time.Second

// Bounds on what a model configuration can make the server allocate when
// the model loads. Triton has none, and a configuration that asks for more
// would exhaust memory (the runtime then ends the process, whatever
// --exit-on-error says); the model fails to load instead, with an error
// that names the setting.
const (
	// maxInstances bounds the instances of one model version: the
	// instance_group counts, times the GPUs of KIND_GPU groups. Each is a
	// goroutine and an execution context in its backend.
	maxInstances = 1 << 12
)

// MaxTensorDims bounds the dimensions of a tensor's shape. A request may
// give an input at most this many (both frontends refuse more, with
// internal/protocol's MaxTensorDims, which is this), so a model whose
// configuration asks for more, its batch dimension included, could serve
// no request: it fails to load, naming the limit. Its inputs, outputs,
// their reshapes and its sequence states are held to it.
const MaxTensorDims = 64

// checkTensorDims refuses a configuration with a tensor of more than
// MaxTensorDims dimensions, counting the batch dimension of a model that
// batches.
func (m *Model) checkTensorDims(cfg *configpb.ModelConfig) error {
	batch := 0
	if cfg.GetMaxBatchSize() > 0 {
		batch = 1
	}
	check := func(what, name string, dims []int64) error {
		n := len(dims) + batch
		if n <= MaxTensorDims {
			return nil
		}
		with := ""
		if batch > 0 {
			with = ", the batch dimension included"
		}
		return Errorf(CodeInvalidArg, "model %q: %s %q has %d dimensions%s, more than the %d a request's tensor may have",
			m.name, what, name, n, with, MaxTensorDims)
	}
	for _, in := range cfg.GetInput() {
		if err := check("input", in.GetName(), in.GetDims()); err != nil {
			return err
		}
		if rs := in.GetReshape(); rs != nil {
			if err := check("the reshape of input", in.GetName(), rs.GetShape()); err != nil {
				return err
			}
		}
	}
	for _, out := range cfg.GetOutput() {
		if err := check("output", out.GetName(), out.GetDims()); err != nil {
			return err
		}
		if rs := out.GetReshape(); rs != nil {
			if err := check("the reshape of output", out.GetName(), rs.GetShape()); err != nil {
				return err
			}
		}
	}
	for _, st := range cfg.GetSequenceBatching().GetState() {
		if err := check("sequence state", st.GetInputName(), st.GetDims()); err != nil {
			return err
		}
		for _, init := range st.GetInitialState() {
			if err := check("the initial_state of sequence state", st.GetInputName(), init.GetDims()); err != nil {
				return err
			}
		}
	}
	return nil
}

// mulInt64 returns a*b for a, b >= 0, and false when the product does not
// fit in an int64.
func mulInt64(a, b int64) (int64, bool) {
	if a != 0 && b > math.MaxInt64/a {
		return 0, false
	}
	return a * b, true
}

// fixedByteSize returns the byte size of count elements of dtype, counting
// a BYTES element as its 4-byte length prefix (an empty string), and false
// when it does not fit in an int64.
func fixedByteSize(dtype DataType, count int64) (int64, bool) {
	elem := int64(dtype.ByteSize())
	if dtype == TypeBytes {
		elem = 4
	}
	return mulInt64(count, elem)
}

// tensorLimit is the largest tensor the server holds (Options.MaxTensorBytes)
// and the name of the setting an operator changes it with, for messages.
type tensorLimit struct {
	bytes   int64
	setting string
}

// tooLarge describes a tensor of size bytes (-1: more than an int64 counts)
// that the limit refuses.
func (l tensorLimit) tooLarge(size int64) string {
	if size < 0 {
		return fmt.Sprintf("more bytes than an int64 counts, and the largest tensor the server holds is %d bytes (%s)", l.bytes, l.setting)
	}
	return fmt.Sprintf("%d bytes, more than the largest tensor the server holds, %d bytes (%s)", size, l.bytes, l.setting)
}

// checkTensorSizes refuses a configuration with an input or output that
// is larger than the server holds even at its smallest (a batch of one,
// each variable dimension 1): no request to it could be served, and a
// backend that sizes buffers by the dims would be told to allocate that
// much. It runs whatever the configuration's source (config.pbtxt, a load
// request's override, a backend's completion).
func (m *Model) checkTensorSizes(cfg *configpb.ModelConfig) error {
	check := func(kind, name string, dtype DataType, dims []int64) error {
		shape := make([]int64, 0, len(dims)+1)
		if cfg.GetMaxBatchSize() > 0 {
			shape = append(shape, 1)
		}
		for _, d := range dims {
			shape = append(shape, max(d, 1))
		}
		count := ElementCount(shape)
		if count < 0 {
			return Errorf(CodeInvalidArg, "model %q: %s %q: dims %s have more elements than an int64 counts", m.name, kind, name, dimsString(dims))
		}
		size, ok := fixedByteSize(dtype, count)
		if !ok {
			size = -1
		}
		if !ok || size > m.maxTensor.bytes {
			return Errorf(CodeInvalidArg, "model %q: %s %q: shape %s of %s is %s", m.name, kind, name, dimsString(shape), dtype, m.maxTensor.tooLarge(size))
		}
		return nil
	}
	for _, in := range cfg.GetInput() {
		if err := check("input", in.GetName(), DataType(in.GetDataType()), in.GetDims()); err != nil {
			return err
		}
	}
	for _, out := range cfg.GetOutput() {
		if err := check("output", out.GetName(), DataType(out.GetDataType()), out.GetDims()); err != nil {
			return err
		}
	}
	return nil
}
