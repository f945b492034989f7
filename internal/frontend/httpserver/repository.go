package httpserver

import (
	"encoding/base64"
	"encoding/json"
	"net/http"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/internal/protocol"
)

// repositoryIndex lists the models of the repositories; a body
// {"ready": true} lists only those ready.
func (s *Server) repositoryIndex(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Ready bool `json:"ready"`
	}
	if err := s.readJSON(w, r, &req); err != nil {
		writeError(w, err)
		return
	}
	type entry struct {
		Name    string `json:"name"`
		Version string `json:"version,omitempty"`
		State   string `json:"state"`
		Reason  string `json:"reason"`
	}
	out := []entry{}
	for _, st := range s.core.RepositoryIndex() {
		if req.Ready && st.Readiness != core.ModelReady {
			continue
		}
		out = append(out, entry{Name: st.Name, Version: st.Version, State: st.Readiness.String(), Reason: st.Reason})
	}
	writeJSON(w, http.StatusOK, out)
}

// namedRepository refuses the repository routes that name a repository
// (/v2/repository/{repository}/...), as Triton does.
func (s *Server) namedRepository(w http.ResponseWriter, _ *http.Request) {
	writeError(w, protocol.NoRepositoryName())
}

// repositoryRequest is the body of load and unload; its parameters are
// counted before they are decoded (jsonbound.go).
type repositoryRequest struct {
	Parameters loadParamsJSON `json:"parameters"`
}

// load loads or reloads a model (explicit model control), with Triton's
// parameters: "config", a JSON model configuration as a string, used
// instead of the repository's, and "file:<path>", a model file as a
// base64 string (see protocol.LoadOptions).
func (s *Server) load(w http.ResponseWriter, r *http.Request) {
	var req repositoryRequest
	if err := s.readJSON(w, r, &req); err != nil {
		writeError(w, err)
		return
	}
	if req.Parameters.over {
		writeError(w, protocol.MoreThan("the load request", "parameters", protocol.MaxLoadParameters))
		return
	}
	opts, err := loadOptions(req.Parameters.m)
	if err == nil {
		err = s.core.LoadModelWith(r.PathValue("model"), opts)
	}
	if err != nil {
		writeError(w, err)
		return
	}
	w.WriteHeader(http.StatusOK)
}

// loadOptions reads the parameters of a load request; each is a JSON
// string.
func loadOptions(params map[string]json.RawMessage) (core.LoadOptions, error) {
	str := func(name string, raw json.RawMessage) (string, error) {
		var v string
		if err := json.Unmarshal(raw, &v); err != nil {
			return "", core.Errorf(core.CodeInvalidArg, "Unable to parse load parameter '%s': expected a string", name)
		}
		return v, nil
	}
	file := func(name string, raw json.RawMessage) ([]byte, error) {
		v, err := str(name, raw)
		if err != nil {
			return nil, err
		}
		data, err := base64.StdEncoding.DecodeString(v)
		if err != nil {
			return nil, core.Errorf(core.CodeInvalidArg, "Unable to parse load parameter '%s': not base64 (%v)", name, err)
		}
		return data, nil
	}
	return protocol.LoadOptions(params, str, file)
}

// unload unloads a model (explicit model control). Its parameter
// "unload_dependents", a bool, unloads with it the models its steps run
// that no other loaded ensemble runs (core.UnloadModelAndDependents).
// Other parameters are ignored, as Triton ignores them.
func (s *Server) unload(w http.ResponseWriter, r *http.Request) {
	var req repositoryRequest
	if err := s.readJSON(w, r, &req); err != nil {
		writeError(w, err)
		return
	}
	if req.Parameters.over {
		writeError(w, protocol.MoreThan("the unload request", "parameters", protocol.MaxLoadParameters))
		return
	}
	var dependents bool
	if raw, ok := req.Parameters.m["unload_dependents"]; ok {
		if err := json.Unmarshal(raw, &dependents); err != nil {
			writeError(w, core.Errorf(core.CodeInvalidArg, "Unable to parse 'unload_dependents': expected a bool"))
			return
		}
	}
	unload := s.core.UnloadModel
	if dependents {
		unload = s.core.UnloadModelAndDependents
	}
	if err := unload(r.Context(), r.PathValue("model")); err != nil {
		writeError(w, err)
		return
	}
	w.WriteHeader(http.StatusOK)
}
