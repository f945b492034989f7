package grpcserver

import (
	"github.com/tritonhost/tritonhost/core"
	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
	"github.com/tritonhost/tritonhost/internal/protocol"
)

// The tensor parameters that place an input or an output in a registered
// system shared-memory region, as Triton's clients send them.
const (
	paramShmRegion   = "shared_memory_region"
	paramShmOffset   = "shared_memory_offset"
	paramShmByteSize = "shared_memory_byte_size"
)

// shmParams are a tensor's place in a region.
type shmParams struct {
	region   string
	offset   uint64
	byteSize uint64
}

// parseShmParams reads a tensor's shared-memory parameters, nil when it
// names no region, with Triton's checks and errors (ParseSharedMemoryParams).
// The offset and the size are int64 parameters; like Triton, which reads
// them into a size_t, a negative one is taken as a huge one, which the
// region's bounds then refuse.
func parseShmParams(tensor string, params map[string]*pb.InferParameter) (*shmParams, error) {
	if len(params) == 0 {
		return nil, nil
	}
	p, has := params[paramShmRegion]
	var shm shmParams
	if has {
		v, ok := p.GetParameterChoice().(*pb.InferParameter_StringParam)
		if !ok {
			return nil, core.Errorf(core.CodeInvalidArg, "invalid value type for 'shared_memory_region' parameter for tensor '%s', expected string_param.", tensor)
		}
		shm.region = v.StringParam
	}
	for _, f := range []struct {
		name string
		dst  *uint64
	}{{paramShmOffset, &shm.offset}, {paramShmByteSize, &shm.byteSize}} {
		p, ok := params[f.name]
		if !ok {
			if has && f.name == paramShmByteSize {
				return nil, core.Errorf(core.CodeInvalidArg, "'shared_memory_byte_size' must be specified along with 'shared_memory_region' parameter for tensor '%s'", tensor)
			}
			continue
		}
		if !has {
			return nil, core.Errorf(core.CodeInvalidArg, "'%s' can not be specified without 'shared_memory_region' parameter for tensor '%s'", f.name, tensor)
		}
		v, ok := p.GetParameterChoice().(*pb.InferParameter_Int64Param)
		if !ok {
			return nil, core.Errorf(core.CodeInvalidArg, "invalid value type for '%s' parameter for tensor '%s', expected int64_param.", f.name, tensor)
		}
		*f.dst = uint64(v.Int64Param)
	}
	if !has {
		return nil, nil
	}
	return &shm, nil
}

// outputMemory leases the regions the requested outputs name (checked
// now, as Triton checks them before the request runs), and refuses the
// classification extension, which this server does not implement.
func (s *Service) outputMemory(req *pb.ModelInferRequest, mem *protocol.RequestMemory) error {
	for _, out := range req.GetOutputs() {
		shm, err := parseShmParams(out.GetName(), out.GetParameters())
		if err != nil {
			return err
		}
		if _, ok := out.GetParameters()["classification"]; ok {
			return core.Errorf(core.CodeUnsupported, "model %q: output %q: the classification extension is not supported by this server", req.GetModelName(), out.GetName())
		}
		if shm == nil {
			continue
		}
		if err := s.clientSharedMemory(); err != nil {
			return err
		}
		if err := mem.Output(s.opts.SharedMemory, out.GetName(), shm.region, shm.offset, shm.byteSize); err != nil {
			return err
		}
	}
	return nil
}
