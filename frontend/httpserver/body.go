package httpserver

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// readBody reads a request body whole, bounded by max bytes as sent and,
// when it comes compressed (Content-Encoding gzip or deflate), by max bytes
// once decompressed too. An empty body is nil.
func readBody(w http.ResponseWriter, r *http.Request, max int64) ([]byte, error) {
	if r.ContentLength > max {
		return nil, tooLarge("request body", r.ContentLength, max)
	}
	body := http.MaxBytesReader(w, r.Body, max)
	defer body.Close()
	var src io.Reader = body
	switch enc := strings.ToLower(strings.TrimSpace(r.Header.Get("Content-Encoding"))); enc {
	case "", "identity":
	case "gzip":
		zr, err := gzip.NewReader(body)
		if err != nil {
			return nil, bodyError(err, max, "the gzip body cannot be read")
		}
		defer zr.Close()
		src = zr
	case "deflate":
		zr, err := zlib.NewReader(body)
		if err != nil {
			return nil, bodyError(err, max, "the deflate body cannot be read")
		}
		defer zr.Close()
		src = zr
	default:
		return nil, &httpError{status: http.StatusUnsupportedMediaType,
			msg: fmt.Sprintf("unsupported Content-Encoding %q: send the body plain, gzip or deflate", enc)}
	}
	var buf bytes.Buffer
	if r.ContentLength > 0 && src == io.Reader(body) {
		buf.Grow(int(r.ContentLength))
	}
	n, err := buf.ReadFrom(io.LimitReader(src, max+1))
	if err != nil {
		return nil, bodyError(err, max, "reading the request body")
	}
	if n > max {
		return nil, tooLarge("decompressed request body", n, max)
	}
	if n == 0 {
		return nil, nil
	}
	return buf.Bytes(), nil
}

// bodyError turns a failed read into the answer: 413 when the body was
// over the bound, 408 when it came too slowly, 400 otherwise.
func bodyError(err error, max int64, what string) error {
	var mb *http.MaxBytesError
	if errors.As(err, &mb) {
		return tooLarge("request body", -1, max)
	}
	var he *httpError
	if errors.As(err, &he) { // the body came too slowly (bodytime.go)
		return he
	}
	return &httpError{status: http.StatusBadRequest, msg: fmt.Sprintf("%s: %v", what, err)}
}

func tooLarge(what string, n, max int64) error {
	size := ""
	if n > max {
		size = fmt.Sprintf(" (%d bytes)", n)
	}
	return &httpError{status: http.StatusRequestEntityTooLarge,
		msg: fmt.Sprintf("%s%s is larger than the server's limit of %d bytes (--http-max-input-size)", what, size, max)}
}
