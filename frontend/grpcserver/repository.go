package grpcserver

import (
	"context"
	"sort"
	"strings"

	"tritonhost/core"
	pb "tritonhost/frontend/inferencepb"
)

// maxLoadParameters bounds the parameters (a configuration and model
// files) of one RepositoryModelLoad request; their bytes are bounded by
// the message size.
const maxLoadParameters = 1024

// noRepositoryName is Triton's answer to a request that names a
// repository.
func noRepositoryName() error {
	return core.Errorf(core.CodeUnsupported, "'repository_name' specification is not supported")
}

// RepositoryIndex lists the models of the repositories and their state.
func (s *Service) RepositoryIndex(_ context.Context, req *pb.RepositoryIndexRequest) (*pb.RepositoryIndexResponse, error) {
	if req.GetRepositoryName() != "" {
		return nil, toStatus(noRepositoryName())
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
		return nil, toStatus(noRepositoryName())
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

// loadOptions reads the parameters of a load request, in the order of
// their names, with Triton's errors.
func loadOptions(params map[string]*pb.ModelRepositoryParameter) (core.LoadOptions, error) {
	var opts core.LoadOptions
	if len(params) > maxLoadParameters {
		return opts, core.Errorf(core.CodeInvalidArg, "the load request has %d parameters, more than the %d the server accepts", len(params), maxLoadParameters)
	}
	names := make([]string, 0, len(params))
	for name := range params {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		p := params[name]
		switch {
		case name == "config":
			v, ok := p.GetParameterChoice().(*pb.ModelRepositoryParameter_StringParam)
			if !ok {
				return opts, core.Errorf(core.CodeInvalidArg, "invalid value type for load parameter '%s', expected string_param.", name)
			}
			opts.Config = []byte(v.StringParam)
		case strings.HasPrefix(name, "file:"):
			v, ok := p.GetParameterChoice().(*pb.ModelRepositoryParameter_BytesParam)
			if !ok {
				return opts, core.Errorf(core.CodeInvalidArg, "invalid value type for load parameter '%s', expected bytes_param.", name)
			}
			if opts.Files == nil {
				opts.Files = map[string][]byte{}
			}
			opts.Files[strings.TrimPrefix(name, "file:")] = v.BytesParam
		default:
			return opts, core.Errorf(core.CodeInvalidArg, "unrecognized load parameter '%s'.", name)
		}
	}
	return opts, nil
}

// RepositoryModelUnload unloads a model (explicit model control). Its
// parameter "unload_dependents" is accepted: no model depends on another
// here (there are no ensembles), so it changes nothing.
func (s *Service) RepositoryModelUnload(ctx context.Context, req *pb.RepositoryModelUnloadRequest) (*pb.RepositoryModelUnloadResponse, error) {
	if req.GetRepositoryName() != "" {
		return nil, toStatus(noRepositoryName())
	}
	if p, ok := req.GetParameters()["unload_dependents"]; ok {
		if _, ok := p.GetParameterChoice().(*pb.ModelRepositoryParameter_BoolParam); !ok {
			return nil, toStatus(core.Errorf(core.CodeInvalidArg, "invalid value type for 'unload_dependents' parameter, expected bool_param."))
		}
	}
	if err := s.core.UnloadModel(ctx, req.GetModelName()); err != nil {
		return nil, toStatus(err)
	}
	return &pb.RepositoryModelUnloadResponse{}, nil
}
