package seqbatch

import (
	"encoding/binary"
	"strconv"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/configpb"
)

// The control inputs the sequence batcher adds to each request, and the
// correlation id rules.

// controlShape is the shape of a control tensor: one element, in a batch of
// one when the model batches.
func (c *sequenceConfig) controlShape() []int64 {
	if c.batchDim {
		return []int64{1, 1}
	}
	return []int64{1}
}

// controlInputs returns the control tensors for a request with flags and
// correlation id. READY is always true: every request the batcher sends is
// ready (it never pads a batch with not-ready slots).
func (c *sequenceConfig) controlInputs(flags uint32, id core.CorrelationID) []core.Input {
	ins := make([]core.Input, 0, len(c.controls)+1)
	for i := range c.controls {
		ctl := &c.controls[i]
		on := true
		switch ctl.kind {
		case configpb.ModelSequenceBatching_Control_CONTROL_SEQUENCE_START:
			on = flags&core.RequestFlagSequenceStart != 0
		case configpb.ModelSequenceBatching_Control_CONTROL_SEQUENCE_END:
			on = flags&core.RequestFlagSequenceEnd != 0
		}
		v := ctl.falseValue
		if on {
			v = ctl.trueValue
		}
		ins = append(ins, core.NewInput(ctl.input, ctl.dtype, c.controlShape(), v))
	}
	if c.corrID != nil {
		ins = append(ins, core.NewInput(c.corrID.input, c.corrID.dtype, c.controlShape(), c.corrID.encode(id)))
	}
	return ins
}

// encode writes the correlation id as the CORRID tensor's type wants it: the
// integer in 8 or 4 little-endian bytes (the low ones), or a BYTES element
// holding the string (a numeric id in decimal).
func (c *corrIDControl) encode(id core.CorrelationID) []byte {
	switch c.dtype {
	case core.TypeBytes:
		s := id.String
		if !id.IsString {
			s = strconv.FormatUint(id.Uint, 10)
		}
		return core.EncodeBytes([]byte(s))
	case core.TypeUint32, core.TypeInt32:
		return binary.LittleEndian.AppendUint32(nil, uint32(id.Uint))
	default:
		return binary.LittleEndian.AppendUint64(nil, id.Uint)
	}
}

// checkCorrID refuses a correlation id the CORRID control cannot carry.
func (c *sequenceConfig) checkCorrID(m *core.Model, id core.CorrelationID) error {
	if c.corrID != nil && id.IsString && c.corrID.dtype != core.TypeBytes {
		return core.Errorf(core.CodeInvalidArg, "inference request to model '%s' has the string correlation ID %q, but the model's CONTROL_SEQUENCE_CORRID input %q is %s; send an unsigned integer correlation ID",
			m.Name(), id.String, c.corrID.input, c.corrID.dtype)
	}
	return nil
}

// format writes a correlation id for messages: the number, or the quoted
// string.
func format(id core.CorrelationID) string {
	if id.IsString {
		return id.String // as Triton writes a sequence id in its messages
	}
	return strconv.FormatUint(id.Uint, 10)
}

// inSequence reports whether the id names a sequence: a non-zero integer or
// a non-empty string, as in Triton.
func inSequence(id core.CorrelationID) bool {
	if id.IsString {
		return id.String != ""
	}
	return id.Uint != 0
}
