package httpserver

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"github.com/tritonhost/tritonhost/core"
)

// StatusOf maps an error to the HTTP status Triton answers it with:
// INTERNAL 500, NOT_FOUND 404, UNAVAILABLE 503, UNSUPPORTED 501, anything
// else 400. An error of this package (a body too large, a media type the
// server cannot read) carries its own status.
func StatusOf(err error) int {
	var he *httpError
	if errors.As(err, &he) {
		return he.status
	}
	switch core.CodeOf(err) {
	case core.CodeInternal:
		return http.StatusInternalServerError
	case core.CodeNotFound:
		return http.StatusNotFound
	case core.CodeUnavailable:
		return http.StatusServiceUnavailable
	case core.CodeUnsupported:
		return http.StatusNotImplemented
	}
	return http.StatusBadRequest
}

// httpError is an error whose status is HTTP's own, not mapped from a
// core code.
type httpError struct {
	status int
	msg    string
}

func (e *httpError) Error() string { return e.msg }

// errorBody is Triton's error object.
type errorBody struct {
	Error string `json:"error"`
}

// writeError answers with Triton's error object and err's status.
func writeError(w http.ResponseWriter, err error) {
	writeJSON(w, StatusOf(err), errorBody{Error: err.Error()})
}

// writeJSON answers with v as JSON.
func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		body, _ = json.Marshal(errorBody{Error: "encoding the response: " + err.Error()})
	}
	writeRawJSON(w, status, body)
}

// writeRawJSON answers with body, JSON, in one write of known length.
func writeRawJSON(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
