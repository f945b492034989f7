package httpserver

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"
	"time"
)

// A request body must arrive at a minimum rate: by ReadBodyTimeout after
// its header, plus the time its bytes so far take at ReadBodyMinRate. An
// idle timeout alone would let a client hold a connection for ever by
// sending a byte now and then; a deadline for the whole body alone would
// cut large uploads over slow links. The bound is the connection's read
// deadline, moved forward as bytes arrive, so a client that stops sending
// is cut by the kernel's timer, whatever the handler does.

// deadlineSlack is how far the deadline must move before it is set again:
// setting it costs a timer update, and a body arrives in many reads.
const deadlineSlack = 100 * time.Millisecond

// timeBodies bounds the reading of every request body of h, and keeps a
// connection whose body was not read to its end from serving another
// request: what is left of such a body would be parsed as the next request
// (a request smuggled inside a body). net/http guards against that only
// for the body it made, and only while that body is the request's, so the
// guard here is the handler's own: the answer closes the connection
// (Connection: close) unless the body reached its end before the header
// went out, and r.Body is net/http's again when the handler returns, for
// its own check of a body closed early.
func (s *Server) timeBodies(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody {
			h.ServeHTTP(w, r)
			return
		}
		orig := r.Body
		// A chunked body always ends its connection: net/http drops a
		// Content-Length sent beside Transfer-Encoding, so such a request
		// (a proxy before the server may have framed it by the length)
		// cannot be told from a plain chunked one, and RFC 9112 (6.1) has
		// the server close after answering it.
		g := guards.Get().(*bodyGuard)
		*g = bodyGuard{ResponseWriter: w, closeAfter: len(r.TransferEncoding) > 0}
		b := &g.body
		*b = timedBody{src: orig, w: w, rc: deadlinesOf(w), start: time.Now(),
			timeout: s.opts.ReadBodyTimeout, rate: s.opts.ReadBodyMinRate}
		b.setDeadline(b.start.Add(b.timeout))
		r.Body = b
		defer func() {
			r.Body = orig
			*g = bodyGuard{}
			guards.Put(g)
		}()
		h.ServeHTTP(g, r)
		g.guard() // an answer net/http writes after the handler
	})
}

// guards holds the guards of finished requests for the next ones. A
// handler leaves nothing behind that uses its guard once it has returned
// (this package starts no goroutines).
var guards = sync.Pool{New: func() any { return new(bodyGuard) }}

// bodyGuard is the ResponseWriter of a request with a body, in the same
// allocation as the body's reader. Only the handler's goroutine uses it.
type bodyGuard struct {
	http.ResponseWriter
	body       timedBody
	guarded    bool
	closeAfter bool // close the connection whatever was read
}

// guard marks the answer to close the connection when the body has not
// been read to its end; once, before the header is written.
func (g *bodyGuard) guard() {
	if g.guarded {
		return
	}
	g.guarded = true
	if !g.body.eof || g.closeAfter {
		g.ResponseWriter.Header().Set("Connection", "close")
	}
}

func (g *bodyGuard) WriteHeader(code int) {
	if code >= 200 { // 1xx answers leave the body to come
		g.guard()
	}
	g.ResponseWriter.WriteHeader(code)
}

func (g *bodyGuard) Write(p []byte) (int, error) {
	g.guard()
	return g.ResponseWriter.Write(p)
}

// Unwrap lets http.ResponseController reach the connection (flushes,
// deadlines).
func (g *bodyGuard) Unwrap() http.ResponseWriter { return g.ResponseWriter }

// connDeadlines sets the deadlines of a ResponseWriter's connection:
// net/http's own writer, or an http.ResponseController over a wrapper.
type connDeadlines interface {
	SetReadDeadline(time.Time) error
	SetWriteDeadline(time.Time) error
}

// deadlinesOf returns the deadlines of w's connection: w itself when it
// sets them (net/http's writer does, and calling it spares the
// allocation of a controller on every request), else a controller,
// which looks through wrappers.
func deadlinesOf(w http.ResponseWriter) connDeadlines {
	if d, ok := w.(connDeadlines); ok {
		return d
	}
	return http.NewResponseController(w)
}

// timedBody is a request body read under the rate bound. Only the
// handler's goroutine reads it.
type timedBody struct {
	src      io.ReadCloser
	w        http.ResponseWriter
	rc       connDeadlines
	start    time.Time
	timeout  time.Duration
	rate     int64 // bytes a second
	n        int64 // bytes read
	deadline time.Time
	eof      bool // the body was read to its end
}

func (b *timedBody) Read(p []byte) (int, error) {
	n, err := b.src.Read(p)
	b.n += int64(n)
	switch {
	case errors.Is(err, io.EOF):
		// The body is in, and net/http has taken the deadline off already:
		// its body's end clears it before the background read that
		// watches for the client going away starts (or, when a byte of
		// the next request was read already, nothing reads until
		// net/http sets the next request's own deadline). A test holds a
		// request past the body's deadline to keep it so.
		b.eof = true
		b.deadline = time.Time{}
	case errors.Is(err, os.ErrDeadlineExceeded):
		// What is left of the body would be read as the next request: the
		// connection ends with the answer.
		b.w.Header().Set("Connection", "close")
		return n, &httpError{status: http.StatusRequestTimeout, msg: fmt.Sprintf(
			"the request body did not arrive in time: %d bytes in %v, and the server waits %v plus 1 s for every %d bytes (--http-read-body-timeout, --http-read-body-min-rate)",
			b.n, time.Since(b.start).Round(time.Millisecond), b.timeout, b.rate)}
	case err == nil:
		due := b.start.Add(b.timeout + time.Duration(b.n/b.rate)*time.Second + time.Duration(b.n%b.rate)*time.Second/time.Duration(b.rate))
		if due.Sub(b.deadline) > deadlineSlack {
			b.setDeadline(due)
		}
	}
	return n, err
}

func (b *timedBody) Close() error { return b.src.Close() }

// setDeadline sets the connection's read deadline (the zero time: none).
// A ResponseWriter that cannot (a test's recorder) is left unbounded.
func (b *timedBody) setDeadline(t time.Time) {
	b.deadline = t
	_ = b.rc.SetReadDeadline(t)
}
