package core

import (
	"time"
)

// newRequest validates a client request against the model configuration and
// turns it into a Request: every input is known, of the configured type,
// shaped as the dims allow (with a batch dimension when the model batches),
// and exactly as large as its shape says; every required input is present;
// every requested output exists.
//
// The checks run in the order Triton's InferenceRequest::Normalize runs
// them, and refuse with Triton's words (request_text.go), so that a client
// that branches on Triton's messages sees the same one first.
func (m *Model) newRequest(req *Submission, fn ResponseFunc) (*Request, error) {
	if err := m.checkInputNames(req); err != nil {
		return nil, err
	}
	outputs, err := m.checkRequestedOutputs(req)
	if err != nil {
		return nil, err
	}
	if err := m.checkInputCount(req, false); err != nil {
		return nil, err
	}
	for i := range req.Inputs {
		if name := req.Inputs[i].Name; m.InputConfig(name) == nil {
			return nil, Errorf(CodeInvalidArg, "unexpected inference input '%s' for model '%s'", name, m.name)
		}
	}
	if err := m.checkInputCount(req, true); err != nil {
		return nil, err
	}
	batch, err := m.requestBatchSize(req)
	if err != nil {
		return nil, err
	}
	a := new(requestAllocation)
	inputs := a.inputOne[:0]
	if len(req.Inputs) > len(a.inputOne) {
		inputs = make([]Input, 0, len(req.Inputs))
	}
	inputs = inputs[:len(req.Inputs)]
	for i := range req.Inputs {
		if inputs[i], err = m.checkInput(req, &req.Inputs[i]); err != nil {
			return nil, err
		}
	}
	r := &a.req
	r.model, r.sub, r.inputs, r.outputs = m, req, inputs, outputs
	r.batchSize = uint64(max(batch, 1))
	r.requestStart = Nanotime()
	r.alone[0] = r
	r.responder = &a.responder
	r.responder.init(m, req.ID, req.Outputs, req.FreesResponses, fn)
	r.responder.maxTensor = m.tensorLimitOf(req)
	r.responder.req = r
	if req.Timeout > 0 {
		r.deadline = r.requestStart + uint64(req.Timeout/time.Nanosecond)
	}
	return r, nil
}

// requestAllocation is the memory of a client's request: the request, its
// responder and, when it has one, its input.
type requestAllocation struct {
	req       Request
	responder Responder
	inputOne  [1]Input
}

// InputExistsError is Triton's error for an input that a request of id
// requestID gives twice. A frontend that adds inputs one at a time, as
// Triton's do, refuses the second with it there.
func InputExistsError(requestID, name string) error {
	return Errorf(CodeInvalidArg, "%sinput '%s' already exists in request", requestPrefix(requestID), name)
}

// checkInputNames refuses an input given twice (Triton refuses it when the
// input is added) and an input the sequence batcher provides.
func (m *Model) checkInputNames(req *Submission) error {
	for i := range req.Inputs {
		name := req.Inputs[i].Name
		for j := 0; j < i; j++ {
			if req.Inputs[j].Name == name {
				return InputExistsError(req.ID, name)
			}
		}
		if m.sequenceInput(name) {
			return Errorf(CodeInvalidArg, "model %q: input %q is provided by the sequence batcher (sequence_batching control_input or state); do not send it", m.name, name)
		}
	}
	return nil
}

// checkRequestedOutputs checks the outputs the client named and returns
// those to produce: the named ones, or every output of the configuration.
func (m *Model) checkRequestedOutputs(req *Submission) ([]string, error) {
	for i, name := range req.Outputs {
		if len(m.outputs) > 0 && m.OutputConfig(name) == nil {
			return nil, Errorf(CodeInvalidArg, "unexpected inference output '%s' for model '%s'", name, m.name)
		}
		for j := 0; j < i; j++ {
			if req.Outputs[j] == name {
				return nil, Errorf(CodeInvalidArg, "model %q: output %q is requested more than once", m.name, name)
			}
		}
	}
	if len(req.Outputs) > 0 {
		return req.Outputs, nil
	}
	if n := len(m.cfg.GetOutput()); n > 0 && len(m.outputNames) == n {
		return m.outputNames[:n:n], nil
	}
	outputs := make([]string, 0, len(m.cfg.GetOutput()))
	for _, out := range m.cfg.GetOutput() {
		outputs = append(outputs, out.GetName())
	}
	return outputs, nil
}

// checkInputCount refuses a request with fewer inputs than the model
// requires or more than it has, naming those missing. Triton compares the
// counts only; with byName, once every input is known to be the model's,
// this server also refuses a request that makes up the count with optional
// inputs but misses a required one, in the same words.
func (m *Model) checkInputCount(req *Submission, byName bool) error {
	n, total, required := len(req.Inputs), m.inputCount, len(m.requiredInputs)
	if n <= total && n >= required && (!byName || hasInputs(req.Inputs, m.requiredInputs)) {
		return nil
	}
	var missing []string
	for _, name := range m.requiredInputs {
		if !hasInput(req.Inputs, name) {
			missing = append(missing, name)
		}
	}
	given := make([]string, len(req.Inputs))
	for i := range req.Inputs {
		given[i] = req.Inputs[i].Name
	}
	return missingInputsError(req.ID, m.name, total, required, given, missing)
}

// hasInputs reports whether given holds an input of each of names.
func hasInputs(given []Input, names []string) bool {
	for _, name := range names {
		if !hasInput(given, name) {
			return false
		}
	}
	return true
}

func hasInput(given []Input, name string) bool {
	for i := range given {
		if given[i].Name == name {
			return true
		}
	}
	return false
}

// requestBatchSize checks, when the model batches, that every input has
// the same batch dimension, within max_batch_size. It returns the batch
// size (0 when the model does not batch).
func (m *Model) requestBatchSize(req *Submission) (int64, error) {
	if m.maxBatch <= 0 {
		return 0, nil
	}
	batch := int64(0)
	for i := range req.Inputs {
		in := &req.Inputs[i]
		if len(in.Shape) == 0 {
			return 0, Errorf(CodeInvalidArg, "%sinput '%s' has no shape but model requires batch dimension for '%s'", requestPrefix(req.ID), in.Name, m.name)
		}
		switch b := in.Shape[0]; {
		case i == 0:
			batch = b
		case b != batch:
			return 0, Errorf(CodeInvalidArg, "%sinput '%s' batch size does not match other inputs for '%s'", requestPrefix(req.ID), in.Name, m.name)
		}
	}
	if len(req.Inputs) == 0 {
		return 0, nil
	}
	// Triton reads the batch dimension as unsigned: a negative one is
	// too large too.
	if batch > m.maxBatch || batch < 0 {
		return 0, Errorf(CodeInvalidArg, "%sinference request batch-size must be <= %d for '%s'", requestPrefix(req.ID), m.maxBatch, m.name)
	}
	if batch == 0 {
		return 0, Errorf(CodeInvalidArg, "%sinference request batch-size must be >= 1 for '%s' (the first dimension of every input is the batch size)", requestPrefix(req.ID), m.name)
	}
	return batch, nil
}

// checkInput checks one input's data type, shape and contents, and returns
// it as the backend sees it (with the configuration's reshape applied).
func (m *Model) checkInput(req *Submission, in *Input) (Input, error) {
	cfg := m.InputConfig(in.Name)
	if want := DataType(cfg.GetDataType()); in.DataType != want {
		return Input{}, Errorf(CodeInvalidArg, "%sinference input '%s' data-type is '%s', but model '%s' expects '%s'",
			requestPrefix(req.ID), in.Name, protocolName(in.DataType), m.name, protocolName(want))
	}
	dims := in.Shape
	if m.maxBatch > 0 {
		dims = in.Shape[1:]
	}
	if err := m.checkShape(req.ID, in, dims, cfg.GetDims()); err != nil {
		return Input{}, err
	}
	if err := m.checkContents(req.ID, in, m.tensorLimitOf(req)); err != nil {
		return Input{}, err
	}
	out := *in
	if rs := cfg.GetReshape(); rs != nil {
		out.Shape = reshape(in.Shape, m.maxBatch > 0, cfg.GetDims(), rs.GetShape())
		// The configuration's check of the reshape makes this hold; a
		// backend must never see a shape its buffer does not fill.
		if ElementCount(out.Shape) != ElementCount(in.Shape) {
			return Input{}, Errorf(CodeInvalidArg, "model %q: input %q: shape %s reshaped to %s changes its element count",
				m.name, in.Name, dimsString(in.Shape), dimsString(out.Shape))
		}
	}
	return out, nil
}

// checkShape compares an input's dims (without the batch dimension) with
// the configuration's, where -1 in the configuration matches any size.
func (m *Model) checkShape(id string, in *Input, dims, want []int64) error {
	match := len(dims) == len(want)
	for i := 0; match && i < len(dims); i++ {
		switch {
		case dims[i] == -1:
			return Errorf(CodeInvalidArg, "%sAll input dimensions should be specified for input '%s' for model '%s', got %s",
				requestPrefix(id), in.Name, m.name, dimsString(in.Shape))
		case dims[i] < 0 || (want[i] != -1 && dims[i] != want[i]):
			match = false
		}
	}
	if !match {
		return shapeError(id, m.name, in.Name, m.maxBatch, want, in.Shape)
	}
	return nil
}

// sequenceInput reports whether the sequence batcher provides input name (a
// control input or an implicit state input): clients neither send it nor
// need to, even when the configuration lists it among the inputs.
func (m *Model) sequenceInput(name string) bool {
	sb := m.cfg.GetSequenceBatching()
	if sb == nil {
		return false
	}
	for _, ci := range sb.GetControlInput() {
		if ci.GetName() == name {
			return true
		}
	}
	for _, st := range sb.GetState() {
		if st.GetInputName() == name {
			return true
		}
	}
	return false
}

// tensorLimitOf returns the bound on req's tensors: its own
// (Submission.TensorLimit), else the server's.
func (m *Model) tensorLimitOf(req *Submission) tensorLimit {
	if l := req.TensorLimit; l.Bytes > 0 {
		return tensorLimit{bytes: l.Bytes, setting: l.Setting}
	}
	return m.maxTensor
}
