package httpserver

import (
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
	declared := r.ContentLength
	if src != io.Reader(body) {
		declared = -1 // the decompressed size is not known
	}
	data, err := readGrowing(src, declared, max)
	if err != nil {
		return nil, bodyError(err, max, "reading the request body")
	}
	if int64(len(data)) > max {
		return nil, tooLarge("decompressed request body", int64(len(data)), max)
	}
	if src != io.Reader(body) {
		// What follows a compressed stream is read to the body's end (a
		// connection is reused only after a whole body), within max.
		if _, err := io.Copy(io.Discard, body); err != nil {
			return nil, bodyError(err, max, "reading the request body")
		}
	}
	if len(data) == 0 {
		return nil, nil
	}
	return data, nil
}

// firstBodyBuffer is the most a body's buffer holds before its bytes
// arrive: a Content-Length is a promise, and memory follows what was
// received.
const firstBodyBuffer = 64 << 10

// readGrowing reads src to its end, or to max+1 bytes. The buffer starts
// at firstBodyBuffer at most and doubles as it fills, so it is never more
// than twice what arrived; a known length (declared, for an uncompressed
// body) caps it, so a whole body of that length is read without a last
// copy to a larger buffer.
func readGrowing(src io.Reader, declared, maxBytes int64) ([]byte, error) {
	bound := maxBytes + 1 // one byte more than allowed tells a body too large
	hint := bound
	if declared >= 0 && declared < maxBytes {
		hint = declared + 1 // and one more than declared sees the end
	}
	buf := make([]byte, 0, min(hint, firstBodyBuffer))
	for {
		if len(buf) == cap(buf) {
			if int64(len(buf)) >= bound {
				return buf, nil
			}
			next := max(2*int64(cap(buf)), 512)
			if int64(cap(buf)) < hint {
				next = min(next, hint)
			}
			grown := make([]byte, len(buf), min(next, bound))
			copy(grown, buf)
			buf = grown
		}
		n, err := src.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		switch {
		case errors.Is(err, io.EOF):
			return buf, nil
		case err != nil:
			return nil, err
		}
	}
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
