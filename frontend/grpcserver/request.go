package grpcserver

import (
	"fmt"
	"math"
	"strings"
	"time"

	"tritonhost/core"
	pb "tritonhost/frontend/inferencepb"
)

// Request parameters the protocol reserves; they configure the request
// rather than reaching the backend.
const (
	paramSequenceID       = "sequence_id"
	paramSequenceStart    = "sequence_start"
	paramSequenceEnd      = "sequence_end"
	paramPriority         = "priority"
	paramTimeout          = "timeout"
	paramEmptyFinal       = "triton_enable_empty_final_response"
	paramFinalResponse    = "triton_final_response"
	paramBinaryDataOutput = "binary_data_output"
	paramHeaders          = "headers"
)

// requestOptions are what the frontend itself takes from a request.
type requestOptions struct {
	emptyFinal bool // triton_enable_empty_final_response
}

// resolved is a received request ready to submit: the model version, the
// core request, the frontend's options, and the shared memory it uses.
type resolved struct {
	m    *core.Model
	ir   *core.InferenceRequest
	opts requestOptions
	mem  *requestMemory
}

// resolve turns a received request into what core takes, in Triton's
// order (server src/grpc/infer_handler.cc, ModelInferHandler::Execute),
// so that a request with several faults gets Triton's first error: the
// model version (and, for ModelInfer, its transaction policy), the
// parameters, the inputs' data, the outputs' shared memory; core then
// checks the inputs against the model. A request that breaks a rule holds
// nothing: what it leased is released.
func (s *Service) resolve(in *inboundRequest, unary bool) (*resolved, error) {
	req := in.msg
	m, err := s.lookupModel(req.GetModelName(), req.GetModelVersion())
	if err != nil {
		return nil, err
	}
	if unary && m.Decoupled() {
		return nil, core.Errorf(core.CodeUnsupported, "ModelInfer RPC doesn't support models with decoupled transaction policy")
	}
	ir, opts, err := decodeRequest(req)
	if err != nil {
		return nil, err
	}
	mem := &requestMemory{}
	if err := s.inputData(in, m, ir, mem); err != nil {
		mem.release()
		return nil, err
	}
	if err := s.outputMemory(req, mem); err != nil {
		mem.release()
		return nil, err
	}
	if len(mem.leases) > 0 {
		ir.Finished = mem.release
	}
	return &resolved{m: m, ir: ir, opts: opts, mem: mem}, nil
}

// decodeRequest turns a ModelInferRequest's header, parameters and tensor
// descriptions into a core request, without the inputs' data (inputData
// adds it).
func decodeRequest(req *pb.ModelInferRequest) (*core.InferenceRequest, requestOptions, error) {
	var opts requestOptions
	ir := &core.InferenceRequest{Model: req.GetModelName(), ID: req.GetId()}
	for name, p := range req.GetParameters() {
		if err := applyParameter(ir, &opts, name, p); err != nil {
			return nil, opts, core.Errorf(core.CodeInvalidArg, "model %q: parameter %q: %v", req.GetModelName(), name, err)
		}
	}
	ir.Inputs = make([]core.Input, len(req.GetInputs()))
	for i, in := range req.GetInputs() {
		dt := core.ParseDataType(in.GetDatatype())
		if dt == core.TypeInvalid {
			return nil, opts, core.Errorf(core.CodeInvalidArg, "model %q: input %q: unknown datatype %q", req.GetModelName(), in.GetName(), in.GetDatatype())
		}
		ir.Inputs[i] = core.Input{Name: in.GetName(), DataType: dt, Shape: in.GetShape()}
	}
	for _, out := range req.GetOutputs() {
		ir.Outputs = append(ir.Outputs, out.GetName())
	}
	return ir, opts, nil
}

// inputData gives each input its data, by Triton's rules
// (InferGRPCToInput): from a shared-memory region when the input names
// one (then it may not have contents); otherwise from contents, which may
// not come with raw_input_contents; otherwise from the next entry of
// raw_input_contents, which are taken in order by the inputs that have
// neither (entries left over are not used).
func (s *Service) inputData(req *inboundRequest, m *core.Model, ir *core.InferenceRequest, mem *requestMemory) error {
	model := req.msg.GetModelName()
	raw := req.msg.GetRawInputContents()
	next := 0
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
			if contents != nil {
				return core.Errorf(core.CodeInvalidArg, "unexpected 'content' provided when using shared memory for input tensor '%s' for model '%s'", in.GetName(), model)
			}
			l, err := s.opts.SharedMemory.Acquire(shm.region, shm.offset, shm.byteSize)
			if err != nil {
				return err
			}
			mem.leases = append(mem.leases, l)
			data, err := l.Read() // a CUDA region's input is copied to the host
			if err != nil {
				return err
			}
			ir.Inputs[i].Buffers = [][]byte{data}
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
			ir.Inputs[i].Buffers = [][]byte{data}
		case next < len(raw):
			ir.Inputs[i].Buffers = [][]byte{raw[next]}
			next++
		default:
			return core.Errorf(core.CodeInvalidArg, "unable to find data for input tensor '%s' for model '%s' in request.", in.GetName(), model)
		}
	}
	return nil
}

func applyParameter(ir *core.InferenceRequest, opts *requestOptions, name string, p *pb.InferParameter) error {
	switch name {
	case paramSequenceID:
		switch v := p.GetParameterChoice().(type) {
		case *pb.InferParameter_Int64Param:
			ir.CorrelationID = core.CorrelationID{Uint: uint64(v.Int64Param)}
		case *pb.InferParameter_Uint64Param:
			ir.CorrelationID = core.CorrelationID{Uint: v.Uint64Param}
		case *pb.InferParameter_StringParam:
			ir.CorrelationID = core.CorrelationID{String: v.StringParam, IsString: true}
		default:
			return fmt.Errorf("must be an integer or a string")
		}
	case paramSequenceStart, paramSequenceEnd, paramEmptyFinal:
		v, ok := p.GetParameterChoice().(*pb.InferParameter_BoolParam)
		if !ok {
			return fmt.Errorf("must be a bool")
		}
		switch {
		case name == paramEmptyFinal:
			opts.emptyFinal = v.BoolParam
		case v.BoolParam && name == paramSequenceStart:
			ir.Flags |= core.RequestFlagSequenceStart
		case v.BoolParam:
			ir.Flags |= core.RequestFlagSequenceEnd
		}
	case paramPriority, paramTimeout:
		var n uint64
		switch v := p.GetParameterChoice().(type) {
		case *pb.InferParameter_Int64Param:
			if v.Int64Param < 0 {
				return fmt.Errorf("must not be negative")
			}
			n = uint64(v.Int64Param)
		case *pb.InferParameter_Uint64Param:
			n = v.Uint64Param
		default:
			return fmt.Errorf("must be an integer")
		}
		if name == paramPriority {
			ir.Priority = n
		} else {
			ir.Timeout = time.Duration(n) * time.Microsecond
		}
	case paramBinaryDataOutput, paramHeaders:
		// HTTP-only options; nothing to do over gRPC.
	default:
		if strings.HasPrefix(name, "triton_") {
			return fmt.Errorf("parameters starting with triton_ are reserved")
		}
		cp := core.Parameter{Name: name}
		switch v := p.GetParameterChoice().(type) {
		case *pb.InferParameter_BoolParam:
			cp.Type, cp.Bool = core.ParamBool, v.BoolParam
		case *pb.InferParameter_Int64Param:
			cp.Type, cp.Int = core.ParamInt, v.Int64Param
		case *pb.InferParameter_Uint64Param:
			if v.Uint64Param > math.MaxInt64 {
				return fmt.Errorf("%d does not fit in an int64", v.Uint64Param)
			}
			cp.Type, cp.Int = core.ParamInt, int64(v.Uint64Param)
		case *pb.InferParameter_StringParam:
			cp.Type, cp.String = core.ParamString, v.StringParam
		case *pb.InferParameter_DoubleParam:
			cp.Type, cp.Double = core.ParamDouble, v.DoubleParam
		default:
			return fmt.Errorf("has no value")
		}
		ir.Parameters = append(ir.Parameters, cp)
	}
	return nil
}
