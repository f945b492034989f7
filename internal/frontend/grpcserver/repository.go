package grpcserver

import (
	"context"

	"github.com/tritonhost/tritonhost/core"
	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
	"github.com/tritonhost/tritonhost/internal/protocol"
)

// RepositoryIndex lists the models of the repositories and their state.
func (s *Service) RepositoryIndex(_ context.Context, req *pb.RepositoryIndexRequest) (*pb.RepositoryIndexResponse, error) {
	if req.GetRepositoryName() != "" {
		return nil, toStatus(protocol.NoRepositoryName())
	}
	resp := &pb.RepositoryIndexResponse{}
	for _, st := range s.core.RepositoryIndex() {
		if req.GetReady() && st.Readiness != core.ModelReady {
			continue
		}
		resp.Models = append(resp.Models, &pb.RepositoryIndexResponse_ModelIndex{
			Name: st.Name, Version: st.Version, State: st.Readiness.String(), Reason: st.Reason})
	}
	return resp, nil
}

// RepositoryModelLoad loads or reloads a model (explicit model control),
// with Triton's parameters: "config", a JSON model configuration used
// instead of the repository's, and "file:<path>", model files sent in the
// request (which then needs "config"; see core.LoadOptions).
func (s *Service) RepositoryModelLoad(_ context.Context, req *pb.RepositoryModelLoadRequest) (*pb.RepositoryModelLoadResponse, error) {
	if req.GetRepositoryName() != "" {
		return nil, toStatus(protocol.NoRepositoryName())
	}
	if err := checkMap(req, len(req.GetParameters())); err != nil {
		return nil, toStatus(err)
	}
	opts, err := loadOptions(req.GetParameters())
	if err != nil {
		return nil, toStatus(err)
	}
	if err := s.core.LoadModelWith(req.GetModelName(), opts); err != nil {
		return nil, toStatus(err)
	}
	return &pb.RepositoryModelLoadResponse{}, nil
}

// loadOptions reads the parameters of a load request
// (protocol.LoadOptions), with Triton's gRPC words for a value of the
// wrong type.
func loadOptions(params map[string]*pb.ModelRepositoryParameter) (core.LoadOptions, error) {
	config := func(name string, p *pb.ModelRepositoryParameter) (string, error) {
		v, ok := p.GetParameterChoice().(*pb.ModelRepositoryParameter_StringParam)
		if !ok {
			return "", core.Errorf(core.CodeInvalidArg, "invalid value type for load parameter '%s', expected string_param.", name)
		}
		return v.StringParam, nil
	}
	file := func(name string, p *pb.ModelRepositoryParameter) ([]byte, error) {
		v, ok := p.GetParameterChoice().(*pb.ModelRepositoryParameter_BytesParam)
		if !ok {
			return nil, core.Errorf(core.CodeInvalidArg, "invalid value type for load parameter '%s', expected bytes_param.", name)
		}
		return v.BytesParam, nil
	}
	return protocol.LoadOptions(params, config, file)
}

// RepositoryModelUnload unloads a model (explicit model control). Its
// parameter "unload_dependents" unloads with it the models its steps run
// that no other loaded ensemble runs (core.UnloadModelAndDependents).
func (s *Service) RepositoryModelUnload(ctx context.Context, req *pb.RepositoryModelUnloadRequest) (*pb.RepositoryModelUnloadResponse, error) {
	if req.GetRepositoryName() != "" {
		return nil, toStatus(protocol.NoRepositoryName())
	}
	if err := checkMap(req, len(req.GetParameters())); err != nil {
		return nil, toStatus(err)
	}
	unload := s.core.UnloadModel
	if p, ok := req.GetParameters()["unload_dependents"]; ok {
		v, ok := p.GetParameterChoice().(*pb.ModelRepositoryParameter_BoolParam)
		if !ok {
			return nil, toStatus(core.Errorf(core.CodeInvalidArg, "invalid value type for 'unload_dependents' parameter, expected bool_param."))
		}
		if v.BoolParam {
			unload = s.core.UnloadModelAndDependents
		}
	}
	if err := unload(ctx, req.GetModelName()); err != nil {
		return nil, toStatus(err)
	}
	return &pb.RepositoryModelUnloadResponse{}, nil
}
