package httpserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	"tritonhost/core"
	"tritonhost/internal/protocol"
)

// The generate extension: a JSON object whose members name the model's
// inputs (name -> value or array of values) or, when they name none,
// request parameters; the object "parameters" holds more of either. The
// response is a JSON object of model_name, model_version and the outputs,
// each a value (one element) or a flat array.

// generate serves POST .../generate: one response, on a model that is not
// decoupled.
func (s *Server) generate(w http.ResponseWriter, r *http.Request) {
	m, req, err := s.generateRequest(w, r)
	if err != nil {
		writeError(w, err)
		return
	}
	if m.Decoupled() {
		writeError(w, errDecoupled())
		return
	}
	resp, err := s.runOnce(r, m, req, nil)
	if err != nil {
		writeError(w, err)
		return
	}
	render := func(j *jsonWriter) error { return renderGenerateJSON(j, m, resp) }
	event, size, err := renderJSON(render)
	if err != nil {
		writeError(w, err)
		return
	}
	s.setWriteDeadline(w, s.opts.WriteTimeout)
	if event != nil {
		writeRawJSON(w, http.StatusOK, event)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.FormatInt(size, 10))
	w.WriteHeader(http.StatusOK)
	_ = streamJSON(w, render)
}

// generateRequest resolves the model and decodes the generate body.
func (s *Server) generateRequest(w http.ResponseWriter, r *http.Request) (*core.Model, *core.Submission, error) {
	m, body, err := s.inferenceBody(w, r)
	if err != nil {
		return nil, nil, err
	}
	req, err := decodeGenerate(m, body)
	return m, req, err
}

// decodeGenerate turns a generate body into a request of m.
func decodeGenerate(m *core.Model, body []byte) (*core.Submission, error) {
	bad := func(format string, args ...any) error {
		return core.Errorf(core.CodeInvalidArg, "model %q: %s", m.Name(), fmt.Sprintf(format, args...))
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(body, &members); err != nil || members == nil {
		return nil, bad("the generate request must be a JSON object (%v)", err)
	}
	var params map[string]json.RawMessage
	if raw, ok := members["parameters"]; ok {
		if err := json.Unmarshal(raw, &params); err != nil {
			return nil, bad("\"parameters\" must be a JSON object (%v)", err)
		}
		delete(members, "parameters")
	}
	if err := checkGenerateCounts(m, members, params); err != nil {
		return nil, fmt.Errorf("model %q: %w", m.Name(), err)
	}
	req := &core.Submission{Model: m.Name(), Version: m.Version()}
	var opts protocol.Options
	for _, group := range []map[string]json.RawMessage{members, params} {
		for _, name := range sortedKeys(group) {
			raw := group[name]
			if dt, ok := protocol.InputType(m, name); ok {
				in, err := generateInput(m, name, dt, raw)
				if err != nil {
					return nil, err
				}
				req.Inputs = append(req.Inputs, in)
				continue
			}
			v, err := parameterValue(raw)
			if err == nil {
				err = protocol.ApplyParameter(req, &opts, name, v)
			}
			if err != nil {
				return nil, bad("%q is neither an input of the model nor a valid parameter: %v", name, err)
			}
		}
	}
	return req, nil
}

// checkGenerateCounts refuses a generate request past the protocols'
// bounds: the members naming inputs of m are its inputs, every other
// member and everything under "parameters" its parameters.
func checkGenerateCounts(m *core.Model, members, params map[string]json.RawMessage) error {
	inputs := 0
	for name := range members {
		if _, ok := protocol.InputType(m, name); ok {
			inputs++
		}
	}
	for name := range params {
		if _, ok := protocol.InputType(m, name); ok {
			inputs++
		}
	}
	if inputs > protocol.MaxRequestTensors {
		return protocol.TooMany("the request", inputs, "inputs", protocol.MaxRequestTensors)
	}
	if n := len(members) + len(params) - inputs; n > protocol.MaxRequestParameters {
		return protocol.TooMany("the request", n, "parameters", protocol.MaxRequestParameters)
	}
	return nil
}

// generateInput decodes one input's values; its shape is the nesting of
// the arrays ([1] for a lone value), with a batch dimension of 1 in front
// when the model batches and the configuration's dims call for it.
func generateInput(m *core.Model, name string, dt core.DataType, raw json.RawMessage) (core.Input, error) {
	max := m.MaxTensorBytes() / 4
	if size := int64(dt.ByteSize()); size > 0 {
		max = m.MaxTensorBytes() / size
	}
	t, err := decodeValues(dt, bytes.TrimSpace(raw), max)
	if err != nil {
		return core.Input{}, core.Errorf(core.CodeInvalidArg, "model %q: input %q: %v", m.Name(), name, err)
	}
	shape := t.shape
	if shape == nil {
		shape = []int64{1}
	}
	if m.MaxBatchSize() > 0 {
		for _, in := range m.Config().GetInput() {
			if in.GetName() == name && len(in.GetDims()) == len(shape) {
				shape = append([]int64{1}, shape...)
			}
		}
	}
	return core.NewInput(name, dt, shape, t.data), nil
}

// generateEvent renders one response as a Server-Sent Event whose data is
// the generate extension's JSON object, whole in memory, in a buffer of
// its exact size.
func generateEvent(m *core.Model, resp *core.Response) ([]byte, error) {
	render := func(j *jsonWriter) error {
		j.buf = append(j.buf, "data: "...)
		if err := renderGenerateJSON(j, m, resp); err != nil {
			return err
		}
		j.buf = append(j.buf, "\n\n"...)
		return nil
	}
	event, size, err := renderJSON(render)
	if err != nil || event != nil {
		return event, err
	}
	j := &jsonWriter{buf: make([]byte, 0, size)}
	err = render(j)
	return j.buf, err
}

// renderGenerateJSON renders one response as the generate extension's
// JSON object.
func renderGenerateJSON(j *jsonWriter, m *core.Model, resp *core.Response) error {
	b := append(j.buf, `{"model_name":`...)
	b = appendJSONString(b, m.Name())
	b = append(b, `,"model_version":`...)
	b = appendJSONString(b, strconv.FormatInt(m.Version(), 10))
	for _, o := range resp.Outputs {
		b = append(b, ',')
		b = appendJSONString(b, o.Name)
		b = append(b, ':')
		one := core.ElementCount(o.Shape) == 1
		if !one {
			b = append(b, '[')
		}
		j.buf = b
		if err := writeValues(j, o.DataType, o.Data); err != nil {
			return core.Errorf(core.CodeInvalidArg, "model %q: output %q: %v", m.Name(), o.Name, err)
		}
		b = j.buf
		if !one {
			b = append(b, ']')
		}
	}
	j.buf = append(b, '}')
	return nil
}

func appendJSONString(b []byte, s string) []byte {
	q, _ := json.Marshal(s)
	return append(b, q...)
}
