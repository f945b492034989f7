package httpserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/internal/protocol"
)

// live answers 200 while the server accepts requests, 400 otherwise (as
// Triton), with an empty body.
func (s *Server) live(w http.ResponseWriter, _ *http.Request) {
	w.WriteHeader(okOrBad(s.core.Live() && !s.isDraining()))
}

// ready answers 200 when the server is ready (every model loaded, under
// strict readiness), 400 otherwise.
func (s *Server) ready(w http.ResponseWriter, _ *http.Request) {
	ready := s.core.Live()
	if s.opts.StrictReadiness {
		ready = s.core.Ready()
	}
	w.WriteHeader(okOrBad(ready && !s.isDraining()))
}

func okOrBad(ok bool) int {
	if ok {
		return http.StatusOK
	}
	return http.StatusBadRequest
}

func (s *Server) serverMetadata(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, core.ServerMetadata{Name: s.opts.ServerName, Version: s.opts.ServerVersion,
		Extensions: protocol.ServerExtensions(s.opts.SharedMemory.CUDASupported())})
}

// model resolves the model and version of the request's path (Triton's
// rules and words).
func (s *Server) model(r *http.Request) (*core.Model, error) {
	return protocol.LookupModel(s.core, r.PathValue("model"), r.PathValue("version"))
}

func (s *Server) modelMetadata(w http.ResponseWriter, r *http.Request) {
	m, err := s.model(r)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, s.core.Metadata(m, 0))
}

// modelReady answers 200 when the model version can take requests;
// otherwise 400 with Triton's "Model version not ready" (an unknown model
// or version is not ready); a malformed version is an error.
func (s *Server) modelReady(w http.ResponseWriter, r *http.Request) {
	ready, err := protocol.ModelReady(s.core, r.PathValue("model"), r.PathValue("version"))
	switch {
	case err != nil:
		writeError(w, err)
	case !ready || s.isDraining():
		writeJSON(w, http.StatusBadRequest, errorBody{Error: "Model version not ready"})
	default:
		w.WriteHeader(http.StatusOK)
	}
}

// modelConfig answers the configuration as loaded, in Triton's JSON.
func (s *Server) modelConfig(w http.ResponseWriter, r *http.Request) {
	m, err := s.model(r)
	if err != nil {
		writeError(w, err)
		return
	}
	writeRawJSON(w, http.StatusOK, bytes.TrimRight(m.ConfigJSON(), "\x00"))
}

func (s *Server) statistics(w http.ResponseWriter, r *http.Request) {
	version, err := protocol.StatisticsVersion(r.PathValue("version"))
	if err != nil {
		writeError(w, err)
		return
	}
	stats, err := s.core.Statistics(r.PathValue("model"), version)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, core.NewStatisticsReport(stats))
}

// logging answers the log settings (GET), or changes them first (POST, a
// JSON object of settings).
func (s *Server) logging(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost {
		var req paramsJSON // counted before it is decoded (jsonbound.go)
		if err := s.readJSON(w, r, &req); err != nil {
			writeError(w, err)
			return
		}
		if req.over {
			writeError(w, protocol.MoreThan("the log settings request", "settings", protocol.MaxRequestParameters))
			return
		}
		settings := make(map[string]protocol.LogValue, len(req.m))
		for name, raw := range req.m {
			v, err := parameterValue(raw)
			if err != nil {
				writeError(w, core.Errorf(core.CodeInvalidArg, "log setting %q: %v", name, err))
				return
			}
			settings[name] = v
		}
		if err := s.logs.Apply(settings); err != nil {
			if errors.Is(err, protocol.ErrLogFileNotAllowed) {
				err = &httpError{status: http.StatusForbidden, msg: err.Error()}
			}
			writeError(w, err)
			return
		}
	}
	writeJSON(w, http.StatusOK, s.logs.Current())
}

// readJSON reads a body (bounded as every body) into v; an empty body
// leaves v as it is.
func (s *Server) readJSON(w http.ResponseWriter, r *http.Request, v any) error {
	body, err := readBody(w, r, s.opts.MaxInputBytes)
	if err != nil || len(body) == 0 {
		return err
	}
	if err := json.Unmarshal(body, v); err != nil {
		return core.Errorf(core.CodeInvalidArg, "the request body is not the JSON expected: %v", err)
	}
	return nil
}
