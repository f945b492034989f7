package grpcserver

import (
	"google.golang.org/grpc/metadata"

	"github.com/tritonhost/tritonhost/core"
	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
	"github.com/tritonhost/tritonhost/internal/protocol"
)

// requestOptions are what the frontend itself takes from a request.
type requestOptions = protocol.Options

// resolved is a received request ready to submit: the model version, the
// core request, the frontend's options, and the shared memory it uses.
type resolved struct {
	m    *core.Model
	ir   *core.Submission
	opts requestOptions
	mem  *protocol.RequestMemory

	// The memory ir and mem point to, one allocation with the rest for a
	// request of one input.
	sub      core.Submission
	memory   protocol.RequestMemory
	inputOne [1]core.Input
	bufOne   [1][]byte
	// result is where a unary request's response comes (Service.infer).
	result unaryResult
}

// resolve turns a received request into what core takes, in Triton's
// order (server src/grpc/infer_handler.cc, ModelInferHandler::Execute),
// so that a request with several faults gets Triton's first error: the
// model version (and, for ModelInfer, its transaction policy), the
// parameters, the inputs' data, the outputs' shared memory; core then
// checks the inputs against the model. A request that breaks a rule holds
// nothing: what it leased is released. The call metadata headers are
// forwarded as parameters after the request's own (Options.HeaderForward,
// Triton's ForwardHeadersAsParameters). The resolved request is in's own
// memory: in is resolved once.
func (s *Service) resolve(in *inboundRequest, unary bool, headers metadata.MD) (*resolved, error) {
	req := in.msg
	m, err := protocol.LookupModel(s.core, req.GetModelName(), req.GetModelVersion())
	if err != nil {
		return nil, err
	}
	if unary && m.Decoupled() {
		return nil, core.Errorf(core.CodeUnsupported, "ModelInfer RPC doesn't support models with decoupled transaction policy")
	}
	r := &in.resolved
	r.m = m
	r.ir, r.mem = &r.sub, &r.memory
	ir, mem := r.ir, r.mem
	inputs := r.inputOne[:0]
	if n := len(req.GetInputs()); n > len(r.inputOne) {
		inputs = make([]core.Input, 0, n)
	}
	if err := decodeRequest(req, ir, &r.opts, inputs); err != nil {
		return nil, err
	}
	if err := protocol.ForwardHeaders(s.opts.HeaderForward, HeaderForwardSetting, headers, ir); err != nil {
		return nil, err
	}
	if in.buffer != nil { // the request's from here: released with mem
		mem.Received(in.buffer)
		ir.InputBuffer, in.buffer = in.buffer, nil
	}
	if err := s.inputData(in, m, ir, mem, r.bufOne[:]); err != nil {
		mem.Release()
		return nil, err
	}
	if err := s.outputMemory(req, mem); err != nil {
		mem.Release()
		return nil, err
	}
	if mem.Used() {
		ir.Finished = mem.Release
	}
	return r, nil
}

// receiveBuffer is a buffer of n bytes from the model version a request
// names, to receive the request into (core.Model.InputBuffer), or nil.
func (s *Service) receiveBuffer(model, version string, n int) core.InputBuffer {
	m, err := protocol.LookupModel(s.core, model, version)
	if err != nil {
		return nil
	}
	return m.InputBuffer(n)
}

// decodeRequest turns a ModelInferRequest's header, parameters and tensor
// descriptions into the core request ir (zero) and the frontend's options
// opts, without the inputs' data (inputData adds it). The inputs go in
// inputs, an empty slice with room for all of them.
func decodeRequest(req *pb.ModelInferRequest, ir *core.Submission, opts *requestOptions, inputs []core.Input) error {
	ir.Model, ir.ID = req.GetModelName(), req.GetId()
	for name, p := range req.GetParameters() {
		if err := applyParameter(ir, opts, name, p); err != nil {
			return core.Errorf(core.CodeInvalidArg, "model %q: parameter %q: %v", req.GetModelName(), name, err)
		}
	}
	ir.Inputs = inputs[:len(req.GetInputs())]
	for i, in := range req.GetInputs() {
		dt := core.ParseDataType(in.GetDatatype())
		if dt == core.TypeInvalid {
			return core.Errorf(core.CodeInvalidArg, "model %q: input %q: unknown datatype %q", req.GetModelName(), in.GetName(), in.GetDatatype())
		}
		ir.Inputs[i] = core.Input{Name: in.GetName(), DataType: dt, Shape: in.GetShape()}
	}
	for _, out := range req.GetOutputs() {
		ir.Outputs = append(ir.Outputs, out.GetName())
	}
	return nil
}

// inputData gives each input its data, by Triton's rules
// (InferGRPCToInput): from a shared-memory region when the input names
// one (then it may not have contents); otherwise from contents, which may
// not come with raw_input_contents; otherwise from the next entry of
// raw_input_contents, which are taken in order by the inputs that have
// neither (entries left over are not used). The inputs' Buffers are slices
// of one array: bufs when it is long enough.
func (s *Service) inputData(req *inboundRequest, m *core.Model, ir *core.Submission, mem *protocol.RequestMemory, bufs [][]byte) error {
	model := req.msg.GetModelName()
	raw := req.msg.GetRawInputContents()
	next := 0
	if n := len(req.msg.GetInputs()); n > len(bufs) {
		bufs = make([][]byte, n)
	}
	// buffers gives input i the one buffer data.
	buffers := func(i int, data []byte) [][]byte {
		bufs[i] = data
		return bufs[i : i+1 : i+1]
	}
	for i, in := range req.msg.GetInputs() {
		shm, err := parseShmParams(in.GetName(), in.GetParameters())
		if err != nil {
			return err
		}
		contents, err := req.inputContents(i)
		if err != nil {
			return err
		}
		switch {
		case shm != nil:
			if err := s.clientSharedMemory(); err != nil {
				return err
			}
			if contents != nil {
				return core.Errorf(core.CodeInvalidArg, "unexpected 'content' provided when using shared memory for input tensor '%s' for model '%s'", in.GetName(), model)
			}
			data, err := mem.Input(s.opts.SharedMemory, shm.region, shm.offset, shm.byteSize)
			if err != nil {
				return err
			}
			ir.Inputs[i].Buffers = buffers(i, data)
		case contents != nil && len(raw) > 0:
			return core.Errorf(core.CodeInvalidArg, "contents field must not be specified when using raw_input_contents for '%s' for model '%s'", in.GetName(), model)
		case contents != nil:
			dt := ir.Inputs[i].DataType
			field, n, err := contentsField(model, in.GetName(), dt, contents)
			if err != nil {
				return err
			}
			if want, ok := m.InputDataType(in.GetName()); !ok || want != dt {
				continue // core refuses the input, in Triton's words: nothing is decoded for it
			}
			var data []byte
			if field != 0 {
				data = decodeContents(dt, field, n, contents)
			}
			ir.Inputs[i].Buffers = buffers(i, data)
		case next < len(raw):
			ir.Inputs[i].Buffers = buffers(i, raw[next])
			next++
		default:
			return core.Errorf(core.CodeInvalidArg, "unable to find data for input tensor '%s' for model '%s' in request.", in.GetName(), model)
		}
	}
	return nil
}

// applyParameter applies a request parameter by the protocol's rules
// (protocol.ApplyParameter). binary_data_output and headers are HTTP's:
// over gRPC they change nothing, whatever their type.
func applyParameter(ir *core.Submission, opts *requestOptions, name string, p *pb.InferParameter) error {
	if name == protocol.ParamBinaryDataOutput || name == protocol.ParamHeaders {
		return nil
	}
	var v protocol.Value
	switch c := p.GetParameterChoice().(type) {
	case *pb.InferParameter_BoolParam:
		v = protocol.Value{Kind: protocol.KindBool, Bool: c.BoolParam}
	case *pb.InferParameter_Int64Param:
		v = protocol.Value{Kind: protocol.KindInt, Int: c.Int64Param}
	case *pb.InferParameter_Uint64Param:
		v = protocol.Value{Kind: protocol.KindUint, Uint: c.Uint64Param}
	case *pb.InferParameter_StringParam:
		v = protocol.Value{Kind: protocol.KindString, String: c.StringParam}
	case *pb.InferParameter_DoubleParam:
		v = protocol.Value{Kind: protocol.KindDouble, Double: c.DoubleParam}
	}
	return protocol.ApplyParameter(ir, opts, name, v)
}
