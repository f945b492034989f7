package httpserver

import (
	"encoding/json"
	"net/http"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/internal/trace"
)

// traceSetting serves GET and POST /v2/trace/setting and
// /v2/models/{model}/trace/setting, Triton's trace extension: a POST body
// is a JSON object of the settings to change (null clears one), and the
// answer is the setting in force afterwards, every value a string but
// trace_level, an array.
func (s *Server) traceSetting(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodPost {
		writeError(w, &httpError{status: http.StatusMethodNotAllowed, msg: "Method Not Allowed"})
		return
	}
	if s.opts.Trace == nil {
		writeError(w, core.Errorf(core.CodeUnavailable, "the server does not support tracing"))
		return
	}
	model := r.PathValue("model")
	if model != "" {
		if m, err := s.core.Model(model, 0); err != nil || m.Readiness() != core.ModelReady {
			writeError(w, trace.UnknownModel(model))
			return
		}
	}
	if r.Method == http.MethodPost {
		if err := s.updateTraceSetting(w, r, model); err != nil {
			writeError(w, err)
			return
		}
	}
	setting, opts := s.opts.Trace.Setting(model)
	b := []byte{'{'}
	for i, v := range trace.Response(setting, opts) {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, v.Name)
		b = append(b, ':')
		if v.Name == trace.KeyLevel {
			levels, _ := json.Marshal(v.Values)
			b = append(b, levels...)
		} else {
			b = appendJSONString(b, v.Values[0])
		}
	}
	writeRawJSON(w, http.StatusOK, append(b, '}'))
}

// updateTraceSetting reads a POST body and applies it, checking each
// setting in Triton's order: its JSON type (TritonJson's words, INTERNAL),
// then its value.
func (s *Server) updateTraceSetting(w http.ResponseWriter, r *http.Request, model string) error {
	body, err := readBody(w, r, s.opts.MaxInputBytes)
	if err != nil {
		return err
	}
	root, err := parseJSONDocument(body)
	if err != nil {
		return err
	}
	settings := map[string][]string{}
	for _, key := range []string{trace.KeyFile, trace.KeyLevel, trace.KeyRate, trace.KeyCount, trace.KeyLogFrequency} {
		raw, ok := findMember(root, key)
		if !ok {
			continue
		}
		if key != trace.KeyFile {
			var values []string
			if values, err = traceSettingValues(key, raw); err != nil {
				return err
			}
			settings[key] = values
		} else {
			settings[key] = []string{}
		}
		if _, err := trace.ParseUpdate(settings, trace.HTTP); err != nil {
			return err
		}
	}
	u, err := trace.ParseUpdate(settings, trace.HTTP)
	if err != nil {
		return err
	}
	return s.opts.Trace.Update(model, u)
}

// traceSettingValues reads one setting of a POST body: null (clear, nil),
// trace_level an array of strings, the others a string.
func traceSettingValues(key string, raw json.RawMessage) ([]string, error) {
	if string(raw) == "null" {
		return nil, nil
	}
	if key == trace.KeyLevel {
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return nil, core.Errorf(core.CodeInternal, "attempt to access JSON non-array as array")
		}
		values := make([]string, 0, len(items))
		for _, it := range items {
			var v string
			if err := json.Unmarshal(it, &v); err != nil {
				return nil, core.Errorf(core.CodeInternal, errNotString)
			}
			values = append(values, v)
		}
		return values, nil
	}
	var v string
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, core.Errorf(core.CodeInternal, errNotString)
	}
	return []string{v}, nil
}

// traceContext returns the W3C trace context a client sent in its
// headers (traceparent, tracestate), for a tracer to continue its trace.
func traceContext(r *http.Request) core.TraceContext {
	// The canonical names, looked up as they stand.
	tc := core.TraceContext{Parent: headerValue(r.Header, "Traceparent")}
	if tc.Parent != "" {
		tc.State = headerValue(r.Header, "Tracestate")
	}
	return tc
}
