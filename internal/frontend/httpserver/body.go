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
		return nil, tooLarge(bodyKind(r), r.ContentLength, max)
	}
	enc := headerValue(r.Header, "Content-Encoding")
	if enc != "" {
		enc = strings.ToLower(strings.TrimSpace(enc))
	}
	switch enc {
	case "", "identity":
		// readGrowing stops one byte past max, which tells a body too
		// large: a plain body needs no bounded reader of its own.
		defer r.Body.Close()
		data, err := readGrowing(r.Body, r.ContentLength, max)
		switch {
		case err != nil:
			return nil, bodyErrorOf(err, max, bodyKind(r), "reading the request body")
		case int64(len(data)) > max:
			return nil, tooLarge(bodyKind(r), -1, max)
		case len(data) == 0:
			return nil, nil
		}
		return data, nil
	case "gzip", "deflate":
	default:
		return nil, &httpError{status: http.StatusUnsupportedMediaType,
			msg: fmt.Sprintf("unsupported Content-Encoding %q: send the body plain, gzip or deflate", enc)}
	}
	body := http.MaxBytesReader(w, r.Body, max)
	defer body.Close()
	var src io.ReadCloser
	var err error
	if enc == "gzip" {
		if src, err = gzip.NewReader(body); err != nil {
			return nil, bodyError(err, max, "the gzip body cannot be read")
		}
	} else if src, err = zlib.NewReader(body); err != nil {
		return nil, bodyError(err, max, "the deflate body cannot be read")
	}
	defer src.Close()
	data, err := readGrowing(src, -1, max) // the decompressed size is not known
	if err != nil {
		return nil, bodyErrorOf(err, max, bodyKind(r), "reading the request body")
	}
	if int64(len(data)) > max {
		return nil, tooLarge("decompressed "+bodyKind(r), int64(len(data)), max)
	}
	// What follows a compressed stream is read to the body's end (a
	// connection is reused only after a whole body), within max.
	if _, err := io.Copy(io.Discard, body); err != nil {
		return nil, bodyError(err, max, "reading the request body")
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

// wholeAfter: once a body of known length has sent 1/wholeAfter of it, its
// buffer grows to the whole length at once, which spares the copies (and
// the garbage) of the last doublings.
const wholeAfter = 4

// readGrowing reads src to its end, or to max+1 bytes. The buffer starts
// at firstBodyBuffer at most and doubles as it fills, so it is never more
// than twice what arrived; a known length (declared, for an uncompressed
// body) caps it, so a whole body of that length is read without a last
// copy to a larger buffer, and once a quarter of that length has arrived
// the buffer takes the whole length (wholeAfter): the buffer is then at
// most four times what arrived.
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
				if int64(len(buf)) >= hint/wholeAfter {
					next = hint
				}
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

// bodyKind names a request's body as Triton's size error does: "request
// JSON" for an inference request all in JSON, "request body" for one with
// binary tensors after its JSON (Inference-Header-Content-Length) or any
// other body.
func bodyKind(r *http.Request) string {
	if headerValue(r.Header, HeaderContentLength) == "" && strings.HasSuffix(r.URL.Path, "/infer") {
		return "request JSON"
	}
	return "request body"
}

// bodyError turns a failed read into the answer: 400 with Triton's text
// when the body was over the bound, 408 when it came too slowly, 400
// otherwise.
func bodyError(err error, max int64, what string) error {
	return bodyErrorOf(err, max, "request body", what)
}

// bodyErrorOf is bodyError for a body of the given kind (bodyKind).
func bodyErrorOf(err error, max int64, kind, what string) error {
	var mb *http.MaxBytesError
	if errors.As(err, &mb) {
		return tooLarge(kind, -1, max)
	}
	var he *httpError
	if errors.As(err, &he) { // the body came too slowly (bodytime.go)
		return he
	}
	return &httpError{status: http.StatusBadRequest, msg: fmt.Sprintf("%s: %v", what, err)}
}

// tooLarge is the answer to a body of n bytes (-1: not known, a chunked
// one cut at the bound) over the bound of max: 400, with Triton's words.
func tooLarge(what string, n, max int64) error {
	size := " size"
	if n > max {
		size = fmt.Sprintf(" size of %d bytes", n)
	}
	return &httpError{status: http.StatusBadRequest,
		msg: fmt.Sprintf("%s%s exceeds the maximum allowed input size of %d bytes. Use --http-max-input-size to increase the limit.", what, size, max)}
}
