package core

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"tritonhost/core/configpb"
)

// newRequest validates a client request against the model configuration and
// turns it into a Request: every input is known, of the configured type,
// shaped as the dims allow (with a batch dimension when the model batches),
// and exactly as large as its shape says; every required input is present;
// every requested output exists.
func (m *Model) newRequest(req *InferenceRequest, fn ResponseFunc) (*Request, error) {
	bad := func(format string, args ...any) error {
		return Errorf(CodeInvalidArg, "model %q: %s", m.name, fmt.Sprintf(format, args...))
	}
	batch := int64(-1)
	inputs := make([]Input, len(req.Inputs))
	for i := range req.Inputs {
		in := &req.Inputs[i]
		if m.sequenceInput(in.Name) {
			return nil, bad("input %q is provided by the sequence batcher (sequence_batching control_input or state); do not send it", in.Name)
		}
		cfg := m.inputs[in.Name]
		if cfg == nil {
			return nil, bad("unexpected input %q; the model's inputs are %s", in.Name, m.inputNames())
		}
		for j := 0; j < i; j++ {
			if req.Inputs[j].Name == in.Name {
				return nil, bad("input %q is given more than once", in.Name)
			}
		}
		if want := DataType(cfg.GetDataType()); in.DataType != want {
			return nil, bad("input %q: data type %s does not match the model's %s", in.Name, in.DataType, want)
		}
		dims := in.Shape
		if m.maxBatch > 0 {
			if len(in.Shape) == 0 {
				return nil, bad("input %q: shape [] has no batch dimension; the model batches (max_batch_size %d)", in.Name, m.maxBatch)
			}
			b := in.Shape[0]
			if b < 1 || b > m.maxBatch {
				return nil, bad("input %q: batch size %d is outside 1..%d (max_batch_size)", in.Name, b, m.maxBatch)
			}
			if batch >= 0 && b != batch {
				return nil, bad("input %q: batch size %d differs from the other inputs' %d", in.Name, b, batch)
			}
			batch = b
			dims = in.Shape[1:]
		}
		if !dimsMatch(dims, cfg.GetDims()) {
			return nil, bad("input %q: shape %s does not match the model's dims %s%s", in.Name, shapeString(in.Shape), shapeString(cfg.GetDims()), batchNote(m.maxBatch))
		}
		if err := checkByteSize(in, m.maxTensor); err != nil {
			return nil, bad("input %q: %v", in.Name, err)
		}
		inputs[i] = *in
		if rs := cfg.GetReshape(); rs != nil {
			inputs[i].Shape = reshape(in.Shape, m.maxBatch > 0, cfg.GetDims(), rs.GetShape())
			// The configuration's check of the reshape makes this hold;
			// a backend must never see a shape its buffer does not fill.
			if ElementCount(inputs[i].Shape) != ElementCount(in.Shape) {
				return nil, bad("input %q: shape %s reshaped to %s changes its element count", in.Name, shapeString(in.Shape), shapeString(inputs[i].Shape))
			}
		}
	}
	if missing := m.missingInputs(req.Inputs); len(missing) > 0 {
		return nil, bad("missing required input(s) %s", strings.Join(quoteAll(missing), ", "))
	}
	outputs := req.Outputs
	for i, name := range req.Outputs {
		if len(m.outputs) > 0 && m.outputs[name] == nil {
			return nil, bad("unexpected requested output %q; the model's outputs are %s", name, m.outputNames())
		}
		for j := 0; j < i; j++ {
			if req.Outputs[j] == name {
				return nil, bad("output %q is requested more than once", name)
			}
		}
	}
	if len(outputs) == 0 {
		for _, out := range m.cfg.GetOutput() {
			outputs = append(outputs, out.GetName())
		}
	}
	r := &Request{
		model:        m,
		client:       req,
		inputs:       inputs,
		outputs:      outputs,
		batchSize:    uint64(max(batch, 1)),
		requestStart: Nanotime(),
	}
	r.responder = newResponder(m, req.ID, req.Outputs, fn)
	r.responder.onFinal = r.finalDelivered
	if req.Timeout > 0 {
		r.deadline = r.requestStart + uint64(req.Timeout/time.Nanosecond)
	}
	return r, nil
}

// dimsMatch reports whether shape fits dims, where -1 in dims matches any
// non-negative size.
func dimsMatch(shape, dims []int64) bool {
	if len(shape) != len(dims) {
		return false
	}
	for i, d := range dims {
		if shape[i] < 0 || (d != -1 && shape[i] != d) {
			return false
		}
	}
	return true
}

// checkByteSize checks that an input's contents are exactly what its shape
// and type call for, and no larger than limit.
func checkByteSize(in *Input, limit tensorLimit) error {
	n := ElementCount(in.Shape) // the dims were checked: only an overflow makes it negative
	if n < 0 {
		return fmt.Errorf("shape %s has more elements than an int64 counts", shapeString(in.Shape))
	}
	got := in.ByteSize()
	if in.DataType == TypeBytes {
		if got > uint64(limit.bytes) {
			return fmt.Errorf("BYTES contents are %s", limit.tooLarge(int64(min(got, math.MaxInt64))))
		}
		count := countBytesElements(in.Buffers)
		if count < 0 {
			return fmt.Errorf("BYTES contents are not a whole number of length-prefixed elements")
		}
		if count != n {
			return fmt.Errorf("BYTES contents hold %d element(s), shape %s needs %d", count, shapeString(in.Shape), n)
		}
		return nil
	}
	want, ok := mulInt64(n, int64(in.DataType.ByteSize()))
	if !ok {
		want = -1
	}
	if !ok || want > limit.bytes {
		return fmt.Errorf("shape %s of %s is %s", shapeString(in.Shape), in.DataType, limit.tooLarge(want))
	}
	if got != uint64(want) {
		return fmt.Errorf("got %d bytes, shape %s of %s needs %d", got, shapeString(in.Shape), in.DataType, want)
	}
	return nil
}

func (m *Model) missingInputs(given []Input) []string {
	var missing []string
	for _, cfg := range m.cfg.GetInput() {
		if cfg.GetOptional() || m.sequenceInput(cfg.GetName()) {
			continue
		}
		found := false
		for i := range given {
			if given[i].Name == cfg.GetName() {
				found = true
				break
			}
		}
		if !found {
			missing = append(missing, cfg.GetName())
		}
	}
	return missing
}

func (m *Model) inputNames() string {
	return nameList(m.cfg.GetInput(), (*configpb.ModelInput).GetName)
}

func (m *Model) outputNames() string {
	return nameList(m.cfg.GetOutput(), (*configpb.ModelOutput).GetName)
}

func nameList[T any](items []T, name func(T) string) string {
	names := make([]string, len(items))
	for i, it := range items {
		names[i] = name(it)
	}
	sort.Strings(names)
	return "[" + strings.Join(quoteAll(names), ", ") + "]"
}

func quoteAll(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = fmt.Sprintf("%q", n)
	}
	return out
}

func shapeString(shape []int64) string {
	parts := make([]string, len(shape))
	for i, d := range shape {
		parts[i] = fmt.Sprint(d)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

func batchNote(maxBatch int64) string {
	if maxBatch > 0 {
		return " after the batch dimension"
	}
	return ""
}
