package httpserver

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/internal/protocol"
)

// Parameters of the binary tensor and shared-memory extensions.
const (
	paramBinaryData     = "binary_data"      // output: send it as binary data
	paramBinaryDataSize = "binary_data_size" // input or output: its bytes in the binary part
	paramShmRegion      = "shared_memory_region"
	paramShmOffset      = "shared_memory_offset"
	paramShmByteSize    = "shared_memory_byte_size"
	paramClassification = "classification"
)

// decodeInfer decodes an infer body: JSON, or, when headerLen is set, a
// JSON header of that many bytes followed by binary tensor data. Input
// buffers point into body, which must outlive the request, or into the
// shared memory the call leases (released here on error; otherwise
// runOnce releases it). The headers Options.HeaderForward selects follow
// the body's parameters.
func (s *Server) decodeInfer(m *core.Model, body []byte, headerLen string, headers http.Header) (*inferCall, error) {
	call := &inferCall{}
	call.mem = &call.memory
	if err := s.decodeInferInto(call, m, body, headerLen, headers); err != nil {
		call.mem.Release()
		return nil, err
	}
	return call, nil
}

func (s *Server) decodeInferInto(call *inferCall, m *core.Model, body []byte, headerLen string, headers http.Header) error {
	bad := func(format string, args ...any) error {
		return core.Errorf(core.CodeInvalidArg, "model %q: %s", m.Name(), fmt.Sprintf(format, args...))
	}
	header, binary := body, []byte(nil)
	if headerLen != "" {
		n, err := strconv.ParseInt(headerLen, 10, 64)
		if err != nil || n < 0 || n > int64(len(body)) {
			return bad("%s %q is not a size within the %d-byte body", HeaderContentLength, headerLen, len(body))
		}
		header, binary = body[:n], body[n:]
	}
	var rj inferRequestJSON
	if err := decodeInferJSON(header, &rj, &call.json, m); err != nil {
		return bad("the request is not a valid inference request JSON: %v", err)
	}
	if err := checkInferCounts(&rj); err != nil {
		return fmt.Errorf("model %q: %w", m.Name(), err)
	}
	call.sub = core.Submission{Model: m.Name(), Version: m.Version(), ID: rj.ID}
	call.req = &call.sub
	if err := rj.Parameters.each(func(name string, raw json.RawMessage) error {
		v, err := parameterValue(raw)
		if err == nil {
			err = protocol.ApplyParameter(call.req, &call.opts, name, v)
		}
		if err != nil {
			return bad("parameter %q: %v", name, err)
		}
		return nil
	}); err != nil {
		return err
	}
	if err := s.forwardHeaders(headers, call.req); err != nil {
		return err
	}
	call.req.Inputs = call.inputs[:0]
	if n := len(rj.Inputs.list); n > len(call.inputs) {
		call.req.Inputs = make([]core.Input, 0, n)
	}
	for i := range rj.Inputs.list {
		var slot *[1][]byte
		if i < len(call.buffers) {
			slot = &call.buffers[i]
		}
		in, rest, err := s.decodeInput(m, &rj.Inputs.list[i], binary, call.mem, slot)
		if err != nil {
			return err
		}
		binary = rest
		call.req.Inputs = append(call.req.Inputs, in)
	}
	if len(binary) > 0 {
		return core.Errorf(core.CodeInvalidArg, "unexpected additional input data for model '%s'", m.Name())
	}
	if n := len(rj.Outputs.list); n > 0 && n <= len(call.outputs) {
		call.req.Outputs = call.outputs[:0]
	}
	for i := range rj.Outputs.list {
		if err := s.decodeOutput(m, &rj.Outputs.list[i], call); err != nil {
			return err
		}
	}
	return nil
}

// checkInferCounts refuses an infer request past the protocols' bounds
// (protocol.MaxRequestTensors and the others), in the words the gRPC
// frontend uses, naming the tensor. A list or object past its bound was
// counted only one past it (jsonbound.go): its refusal says "more than".
func checkInferCounts(rj *inferRequestJSON) error {
	if rj.Parameters.over {
		return protocol.MoreThan("the request", "parameters", protocol.MaxRequestParameters)
	}
	if rj.Inputs.over {
		return protocol.MoreThan("the request", "inputs", protocol.MaxRequestTensors)
	}
	if rj.Outputs.over {
		return protocol.MoreThan("the request", "requested outputs", protocol.MaxRequestTensors)
	}
	for i := range rj.Inputs.list {
		in := &rj.Inputs.list[i]
		if in.Parameters.over {
			return protocol.MoreThan(fmt.Sprintf("input %q", in.Name), "parameters", protocol.MaxRequestParameters)
		}
		if in.Shape.over {
			return protocol.MoreThan(fmt.Sprintf("input %q", in.Name), "dimensions", protocol.MaxTensorDims)
		}
	}
	for i := range rj.Outputs.list {
		if out := &rj.Outputs.list[i]; out.Parameters.over {
			return protocol.MoreThan(fmt.Sprintf("output %q", out.Name), "parameters", protocol.MaxRequestParameters)
		}
	}
	return nil
}

// tensorParams are the extension parameters of one input or output.
type tensorParams struct {
	binarySize    uint64 // binary_data_size
	hasBinarySize bool
	binary        bool // binary_data
	hasBinary     bool
	region        string // shared_memory_region
	hasRegion     bool
	offset        uint64 // shared_memory_offset
	byteSize      uint64 // shared_memory_byte_size
	classify      bool   // classification is set
}

// parseTensorParams reads the extension parameters of a tensor, each by
// its type, with Triton's words for one of the wrong type; other
// parameters are left alone.
func parseTensorParams(params *paramsJSON) (tensorParams, error) {
	var p tensorParams
	err := params.each(p.set)
	return p, err
}

// set reads the parameter name, if it is an extension's, from raw.
func (p *tensorParams) set(name string, raw json.RawMessage) error {
	var err error
	switch name {
	case paramBinaryDataSize:
		p.hasBinarySize = true
		err = unmarshalParam(raw, &p.binarySize)
	case paramBinaryData:
		p.hasBinary = true
		err = unmarshalParam(raw, &p.binary)
	case paramShmRegion:
		p.hasRegion = true
		err = unmarshalParam(raw, &p.region)
	case paramShmOffset:
		err = unmarshalParam(raw, &p.offset)
	case paramShmByteSize:
		err = unmarshalParam(raw, &p.byteSize)
	case paramClassification:
		p.classify = true
	}
	if err != nil {
		return core.Errorf(core.CodeInvalidArg, "Unable to parse '%s'", name)
	}
	return nil
}

// unmarshalParam decodes raw into *v, which holds its zero value, as
// json.Unmarshal does; the forms clients send (digits, true or false, a
// string without escapes) are read directly.
func unmarshalParam[T uint64 | bool | string](raw []byte, v *T) error {
	switch v := any(v).(type) {
	case *uint64:
		if len(raw) > 0 && (raw[0] != '0' || len(raw) == 1) && digitsFrom(raw, 0) == len(raw) {
			if n, err := strconv.ParseUint(string(raw), 10, 64); err == nil {
				*v = n
				return nil
			}
		}
	case *bool:
		switch string(raw) {
		case "true":
			*v = true
			return nil
		case "false":
			*v = false
			return nil
		}
	case *string:
		d := inferDecoder{b: raw}
		if s, ok := d.plainString(); ok && d.i == len(raw) {
			*v = string(s)
			return nil
		}
	}
	slow := new(T) // json.Unmarshal takes its target to the heap; v stays where it is
	err := json.Unmarshal(raw, slow)
	*v = *slow
	return err
}

// contentError is Triton's refusal of an input that does not give its
// data in exactly one way.
func contentError(data, binary, shm bool) error {
	msg := "Input must set only one of the following fields: 'data', 'binary_data_size' in 'parameters', 'shared_memory_region' in 'parameters'. But"
	if !data && !binary && !shm {
		return core.Errorf(core.CodeInvalidArg, "%s no field is set", msg)
	}
	msg += " set"
	for _, f := range []struct {
		set  bool
		name string
	}{{data, "data"}, {binary, "binary_data_size"}, {shm, "shared_memory_region"}} {
		if f.set {
			msg += " '" + f.name + "'"
		}
	}
	return core.Errorf(core.CodeInvalidArg, "%s", msg)
}

// decodeInput decodes one input: its values from JSON, its bytes from the
// front of binary (returning the rest), or a span of a shared-memory
// region leased into mem. The input's one buffer is held in slot (nil:
// allocated).
func (s *Server) decodeInput(m *core.Model, in *inputJSON, binary []byte, mem *protocol.RequestMemory, slot *[1][]byte) (core.Input, []byte, error) {
	bad := func(format string, args ...any) error {
		return core.Errorf(core.CodeInvalidArg, "model %q: input %q: %s", m.Name(), in.Name, fmt.Sprintf(format, args...))
	}
	shape := in.Shape.dims
	p, err := parseTensorParams(&in.Parameters)
	if err != nil {
		return core.Input{}, nil, err
	}
	hasData := len(in.Data) > 0
	if n := btoi(hasData) + btoi(p.hasBinarySize) + btoi(p.hasRegion); n != 1 {
		return core.Input{}, nil, contentError(hasData, p.hasBinarySize, p.hasRegion)
	}
	dt := core.ParseDataType(in.Datatype)
	if dt == core.TypeInvalid {
		return core.Input{}, nil, bad("unknown datatype %q", in.Datatype)
	}
	input := func(data []byte) core.Input {
		if slot == nil {
			return core.NewInput(in.Name, dt, shape, data)
		}
		slot[0] = data
		return core.Input{Name: in.Name, DataType: dt, Shape: shape, Buffers: slot[:]}
	}
	switch {
	case p.hasRegion:
		if err := s.clientSharedMemory(); err != nil {
			return core.Input{}, nil, err
		}
		data, err := mem.Input(s.opts.SharedMemory, p.region, p.offset, p.byteSize)
		if err != nil {
			return core.Input{}, nil, err
		}
		return input(data), binary, nil
	case p.hasBinarySize:
		size := p.binarySize
		if size > uint64(len(binary)) {
			return core.Input{}, nil, core.Errorf(core.CodeInvalidArg, "unexpected size for input '%s', expecting %d additional bytes for model '%s'",
				in.Name, size-uint64(len(binary)), m.Name())
		}
		return input(binary[:size:size]), binary[size:], nil
	}
	want := core.ElementCount(shape)
	if want < 0 {
		return core.Input{}, nil, bad("shape %v is not a tensor shape", shape)
	}
	if size := int64(dt.ByteSize()); size > 0 && want > m.MaxTensorBytes()/size {
		return core.Input{}, nil, bad("shape %v holds more than the server's limit of %d bytes", shape, m.MaxTensorBytes())
	}
	t, err := decodeValues(dt, in.Data, want)
	if err != nil {
		return core.Input{}, nil, bad("data: %v", err)
	}
	if t.count != want {
		return core.Input{}, nil, bad("%d values in data for shape %v, which holds %d", t.count, shape, want)
	}
	return input(t.data), binary, nil
}

// decodeOutput reads one requested output: as binary data or JSON, or
// into a shared-memory region (leased now, as Triton checks it before the
// request runs). The classification extension is not implemented.
func (s *Server) decodeOutput(m *core.Model, out *outputJSON, call *inferCall) error {
	p, err := parseTensorParams(&out.Parameters)
	if err != nil {
		return err
	}
	if p.hasRegion {
		switch {
		case p.classify:
			return core.Errorf(core.CodeInvalidArg, "Output can't set both 'shared_memory_region' and 'classification'")
		case p.hasBinary && p.binary:
			return core.Errorf(core.CodeInvalidArg, "Output can't set both 'shared_memory_region' and 'binary_data'")
		}
	}
	if p.classify {
		return core.Errorf(core.CodeUnsupported, "model %q: output %q: the classification extension is not supported by this server", m.Name(), out.Name)
	}
	if p.hasRegion {
		if err := s.clientSharedMemory(); err != nil {
			return err
		}
		if err := call.mem.Output(s.opts.SharedMemory, out.Name, p.region, p.offset, p.byteSize); err != nil {
			return err
		}
	} else if p.hasBinary {
		call.binary.set(out.Name, p.binary)
	}
	call.req.Outputs = append(call.req.Outputs, out.Name)
	return nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
