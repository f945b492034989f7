package httpserver

import (
	"encoding/json"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

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
	binary outputChoices           // outputs asked for as binary data (true) or JSON (false)
	mem    *protocol.RequestMemory // the shared memory its tensors lease

	sub    core.Submission        // what req points to, in the same allocation
	memory protocol.RequestMemory // what mem points to
	json   inferMemory            // what the request's JSON decoded to, where it fits
	// The first inputs, their buffers and the first requested outputs'
	// names, which sub refers to.
	inputs  [2]core.Input
	buffers [2][1][]byte
	outputs [2]string
}

// infer serves POST .../infer: one request, one response, on a model that
// is not decoupled.
func (s *Server) infer(w http.ResponseWriter, r *http.Request) {
	s.inferModel(w, r, r.PathValue("model"), r.PathValue("version"))
}

// inferModel is infer on the model and version its route names.
func (s *Server) inferModel(w http.ResponseWriter, r *http.Request, model, version string) {
	m, body, err := s.inferenceBody(w, r, model, version)
	if err == nil && m.Decoupled() {
		err = errDecoupled()
	}
	if err != nil {
		writeError(w, err)
		return
	}
	call, err := s.decodeInfer(m, body, headerValue(r.Header, HeaderContentLength), r.Header)
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
	resp.Free()
}

// inferenceBody resolves the model and version an inference route names
// and reads the body; a draining server refuses.
func (s *Server) inferenceBody(w http.ResponseWriter, r *http.Request, model, version string) (*core.Model, []byte, error) {
	if s.isDraining() {
		return nil, nil, core.Errorf(core.CodeUnavailable, "server is shutting down")
	}
	m, err := protocol.LookupModel(s.core, model, version)
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
// request (nil: no shared memory). The response may hold memory the
// backend lends (Submission.FreesResponses): the caller frees it once it
// has written the outputs.
func (s *Server) runOnce(r *http.Request, m *core.Model, req *core.Submission, mem *protocol.RequestMemory) (*core.Response, error) {
	if mem.Used() {
		req.Finished = mem.Release
	}
	req.FreesResponses = true
	// Not Submission.Inline: a handler executing its request could not
	// answer the client at the server's abort time while the backend runs.
	w := waiters.Get().(*waiter)
	w.mem = mem
	// The handler cancels the request whenever it stops waiting.
	ctx := r.Context()
	cancel, err := s.core.SubmitCancelable(protocol.WatchedContext(ctx), m, req, w.deliver)
	if err != nil {
		mem.Release()
		return nil, err // w is left to the garbage collector
	}
	select {
	case resp := <-w.done:
		w.reuse()
		switch {
		case resp == nil:
			return nil, core.Errorf(core.CodeInternal, "model %q completed request %q without a response", m.Name(), req.ID)
		case resp.Err != nil:
			resp.Free()
			return nil, resp.Err
		}
		return resp, nil
	case <-ctx.Done():
		cancel.Cancel()
		w.abandon()
		return nil, core.Errorf(core.CodeCancelled, "request %q to model %q: the client went away", req.ID, m.Name())
	case <-s.aborting:
		cancel.Cancel()
		w.abandon()
		return nil, s.abortErr
	}
}

// outputChoices records, by output name, whether each output that says
// so is asked for as binary data: a few in a list, more in a map.
type outputChoices struct {
	list  []outputChoice // in fixed until a map takes them
	m     map[string]bool
	fixed [listedChoices]outputChoice
}

type outputChoice struct {
	name   string
	binary bool
}

// listedChoices is how many choices the list holds before a map takes
// them all.
const listedChoices = 8

// set records the choice of output name; a later one for a name replaces
// an earlier.
func (c *outputChoices) set(name string, binary bool) {
	if c.m != nil {
		c.m[name] = binary
		return
	}
	for i := range c.list {
		if c.list[i].name == name {
			c.list[i].binary = binary
			return
		}
	}
	if len(c.list) < listedChoices {
		if c.list == nil {
			c.list = c.fixed[:0]
		}
		c.list = append(c.list, outputChoice{name, binary})
		return
	}
	c.m = make(map[string]bool, 2*listedChoices)
	for _, o := range c.list {
		c.m[o.name] = o.binary
	}
	c.m[name] = binary
	c.list, c.fixed = nil, [listedChoices]outputChoice{}
}

// get returns the choice recorded for output name, and whether there is
// one.
func (c *outputChoices) get(name string) (binary, set bool) {
	if c.m != nil {
		binary, set = c.m[name]
		return binary, set
	}
	for _, o := range c.list {
		if o.name == name {
			return o.binary, true
		}
	}
	return false, false
}

// waiter takes the final response of a request runOnce submitted to its
// channel, placed through mem. It goes back to waiters only once nothing
// more can arrive on it and its channel is empty: after its handler has
// received the response, or, for a handler that gave up first (the client
// went away, the server aborted), after that handler has freed a response
// that was already on its way. One given up before its response came is
// left to its request, which frees the response when it comes.
type waiter struct {
	done    chan *core.Response
	mem     *protocol.RequestMemory
	deliver core.ResponseFunc
	state   atomic.Int32 // waiting, delivered or abandoned
}

// States of a waiter.
const (
	waiting int32 = iota
	delivered
	abandoned
)

// waiters holds the waiters of finished requests, with their channels and
// response functions, for the next requests.
var waiters = sync.Pool{New: func() any {
	w := &waiter{done: make(chan *core.Response, 1)}
	w.deliver = func(resp *core.Response, final bool) {
		if !final {
			resp.Free() // a model that is not decoupled sends one response, final
			return
		}
		resp = w.mem.Place(resp)
		if w.state.CompareAndSwap(waiting, delivered) {
			w.done <- resp
			return
		}
		resp.Free() // its handler has gone
	}
	return w
}}

// reuse pools w once its handler has received the response.
func (w *waiter) reuse() {
	w.mem = nil
	w.state.Store(waiting)
	waiters.Put(w)
}

// abandon gives up the response: one already on its way is freed, and w
// pooled again; otherwise the request frees the response when it comes,
// and w is left to it.
func (w *waiter) abandon() {
	if w.state.CompareAndSwap(waiting, abandoned) {
		return
	}
	(<-w.done).Free()
	w.reuse()
}

// writeInferResponse answers an infer request: JSON, or, when an output is
// sent as binary data, a JSON header (its size in
// Inference-Header-Content-Length) followed by the outputs' bytes, each
// written from the response's own memory. A large JSON part is measured,
// then streamed (see jsonwriter.go).
func writeInferResponse(w http.ResponseWriter, m *core.Model, call *inferCall, resp *core.Response) {
	var binaryMem [4][]byte
	binary := binaryMem[:0]
	render := func(j *jsonWriter) (err error) {
		binary, err = renderInferJSON(j, m, call, resp, binary[:0])
		return err
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
	setDate(h)
	total := size
	if len(binary) > 0 {
		h[HeaderContentLength] = sizeValue(size)
		h["Content-Type"] = binaryContentType
		for _, d := range binary {
			total += int64(len(d))
		}
	} else {
		h["Content-Type"] = jsonContentType
	}
	if total > implicitLengthMax {
		h["Content-Length"] = []string{strconv.FormatInt(total, 10)}
	}
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

// renderInferJSON renders the JSON of an infer response, and returns
// binary with the outputs that follow it as binary data appended.
func renderInferJSON(j *jsonWriter, m *core.Model, call *inferCall, resp *core.Response, binary [][]byte) ([][]byte, error) {
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
		b = appendParameters(b, resp.Parameters)
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
		asBinary, set := call.binary.get(o.Name)
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
		j.buf = append(b, `,"data":[`...)
		if err := writeValues(j, o.DataType, o.Data); err != nil {
			return binary, core.Errorf(core.CodeInvalidArg, "model %q: output %q: %v", m.Name(), o.Name, err)
		}
		b = append(j.buf, `]}`...)
	}
	j.buf = append(b, `]}`...)
	return binary, nil
}

// appendParameters appends response parameters as a JSON object, as
// json.Marshal writes a map of their values: members in the order of their
// names, the last of a name kept; "{}" when a double is not finite.
func appendParameters(b []byte, params []core.Parameter) []byte {
	var orderMem [8]int
	order := orderMem[:0]
	for i := range params {
		order = append(order, i)
	}
	slices.SortStableFunc(order, func(x, y int) int { return strings.Compare(params[x].Name, params[y].Name) })
	start := len(b)
	b = append(b, '{')
	for k, i := range order {
		p := &params[i]
		if k+1 < len(order) && params[order[k+1]].Name == p.Name {
			continue // a later parameter of the name replaces it
		}
		if len(b) > start+1 {
			b = append(b, ',')
		}
		b = appendJSONString(b, p.Name)
		b = append(b, ':')
		switch p.Type {
		case core.ParamBool:
			b = strconv.AppendBool(b, p.Bool)
		case core.ParamInt:
			b = strconv.AppendInt(b, p.Int, 10)
		case core.ParamDouble:
			if math.IsNaN(p.Double) || math.IsInf(p.Double, 0) {
				return append(b[:start], "{}"...)
			}
			b = appendJSONFloat(b, p.Double)
		case core.ParamBytes:
			b = appendJSONString(b, string(p.Bytes))
		default:
			b = appendJSONString(b, p.String)
		}
	}
	return append(b, '}')
}

// appendJSONFloat appends a finite v as encoding/json writes a float64:
// the shortest decimal that reads back as v, with an exponent only for
// magnitudes below 1e-6 or from 1e21, and at least one digit in it.
func appendJSONFloat(b []byte, v float64) []byte {
	format := byte('f')
	if abs := math.Abs(v); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, v, format, -1, 64)
	if n := len(b); format == 'e' && n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
		b[n-2] = b[n-1] // e-09 is e-9
		b = b[:n-1]
	}
	return b
}
