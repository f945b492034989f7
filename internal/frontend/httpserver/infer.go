package httpserver

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/internal/protocol"
)

// HeaderContentLength is the header of Triton's binary tensor extension: the
// size of the JSON part of a body whose binary tensor data follows it.
const HeaderContentLength = "Inference-Header-Content-Length"

// inferRequestJSON is the JSON part of an infer request.
// Its lists and objects are counted before they are decoded
// (jsonbound.go).
type inferRequestJSON struct {
	ID         string      `json:"id"`
	Parameters paramsJSON  `json:"parameters"`
	Inputs     inputsJSON  `json:"inputs"`
	Outputs    outputsJSON `json:"outputs"`
}

type inputJSON struct {
	Name       string          `json:"name"`
	Shape      shapeJSON       `json:"shape"`
	Datatype   string          `json:"datatype"`
	Parameters paramsJSON      `json:"parameters"`
	Data       json.RawMessage `json:"data"`
}

type outputJSON struct {
	Name       string     `json:"name"`
	Parameters paramsJSON `json:"parameters"`
}

// inferCall is a decoded infer request: what core takes, and how to answer.
type inferCall struct {
	req    *core.Submission
	opts   protocol.Options
	binary map[string]bool         // outputs asked for as binary data (true) or JSON (false)
	mem    *protocol.RequestMemory // the shared memory its tensors lease
}

// infer serves POST .../infer: one request, one response, on a model that
// is not decoupled.
func (s *Server) infer(w http.ResponseWriter, r *http.Request) {
	m, body, err := s.inferenceBody(w, r)
	if err == nil && m.Decoupled() {
		err = errDecoupled()
	}
	if err != nil {
		writeError(w, err)
		return
	}
	call, err := s.decodeInfer(m, body, r.Header.Get(HeaderContentLength), r.Header)
	if err != nil {
		writeError(w, err)
		return
	}
	call.req.TraceContext = traceContext(r)
	resp, err := s.runOnce(r, m, call.req, call.mem)
	if err != nil {
		writeError(w, err)
		return
	}
	s.setWriteDeadline(w, s.opts.WriteTimeout)
	writeInferResponse(w, m, call, resp)
}

// inferenceBody resolves the model of an inference route and reads the
// body; a draining server refuses.
func (s *Server) inferenceBody(w http.ResponseWriter, r *http.Request) (*core.Model, []byte, error) {
	if s.isDraining() {
		return nil, nil, core.Errorf(core.CodeUnavailable, "server is shutting down")
	}
	m, err := s.model(r)
	if err != nil {
		return nil, nil, err
	}
	body, err := readBody(w, r, s.opts.MaxInputBytes)
	return m, body, err
}

// errDecoupled refuses a decoupled model on a route that answers once, in
// Triton's words.
func errDecoupled() error {
	return core.Errorf(core.CodeUnsupported, "HTTP end point doesn't support models with decoupled transaction policy")
}

// runOnce submits req to m and waits for its one response (or the client
// to go away). Outputs that mem places in shared memory are written there
// as the response arrives; mem is released once core is done with the
// request (nil: no shared memory).
func (s *Server) runOnce(r *http.Request, m *core.Model, req *core.Submission, mem *protocol.RequestMemory) (*core.Response, error) {
	if mem.Used() {
		req.Finished = mem.Release
	}
	// Not Submission.Inline: a handler executing its request could not
	// answer the client at the server's abort time while the backend runs.
	done := make(chan *core.Response, 1)
	err := s.core.Submit(r.Context(), m, req, func(resp *core.Response, final bool) {
		if final {
			done <- mem.Place(resp)
		}
	})
	if err != nil {
		mem.Release()
		return nil, err
	}
	select {
	case resp := <-done:
		switch {
		case resp == nil:
			return nil, core.Errorf(core.CodeInternal, "model %q completed request %q without a response", m.Name(), req.ID)
		case resp.Err != nil:
			return nil, resp.Err
		}
		return resp, nil
	case <-r.Context().Done():
		return nil, core.Errorf(core.CodeCancelled, "request %q to model %q: the client went away", req.ID, m.Name())
	case <-s.aborting:
		return nil, s.abortErr
	}
}

// writeInferResponse answers an infer request: JSON, or, when an output is
// sent as binary data, a JSON header (its size in
// Inference-Header-Content-Length) followed by the outputs' bytes, each
// written from the response's own memory. A large JSON part is measured,
// then streamed (see jsonwriter.go).
func writeInferResponse(w http.ResponseWriter, m *core.Model, call *inferCall, resp *core.Response) {
	var binary [][]byte
	render := func(j *jsonWriter) error {
		binary = binary[:0]
		return renderInferJSON(j, m, call, resp, &binary)
	}
	head, size, err := renderJSON(render)
	if err != nil {
		writeError(w, err)
		return
	}
	if len(binary) == 0 && head != nil {
		writeRawJSON(w, http.StatusOK, head)
		releaseJSON(head)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	total := size
	if len(binary) > 0 {
		h.Set(HeaderContentLength, strconv.FormatInt(size, 10))
		h.Set("Content-Type", "application/octet-stream")
		for _, d := range binary {
			total += int64(len(d))
		}
	}
	h.Set("Content-Length", strconv.FormatInt(total, 10))
	w.WriteHeader(http.StatusOK)
	if head != nil {
		_, err = w.Write(head)
		releaseJSON(head)
	} else {
		err = streamJSON(w, render)
	}
	for _, d := range binary {
		if err != nil {
			return
		}
		_, err = w.Write(d)
	}
}

// renderInferJSON renders the JSON of an infer response, and lists in
// binary the outputs that follow it as binary data.
func renderInferJSON(j *jsonWriter, m *core.Model, call *inferCall, resp *core.Response, binary *[][]byte) error {
	b := append(j.buf, `{"model_name":`...)
	b = appendJSONString(b, m.Name())
	b = append(b, `,"model_version":`...)
	b = appendJSONString(b, strconv.FormatInt(m.Version(), 10))
	if call.req.ID != "" {
		b = append(b, `,"id":`...)
		b = appendJSONString(b, call.req.ID)
	}
	if len(resp.Parameters) > 0 {
		b = append(b, `,"parameters":`...)
		b = append(b, encodeParameters(resp.Parameters)...)
	}
	b = append(b, `,"outputs":[`...)
	for i, o := range resp.Outputs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"name":`...)
		b = appendJSONString(b, o.Name)
		b = append(b, `,"datatype":"`+o.DataType.String()+`","shape":[`...)
		for j, d := range o.Shape {
			if j > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendInt(b, d, 10)
		}
		b = append(b, ']')
		if call.mem.InShared(o.Name) { // its data went to the client's region
			b = append(b, '}')
			continue
		}
		asBinary, set := call.binary[o.Name]
		if !set {
			asBinary = call.opts.BinaryDataOutput
		}
		if asBinary {
			b = append(b, `,"parameters":{"binary_data_size":`...)
			b = strconv.AppendInt(b, int64(len(o.Data)), 10)
			b = append(b, `}}`...)
			*binary = append(*binary, o.Data)
			continue
		}
		j.buf = append(b, `,"data":[`...)
		if err := writeValues(j, o.DataType, o.Data); err != nil {
			return core.Errorf(core.CodeInvalidArg, "model %q: output %q: %v", m.Name(), o.Name, err)
		}
		b = append(j.buf, `]}`...)
	}
	j.buf = append(b, `]}`...)
	return nil
}

// encodeParameters renders response parameters as a JSON object.
func encodeParameters(params []core.Parameter) []byte {
	obj := make(map[string]any, len(params))
	for _, p := range params {
		switch p.Type {
		case core.ParamBool:
			obj[p.Name] = p.Bool
		case core.ParamInt:
			obj[p.Name] = p.Int
		case core.ParamDouble:
			obj[p.Name] = p.Double
		case core.ParamBytes:
			obj[p.Name] = string(p.Bytes)
		default:
			obj[p.Name] = p.String
		}
	}
	out, err := json.Marshal(obj)
	if err != nil { // a non-finite double
		return []byte("{}")
	}
	return out
}
