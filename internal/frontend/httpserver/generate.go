package httpserver

import (
	"encoding/binary"
	"encoding/json"
	"net/http"
	"strconv"
	"unicode/utf8"

	"github.com/tritonhost/tritonhost/core"
)

// The generate extension: the request is read as generate_request.go says;
// each response is a JSON object of model_name, model_version, the request
// id when there is one, the response parameters and the outputs, each a
// value (one element) or a flat array. /generate serves any model, decoupled
// or not, but answers only a request that got exactly one response, as
// Triton's; /generate_stream sends every response as an event.

// errGenerateNotOne is Triton's error for a /generate request that got no
// response, or several.
func errGenerateNotOne() error {
	return core.Errorf(core.CodeInternal, "generate expects model to produce exactly 1 response, use generate stream for model that generates various number of responses")
}

// generate serves POST .../generate: one response, from any model.
func (s *Server) generate(w http.ResponseWriter, r *http.Request) {
	m, req, err := s.generateRequest(w, r)
	if err != nil {
		writeError(w, err)
		return
	}
	resp, err := s.runGenerate(r, m, req)
	if err != nil {
		writeError(w, err)
		return
	}
	render := func(j *jsonWriter) error { return renderGenerateJSON(j, m, req.ID, resp) }
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

// runGenerate submits req to m and waits for the request to end (or the
// client to go away, or the server to give it up at the end of a shutdown:
// see Abort). It returns the request's one response, or Triton's error
// when there was none or more than one; those after the first are
// dropped as they come.
func (s *Server) runGenerate(r *http.Request, m *core.Model, req *core.Submission) (*core.Response, error) {
	type outcome struct {
		first *core.Response
		n     int
	}
	var got outcome // written by the response calls, which never overlap
	done := make(chan outcome, 1)
	err := s.core.Submit(r.Context(), m, req, func(resp *core.Response, final bool) {
		if resp != nil {
			if got.n++; got.n == 1 {
				got.first = resp
			}
		}
		if final {
			done <- got
		}
	})
	if err != nil {
		return nil, err
	}
	select {
	case res := <-done:
		switch {
		case res.n != 1:
			return nil, errGenerateNotOne()
		case res.first.Err != nil:
			return nil, res.first.Err
		}
		return res.first, nil
	case <-r.Context().Done():
		return nil, core.Errorf(core.CodeCancelled, "request %q to model %q: the client went away", req.ID, m.Name())
	case <-s.aborting:
		return nil, s.abortErr
	}
}

// generateRequest resolves the model and decodes the generate body, in
// Triton's order: the model version, the model, the body's encoding (the
// generate routes take none), then the JSON.
func (s *Server) generateRequest(w http.ResponseWriter, r *http.Request) (*core.Model, *core.Submission, error) {
	if s.isDraining() {
		return nil, nil, core.Errorf(core.CodeUnavailable, "server is shutting down")
	}
	m, err := s.model(r)
	if err != nil {
		return nil, nil, err
	}
	if enc := r.Header.Get("Content-Encoding"); enc != "" && enc != "identity" {
		return nil, nil, core.Errorf(core.CodeInvalidArg, "Unsupported content-encoding, only 'identity' is supported.")
	}
	body, err := readBody(w, r, s.opts.MaxInputBytes)
	if err != nil {
		return nil, nil, err
	}
	req, err := decodeGenerate(m, body)
	if err != nil {
		return nil, nil, err
	}
	if err := s.forwardHeaders(r.Header, req); err != nil {
		return nil, nil, err
	}
	req.TraceContext = traceContext(r)
	return m, req, nil
}

// generateEvent renders one response as a Server-Sent Event whose data is
// the generate extension's JSON object, whole in memory, in a buffer of
// its exact size.
func generateEvent(m *core.Model, id string, resp *core.Response) ([]byte, error) {
	render := func(j *jsonWriter) error {
		j.buf = append(j.buf, "data: "...)
		if err := renderGenerateJSON(j, m, id, resp); err != nil {
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
// JSON object; what JSON cannot carry is refused with Triton's words.
func renderGenerateJSON(j *jsonWriter, m *core.Model, id string, resp *core.Response) error {
	b := append(j.buf, `{"model_name":`...)
	b = appendJSONString(b, m.Name())
	b = append(b, `,"model_version":`...)
	b = appendJSONString(b, strconv.FormatInt(m.Version(), 10))
	if id != "" {
		b = append(b, `,"id":`...)
		b = appendJSONString(b, id)
	}
	for _, p := range resp.Parameters {
		b = append(b, ',')
		b = appendJSONString(b, p.Name)
		b = append(b, ':')
		switch p.Type {
		case core.ParamBool:
			b = strconv.AppendBool(b, p.Bool)
		case core.ParamInt:
			b = strconv.AppendInt(b, p.Int, 10)
		case core.ParamDouble:
			b = appendFloat(b, p.Double, 64)
		case core.ParamString:
			b = appendJSONString(b, p.String)
		default:
			return core.Errorf(core.CodeUnsupported, "Response parameter '%s' has type 'TRITONSERVER_PARAMETER_BYTES' which is not currently supported", p.Name)
		}
	}
	j.buf = b
	for _, o := range resp.Outputs {
		if err := writeGenerateOutput(j, o); err != nil {
			return err
		}
	}
	j.buf = append(j.buf, '}')
	return nil
}

// writeGenerateOutput writes one output as a member: its value when it has
// one element, else a flat array of its values.
func writeGenerateOutput(j *jsonWriter, o core.Output) error {
	switch o.DataType {
	case core.TypeFP16, core.TypeBF16:
		return core.Errorf(core.CodeInvalidArg, "sending %s data via JSON is not supported. Please use the binary data format for output", o.DataType)
	case core.TypeInvalid:
		return core.Errorf(core.CodeInvalidArg, "Invalid data type for output tensor")
	}
	count := core.ElementCount(o.Shape)
	if !outputFillsShape(o, count) {
		return core.Errorf(core.CodeInternal, "output tensor shape does not match size of output for '%s'", o.Name)
	}
	j.buf = append(j.buf, ',')
	j.buf = appendJSONString(j.buf, o.Name)
	j.buf = append(j.buf, ':')
	one := count == 1
	if !one {
		j.buf = append(j.buf, '[')
	}
	if err := writeValues(j, o.DataType, o.Data); err != nil {
		return core.Errorf(core.CodeInternal, "output tensor shape does not match size of output for '%s'", o.Name)
	}
	if !one {
		j.buf = append(j.buf, ']')
	}
	return nil
}

// outputFillsShape reports whether an output's data holds exactly count
// elements of its type.
func outputFillsShape(o core.Output, count int64) bool {
	if o.DataType != core.TypeBytes {
		return int64(len(o.Data)) == count*int64(o.DataType.ByteSize())
	}
	n, data := int64(0), o.Data
	for len(data) >= 4 {
		l := int64(binary.LittleEndian.Uint32(data))
		if int64(len(data)-4) < l {
			return false
		}
		data = data[4+l:]
		n++
	}
	return len(data) == 0 && n == count
}

// plainJSONByte tells the bytes encoding/json writes as they are in a
// string: printable ASCII but for '"', '\\' and the characters it escapes
// for HTML ('<', '>', '&').
var plainJSONByte = func() (t [256]bool) {
	for c := ' '; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// appendJSONString appends s as encoding/json writes it: a string of
// letters, digits and the other printable ASCII characters JSON and HTML
// leave alone (a model's name, an output's) as it is, any other with
// json.Marshal.
func appendJSONString(b []byte, s string) []byte {
	for i := range len(s) {
		if !plainJSONByte[s[i]] {
			q, _ := json.Marshal(s)
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
