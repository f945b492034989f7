package loadgen

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	pb "tritonhost/frontend/inferencepb"
)

// HTTPTarget is where HTTP mode sends requests: Triton's HTTP/REST
// endpoint at URL (http://host:port), through Client (nil: a client whose
// transport keeps a connection per request in flight).
type HTTPTarget struct {
	URL    string
	Client *http.Client
}

// NewHTTPClient returns a client that keeps up to conns connections to one
// server open between requests, so that requests at that concurrency do
// not open a connection each.
func NewHTTPClient(conns int) *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = conns
	t.MaxIdleConnsPerHost = conns
	t.DisableCompression = true
	return &http.Client{Transport: t}
}

// httpRequest is a request encoded once in Triton's binary tensor
// extension: a JSON header, then every input's bytes, with outputs asked
// for as binary too.
type httpRequest struct {
	url        string
	body       []byte
	headerSize string
}

// inferJSON is the JSON header of an HTTP infer request.
type inferJSON struct {
	Parameters map[string]any  `json:"parameters,omitempty"`
	Inputs     []tensorJSON    `json:"inputs"`
	Outputs    []requestedJSON `json:"outputs,omitempty"`
}

type tensorJSON struct {
	Name       string         `json:"name"`
	Datatype   string         `json:"datatype"`
	Shape      []int64        `json:"shape"`
	Parameters map[string]any `json:"parameters"`
}

type requestedJSON struct {
	Name       string         `json:"name"`
	Parameters map[string]any `json:"parameters"`
}

// encodeHTTP encodes req (raw_input_contents) for POST
// /v2/models/<name>[/versions/<v>]/infer on base.
func encodeHTTP(base string, req *pb.ModelInferRequest) (*httpRequest, error) {
	if len(req.GetRawInputContents()) != len(req.GetInputs()) {
		return nil, errors.New("loadgen: HTTP mode needs every input in raw_input_contents")
	}
	h := inferJSON{Parameters: map[string]any{"binary_data_output": true}}
	for k, p := range req.GetParameters() {
		switch v := p.GetParameterChoice().(type) {
		case *pb.InferParameter_BoolParam:
			h.Parameters[k] = v.BoolParam
		case *pb.InferParameter_Int64Param:
			h.Parameters[k] = v.Int64Param
		case *pb.InferParameter_Uint64Param:
			h.Parameters[k] = v.Uint64Param
		case *pb.InferParameter_DoubleParam:
			h.Parameters[k] = v.DoubleParam
		case *pb.InferParameter_StringParam:
			h.Parameters[k] = v.StringParam
		}
	}
	for i, in := range req.GetInputs() {
		h.Inputs = append(h.Inputs, tensorJSON{Name: in.GetName(), Datatype: in.GetDatatype(), Shape: in.GetShape(),
			Parameters: map[string]any{"binary_data_size": len(req.GetRawInputContents()[i])}})
	}
	for _, out := range req.GetOutputs() {
		h.Outputs = append(h.Outputs, requestedJSON{Name: out.GetName(), Parameters: map[string]any{"binary_data": true}})
	}
	header, err := json.Marshal(h)
	if err != nil {
		return nil, fmt.Errorf("loadgen: encode the HTTP request: %w", err)
	}
	body := bytes.NewBuffer(make([]byte, 0, len(header)+protoRawSize(req)))
	body.Write(header)
	for _, raw := range req.GetRawInputContents() {
		body.Write(raw)
	}
	path := "/v2/models/" + url.PathEscape(req.GetModelName())
	if v := req.GetModelVersion(); v != "" {
		path += "/versions/" + url.PathEscape(v)
	}
	return &httpRequest{url: strings.TrimSuffix(base, "/") + path + "/infer", body: body.Bytes(),
		headerSize: strconv.Itoa(len(header))}, nil
}

func protoRawSize(req *pb.ModelInferRequest) int {
	n := 0
	for _, raw := range req.GetRawInputContents() {
		n += len(raw)
	}
	return n
}

// httpSender sends the request with POST and waits for its whole answer.
type httpSender struct {
	ctx    context.Context
	client *http.Client
	req    *httpRequest
}

func (h *httpSender) call(string) outcome {
	o := outcome{sent: time.Now()}
	o.err = h.post()
	o.done = time.Now()
	if o.err == nil {
		o.responses, o.first = 1, o.done
	}
	return o
}

func (h *httpSender) post() error {
	r, err := http.NewRequestWithContext(h.ctx, http.MethodPost, h.req.url, bytes.NewReader(h.req.body))
	if err != nil {
		return err
	}
	r.Header.Set("Content-Type", "application/octet-stream")
	r.Header.Set("Inference-Header-Content-Length", h.req.headerSize)
	resp, err := h.client.Do(r)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error string `json:"error"`
		}
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		if json.Unmarshal(b, &e) == nil && e.Error != "" {
			return fmt.Errorf("HTTP %d: %s", resp.StatusCode, e.Error)
		}
		return fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	_, err = io.Copy(io.Discard, resp.Body) // the whole response, as a client reads it
	return err
}

func (h *httpSender) close() {}
