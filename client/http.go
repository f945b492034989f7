package client

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

	"google.golang.org/grpc"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/tritonhost/tritonhost/core/configpb"
	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
)

// maxHTTPBody bounds what HTTP reads of one answer it decodes (metadata,
// configuration, statistics, an error).
const maxHTTPBody = 64 << 20

// HTTP is a client of Triton's HTTP/REST protocol (KServe v2 with Triton's
// extensions). Its model queries take and return the gRPC protocol's
// messages, whose fields the JSON bodies carry, so that code can ask either
// protocol through one interface. Safe for concurrent use.
type HTTP struct {
	base string // http://host:port, no trailing slash
	c    *http.Client
}

// NewHTTP returns a client of the server at addr (HOST:PORT or
// http://HOST:PORT) that keeps up to conns connections to it open between
// requests (at least 1), so that conns requests at a time do not open a
// connection each.
func NewHTTP(addr string, conns int) (*HTTP, error) {
	base := addr
	if !strings.Contains(base, "://") {
		base = "http://" + base
	}
	u, err := url.Parse(base)
	if err != nil || u.Host == "" || u.Scheme != "http" || (u.Path != "" && u.Path != "/") {
		return nil, fmt.Errorf("server address %q: want HOST:PORT or http://HOST:PORT", addr)
	}
	conns = max(conns, 1)
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = conns
	t.MaxIdleConnsPerHost = conns
	t.DisableCompression = true
	return &HTTP{base: strings.TrimSuffix(base, "/"), c: &http.Client{Transport: t}}, nil
}

// URL returns the server's base URL, http://host:port.
func (h *HTTP) URL() string { return h.base }

// Close closes the connections kept open.
func (h *HTTP) Close() { h.c.CloseIdleConnections() }

// ModelPath is /v2/models/<model>[/versions/<version>], escaped.
func ModelPath(model, version string) string {
	p := "/v2/models/" + url.PathEscape(model)
	if version != "" {
		p += "/versions/" + url.PathEscape(version)
	}
	return p
}

// ModelMetadata GETs the model's metadata. The call options are ignored.
func (h *HTTP) ModelMetadata(ctx context.Context, in *pb.ModelMetadataRequest, _ ...grpc.CallOption) (*pb.ModelMetadataResponse, error) {
	resp := &pb.ModelMetadataResponse{}
	return resp, h.get(ctx, ModelPath(in.GetName(), in.GetVersion()), resp)
}

// ModelConfig GETs the model's configuration. The call options are
// ignored.
func (h *HTTP) ModelConfig(ctx context.Context, in *pb.ModelConfigRequest, _ ...grpc.CallOption) (*pb.ModelConfigResponse, error) {
	resp := &pb.ModelConfigResponse{Config: new(configpb.ModelConfig)}
	return resp, h.get(ctx, ModelPath(in.GetName(), in.GetVersion())+"/config", resp.Config)
}

// ModelStatistics GETs the statistics of the model (every model when the
// name is empty). The call options are ignored.
func (h *HTTP) ModelStatistics(ctx context.Context, in *pb.ModelStatisticsRequest, _ ...grpc.CallOption) (*pb.ModelStatisticsResponse, error) {
	path := "/v2/models/stats"
	if in.GetName() != "" {
		path = ModelPath(in.GetName(), in.GetVersion()) + "/stats"
	}
	resp := &pb.ModelStatisticsResponse{}
	return resp, h.get(ctx, path, resp)
}

// get GETs path and decodes its JSON body into into.
func (h *HTTP) get(ctx context.Context, path string, into proto.Message) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, h.base+path, nil)
	if err != nil {
		return err
	}
	resp, err := h.c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %w", path, statusError(resp))
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxHTTPBody))
	if err != nil {
		return fmt.Errorf("GET %s: %w", path, err)
	}
	if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(body, into); err != nil {
		return fmt.Errorf("GET %s: %w", path, err)
	}
	return nil
}

// statusError reads a failed answer: "HTTP <code>: <Triton's error>".
func statusError(resp *http.Response) error {
	var e struct {
		Error string `json:"error"`
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxHTTPBody))
	if json.Unmarshal(b, &e) == nil && e.Error != "" {
		return fmt.Errorf("HTTP %d: %s", resp.StatusCode, e.Error)
	}
	return fmt.Errorf("HTTP %d", resp.StatusCode)
}

// BinaryInfer is an inference request encoded once for POST
// /v2/models/<m>[/versions/<v>]/infer in Triton's binary tensor extension:
// a JSON header, then every input's bytes, with every output asked for as
// binary too. It is immutable: send it as often as wanted, from any
// goroutine.
type BinaryInfer struct {
	path       string
	body       []byte
	headerSize string
}

// inferHeader is the JSON header of a binary infer request.
type inferHeader struct {
	Parameters map[string]any  `json:"parameters,omitempty"`
	Inputs     []inputHeader   `json:"inputs"`
	Outputs    []requestedJSON `json:"outputs,omitempty"`
}

type inputHeader struct {
	Name       string         `json:"name"`
	Datatype   string         `json:"datatype"`
	Shape      []int64        `json:"shape"`
	Parameters map[string]any `json:"parameters"`
}

type requestedJSON struct {
	Name       string         `json:"name"`
	Parameters map[string]any `json:"parameters"`
}

// EncodeBinaryInfer encodes req, whose inputs must all be in
// raw_input_contents (Request.Message makes them so). Its id is left out.
func EncodeBinaryInfer(req *pb.ModelInferRequest) (*BinaryInfer, error) {
	if len(req.GetRawInputContents()) != len(req.GetInputs()) {
		return nil, errors.New("binary infer over HTTP needs every input in raw_input_contents")
	}
	h := inferHeader{Parameters: map[string]any{"binary_data_output": true}}
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
	size := 0
	for i, in := range req.GetInputs() {
		raw := req.GetRawInputContents()[i]
		size += len(raw)
		h.Inputs = append(h.Inputs, inputHeader{Name: in.GetName(), Datatype: in.GetDatatype(), Shape: in.GetShape(),
			Parameters: map[string]any{"binary_data_size": len(raw)}})
	}
	for _, out := range req.GetOutputs() {
		h.Outputs = append(h.Outputs, requestedJSON{Name: out.GetName(), Parameters: map[string]any{"binary_data": true}})
	}
	header, err := json.Marshal(h)
	if err != nil {
		return nil, fmt.Errorf("encode the HTTP infer request of model %q: %w", req.GetModelName(), err)
	}
	body := bytes.NewBuffer(make([]byte, 0, len(header)+size))
	body.Write(header)
	for _, raw := range req.GetRawInputContents() {
		body.Write(raw)
	}
	return &BinaryInfer{path: ModelPath(req.GetModelName(), req.GetModelVersion()) + "/infer", body: body.Bytes(),
		headerSize: strconv.Itoa(len(header))}, nil
}

// InferDiscard posts r and reads the whole answer as a client would, then
// drops it: what a load generator needs, without decoding the outputs. A
// failure says "HTTP <code>: <the server's error>".
func (h *HTTP) InferDiscard(ctx context.Context, r *BinaryInfer) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.base+r.path, bytes.NewReader(r.body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/octet-stream")
	req.Header.Set("Inference-Header-Content-Length", r.headerSize)
	resp, err := h.c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return statusError(resp)
	}
	_, err = io.Copy(io.Discard, resp.Body)
	return err
}
