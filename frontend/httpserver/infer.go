package httpserver

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"

	"tritonhost/core"
	"tritonhost/frontend/protocol"
)

// HeaderContentLength is the header of Triton's binary tensor extension: the
// size of the JSON part of a body whose binary tensor data follows it.
const HeaderContentLength = "Inference-Header-Content-Length"

// Parameters of the binary tensor extension.
const (
	paramBinaryData     = "binary_data"      // output: send it as binary data
	paramBinaryDataSize = "binary_data_size" // input or output: its bytes in the binary part
)

// inferRequestJSON is the JSON part of an infer request.
type inferRequestJSON struct {
	ID         string                     `json:"id"`
	Parameters map[string]json.RawMessage `json:"parameters"`
	Inputs     []inputJSON                `json:"inputs"`
	Outputs    []outputJSON               `json:"outputs"`
}

type inputJSON struct {
	Name       string                     `json:"name"`
	Shape      []int64                    `json:"shape"`
	Datatype   string                     `json:"datatype"`
	Parameters map[string]json.RawMessage `json:"parameters"`
	Data       json.RawMessage            `json:"data"`
}

type outputJSON struct {
	Name       string                     `json:"name"`
	Parameters map[string]json.RawMessage `json:"parameters"`
}

// inferCall is a decoded infer request: what core takes, and how to answer.
type inferCall struct {
	req    *core.InferenceRequest
	opts   protocol.Options
	binary map[string]bool // outputs asked for as binary data (true) or JSON (false)
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
	call, err := decodeInfer(m, body, r.Header.Get(HeaderContentLength))
	if err != nil {
		writeError(w, err)
		return
	}
	resp, err := s.runOnce(r, m, call.req)
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
// to go away).
func (s *Server) runOnce(r *http.Request, m *core.Model, req *core.InferenceRequest) (*core.Response, error) {
	done := make(chan *core.Response, 1)
	err := s.core.Submit(r.Context(), m, req, func(resp *core.Response, final bool) {
		if final {
			done <- resp
		}
	})
	if err != nil {
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
	}
}

// decodeInfer decodes an infer body: JSON, or, when headerLen is set, a
// JSON header of that many bytes followed by binary tensor data. Input
// buffers point into body, which must outlive the request.
func decodeInfer(m *core.Model, body []byte, headerLen string) (*inferCall, error) {
	bad := func(format string, args ...any) error {
		return core.Errorf(core.CodeInvalidArg, "model %q: %s", m.Name(), fmt.Sprintf(format, args...))
	}
	header, binary := body, []byte(nil)
	if headerLen != "" {
		n, err := strconv.ParseInt(headerLen, 10, 64)
		if err != nil || n < 0 || n > int64(len(body)) {
			return nil, bad("%s %q is not a size within the %d-byte body", HeaderContentLength, headerLen, len(body))
		}
		header, binary = body[:n], body[n:]
	}
	var rj inferRequestJSON
	if err := json.Unmarshal(header, &rj); err != nil {
		return nil, bad("the request is not a valid inference request JSON: %v", err)
	}
	call := &inferCall{req: &core.InferenceRequest{Model: m.Name(), Version: m.Version(), ID: rj.ID}, binary: map[string]bool{}}
	for _, name := range sortedKeys(rj.Parameters) {
		v, err := parameterValue(rj.Parameters[name])
		if err == nil {
			err = protocol.ApplyParameter(call.req, &call.opts, name, v)
		}
		if err != nil {
			return nil, bad("parameter %q: %v", name, err)
		}
	}
	if len(rj.Inputs) > maxTensors || len(rj.Outputs) > maxTensors {
		return nil, bad("the request has %d inputs and %d outputs; the server takes at most %d of each", len(rj.Inputs), len(rj.Outputs), maxTensors)
	}
	call.req.Inputs = make([]core.Input, 0, len(rj.Inputs))
	for i := range rj.Inputs {
		in, rest, err := decodeInput(m, &rj.Inputs[i], binary)
		if err != nil {
			return nil, err
		}
		binary = rest
		call.req.Inputs = append(call.req.Inputs, in)
	}
	if len(binary) > 0 {
		return nil, bad("%d bytes of binary data follow the inputs' binary_data_size", len(binary))
	}
	for _, out := range rj.Outputs {
		for _, name := range sortedKeys(out.Parameters) {
			switch name {
			case paramBinaryData:
				v, err := parameterValue(out.Parameters[name])
				if err != nil || v.Kind != protocol.KindBool {
					return nil, bad("output %q: parameter %q must be a boolean", out.Name, name)
				}
				call.binary[out.Name] = v.Bool
			case "classification":
				return nil, core.Errorf(core.CodeUnsupported, "model %q: output %q: the classification extension is not supported by this server", m.Name(), out.Name)
			case "shared_memory_region", "shared_memory_offset", "shared_memory_byte_size":
				return nil, core.Errorf(core.CodeUnsupported, "model %q: output %q: shared-memory outputs are not supported by this server", m.Name(), out.Name)
			}
		}
		call.req.Outputs = append(call.req.Outputs, out.Name)
	}
	return call, nil
}

// maxTensors bounds the inputs and the requested outputs of one request,
// as over gRPC.
const maxTensors = 4096

// decodeInput decodes one input: its values from JSON, or its bytes from
// the front of binary (returning the rest).
func decodeInput(m *core.Model, in *inputJSON, binary []byte) (core.Input, []byte, error) {
	bad := func(format string, args ...any) error {
		return core.Errorf(core.CodeInvalidArg, "model %q: input %q: %s", m.Name(), in.Name, fmt.Sprintf(format, args...))
	}
	dt := core.ParseDataType(in.Datatype)
	if dt == core.TypeInvalid {
		return core.Input{}, nil, bad("unknown datatype %q", in.Datatype)
	}
	if len(in.Shape) > maxDims {
		return core.Input{}, nil, bad("%d dimensions; the server takes at most %d", len(in.Shape), maxDims)
	}
	size := int64(-1)
	for _, name := range sortedKeys(in.Parameters) {
		switch name {
		case paramBinaryDataSize:
			v, err := parameterValue(in.Parameters[name])
			if err != nil || v.Kind != protocol.KindInt || v.Int < 0 {
				return core.Input{}, nil, bad("parameter %q must be a non-negative integer", name)
			}
			size = v.Int
		case "shared_memory_region", "shared_memory_offset", "shared_memory_byte_size":
			return core.Input{}, nil, core.Errorf(core.CodeUnsupported, "model %q: input %q: shared-memory inputs are not supported by this server", m.Name(), in.Name)
		}
	}
	if size >= 0 {
		if len(in.Data) > 0 {
			return core.Input{}, nil, bad("has both data and %s", paramBinaryDataSize)
		}
		if size > int64(len(binary)) {
			return core.Input{}, nil, bad("%s is %d but only %d bytes of binary data are left", paramBinaryDataSize, size, len(binary))
		}
		return core.NewInput(in.Name, dt, in.Shape, binary[:size:size]), binary[size:], nil
	}
	want := core.ElementCount(in.Shape)
	if want < 0 {
		return core.Input{}, nil, bad("shape %v is not a tensor shape", in.Shape)
	}
	if size := int64(dt.ByteSize()); size > 0 && want > m.MaxTensorBytes()/size {
		return core.Input{}, nil, bad("shape %v holds more than the server's limit of %d bytes", in.Shape, m.MaxTensorBytes())
	}
	if len(in.Data) == 0 {
		return core.Input{}, nil, bad("has neither data nor %s", paramBinaryDataSize)
	}
	t, err := decodeValues(dt, in.Data, want)
	if err != nil {
		return core.Input{}, nil, bad("data: %v", err)
	}
	if t.count != want {
		return core.Input{}, nil, bad("%d values in data for shape %v, which holds %d", t.count, in.Shape, want)
	}
	return core.NewInput(in.Name, dt, in.Shape, t.data), binary, nil
}

// maxDims bounds the dimensions of one shape, as over gRPC.
const maxDims = 64

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// writeInferResponse answers an infer request: JSON, or, when an output is
// sent as binary data, a JSON header (its size in
// Inference-Header-Content-Length) followed by the outputs' bytes, each
// written from the response's own memory.
func writeInferResponse(w http.ResponseWriter, m *core.Model, call *inferCall, resp *core.Response) {
	b := []byte(`{"model_name":`)
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
	var binary [][]byte
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
		asBinary, set := call.binary[o.Name]
		if !set {
			asBinary = call.opts.BinaryDataOutput
		}
		if asBinary {
			b = append(b, `,"parameters":{"binary_data_size":`...)
			b = strconv.AppendInt(b, int64(len(o.Data)), 10)
			b = append(b, `}}`...)
			binary = append(binary, o.Data)
			continue
		}
		b = append(b, `,"data":[`...)
		var err error
		if b, err = appendValues(b, o.DataType, o.Data); err != nil {
			writeError(w, core.Errorf(core.CodeInvalidArg, "model %q: output %q: %v", m.Name(), o.Name, err))
			return
		}
		b = append(b, `]}`...)
	}
	b = append(b, `]}`...)
	if len(binary) == 0 {
		writeRawJSON(w, http.StatusOK, b)
		return
	}
	h := w.Header()
	h.Set(HeaderContentLength, strconv.Itoa(len(b)))
	h.Set("Content-Type", "application/octet-stream")
	total := len(b)
	for _, d := range binary {
		total += len(d)
	}
	h.Set("Content-Length", strconv.Itoa(total))
	w.WriteHeader(http.StatusOK)
	for _, d := range append([][]byte{b}, binary...) {
		if _, err := w.Write(d); err != nil {
			return
		}
	}
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
