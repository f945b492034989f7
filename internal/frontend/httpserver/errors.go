package httpserver

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"sync/atomic"

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
	h["Content-Type"] = jsonContentType
	setDate(h)
	if len(body) > implicitLengthMax {
		h["Content-Length"] = []string{strconv.Itoa(len(body))}
	}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// implicitLengthMax is the largest answer whose Content-Length the
// handlers leave to net/http: it buffers the first 2 KiB a handler writes,
// and gives an answer that fits there whole, once the handler returns,
// the Content-Length of what it holds (without allocating). Larger
// answers set it themselves, so that they are not sent chunked.
const implicitLengthMax = 1 << 10

// Values of the headers that answers set by assignment rather than with
// Header.Set, sparing an allocation: net/http only reads them (a clone of
// the header copies them), and each holds its one element at full
// capacity, so that Header.Add copies rather than writes into it.
var (
	jsonContentType   = []string{"application/json"}[:1:1]
	binaryContentType = []string{"application/octet-stream"}[:1:1]
)

// headerSizes holds the values of Inference-Header-Content-Length for
// JSON parts of fewer than len(headerSizes) bytes, each made the first
// time an answer sends it.
var headerSizes [1 << 10]atomic.Pointer[[]string]

// sizeValue returns n as a header value, shared for a small n.
func sizeValue(n int64) []string {
	if n < 0 || n >= int64(len(headerSizes)) {
		return []string{strconv.FormatInt(n, 10)}
	}
	if v := headerSizes[n].Load(); v != nil {
		return *v
	}
	v := []string{strconv.FormatInt(n, 10)}[:1:1]
	headerSizes[n].Store(&v)
	return v
}

// headerValue is h.Get(key) for a key in canonical form, without Get's
// work of making it so.
func headerValue(h http.Header, key string) string {
	if v := h[key]; len(v) > 0 {
		return v[0]
	}
	return ""
}
