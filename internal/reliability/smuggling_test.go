package reliability

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// Request smuggling: a request whose body the server answers before reading
// it to its end must not leave that body on the connection, where it would
// be parsed as the next request. Each case sends one request carrying, in
// its body, a smuggled request for identity_fp32's configuration, then a
// probe (GET /v2/health/live, Connection: close) and reads every answer.
// The smuggled request must never be answered: either the body was read
// whole (it was data) and the probe is answered, or the connection closed
// after the first answer.

// smuggled is the request hidden in a body; its answer names identity_fp32.
const smuggled = "GET /v2/models/identity_fp32/config HTTP/1.1\r\nHost: x\r\n\r\n"

// probe ends every exchange: answered only on a connection that was kept.
const probe = "GET /v2/health/live HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"

// exchange writes raw on a new connection to addr and reads answers until
// the server closes it (or 10 s pass).
func exchange(t *testing.T, addr string, raw []byte) []*http.Response {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	go func() { _, _ = conn.Write(raw) }() // the server may answer (and close) before taking it all
	br := bufio.NewReader(conn)
	var answers []*http.Response
	for {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			return answers
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		resp.Body = io.NopCloser(bytes.NewReader(body))
		answers = append(answers, resp)
	}
}

func answerBody(r *http.Response) string {
	b, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(b))
	return string(b)
}

// smugglingCase builds the bytes of one carrier request around payload (the
// smuggled request and padding).
type smugglingCase struct {
	name  string
	build func(payload []byte) []byte
	// status is the carrier's answer.
	status int
}

func withBody(head string, body []byte) []byte {
	return append([]byte(fmt.Sprintf("%sContent-Length: %d\r\n\r\n", head, len(body))), body...)
}

func TestHTTPRequestsSmuggledInBodiesAreNeverRun(t *testing.T) {
	t.Parallel()
	// A 1 MiB bound on bodies, so that a body over it is cheap to send.
	const maxInput = 1 << 20
	srv := start(t, "", "--http-max-input-size", fmt.Sprint(maxInput),
		"--http-restricted-api", "model-repository:admin-key=secret")
	infer := "POST /v2/models/identity_int32/infer HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
	bomb := gzipBytes(t, make([]byte, 2*maxInput)) // a few kilobytes
	cases := []smugglingCase{
		{"unknown encoding", func(p []byte) []byte { return withBody(infer+"Content-Encoding: br\r\n", p) }, 415},
		{"bad gzip header", func(p []byte) []byte { return withBody(infer+"Content-Encoding: gzip\r\n", p) }, 400},
		{"bad deflate header", func(p []byte) []byte { return withBody(infer+"Content-Encoding: deflate\r\n", p) }, 400},
		{"gzip over the limit once decompressed", func(p []byte) []byte {
			return withBody(infer+"Content-Encoding: gzip\r\n", append(slices.Clone(bomb), p...))
		}, 400},
		{"declared length over the limit", func(p []byte) []byte {
			return append([]byte(fmt.Sprintf("%sContent-Length: %d\r\n\r\n", infer, 2*maxInput)), p...)
		}, 400},
		{"body on a route that reads none", func(p []byte) []byte {
			return withBody("GET /v2/health/ready HTTP/1.1\r\nHost: x\r\n", p)
		}, 200},
		{"a method the route does not serve", func(p []byte) []byte {
			return withBody("PUT /v2/health/live HTTP/1.1\r\nHost: x\r\n", p)
		}, 404},
		{"no such route", func(p []byte) []byte { return withBody("POST /v2/nope HTTP/1.1\r\nHost: x\r\n", p) }, 404},
		{"restricted route", func(p []byte) []byte {
			return withBody("POST /v2/repository/index HTTP/1.1\r\nHost: x\r\n", p)
		}, 403},
		{"body not JSON", func(p []byte) []byte { return withBody(infer, p) }, 400},
		{"expect 100-continue, answered first", func(p []byte) []byte {
			return withBody(infer+"Expect: 100-continue\r\nContent-Encoding: br\r\n", p)
		}, 415},
		{"chunked with a bad size", func(p []byte) []byte {
			return append([]byte(infer+"Transfer-Encoding: chunked\r\n\r\nzz\r\n"), p...)
		}, 400},
		{"chunked, smuggled after a chunk's end", func(p []byte) []byte {
			return append([]byte(infer+"Transfer-Encoding: chunked\r\n\r\n3\r\nabcXX"), p...)
		}, 400},
		{"Content-Length and chunked both", func(p []byte) []byte {
			return append([]byte(fmt.Sprintf("%sContent-Length: %d\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", infer, 5+len(p))), p...)
		}, 400},
		{"two different lengths", func(p []byte) []byte {
			return append([]byte(fmt.Sprintf("%sContent-Length: 5\r\nContent-Length: %d\r\n\r\n", infer, len(p))), p...)
		}, 400},
	}
	for _, pad := range []int{0, 1 << 10, 300 << 10} {
		payload := append([]byte(smuggled), bytes.Repeat([]byte{' '}, pad)...)
		for _, c := range cases {
			t.Run(fmt.Sprintf("%s, %d bytes of padding", c.name, pad), func(t *testing.T) {
				t.Parallel()
				answers := exchange(t, srv.HTTP, append(c.build(payload), probe...))
				if len(answers) == 0 {
					t.Fatalf("no answer")
				}
				if answers[0].StatusCode != c.status {
					t.Errorf("answer %d %s, want %d", answers[0].StatusCode, answerBody(answers[0]), c.status)
				}
				for i, a := range answers[1:] {
					if body := answerBody(a); strings.Contains(body, "identity_fp32") || i > 0 {
						t.Errorf("answer %d of %d: %d %s: the smuggled request ran", i+2, len(answers), a.StatusCode, body)
					}
				}
			})
		}
	}
}

// TestHTTPPipelinedRequestsStillShareAConnection: whole bodies keep the
// connection, so requests pipelined on it are all answered, in order.
func TestHTTPPipelinedRequestsStillShareAConnection(t *testing.T) {
	t.Parallel()
	srv := start(t, "")
	infer := "POST /v2/models/identity_int32/infer HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
	body := []byte(`{"inputs":[{"name":"INPUT0","datatype":"INT32","shape":[2],"data":[1,2]}]}`)
	var raw []byte
	for range 3 {
		raw = append(raw, withBody(infer, body)...)
	}
	raw = append(raw, withBody(infer+"Content-Encoding: gzip\r\n", gzipBytes(t, body))...)
	answers := exchange(t, srv.HTTP, append(raw, probe...))
	if len(answers) != 5 {
		t.Fatalf("%d answers, want 5 (4 requests and the probe)", len(answers))
	}
	for i, a := range answers[:4] {
		if body := answerBody(a); a.StatusCode != 200 || !strings.Contains(body, `"data":[1,2]`) {
			t.Errorf("answer %d: %d %s", i, a.StatusCode, body)
		}
	}
}

// TestHTTPSmuggledUnloadIsNeverRun: the repository API, smuggled past a
// restricted-API header check by riding in a refused request's body,
// unloads nothing.
func TestHTTPSmuggledUnloadIsNeverRun(t *testing.T) {
	t.Parallel()
	srv := start(t, "", "--model-control-mode", "explicit", "--load-model", "identity_fp32", "--load-model", "identity_int32")
	unload := "POST /v2/repository/models/identity_fp32/unload HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n"
	head := "POST /v2/models/identity_int32/infer HTTP/1.1\r\nHost: x\r\nContent-Encoding: br\r\n"
	for _, pad := range []int{0, 300 << 10} {
		payload := append([]byte(unload), bytes.Repeat([]byte{' '}, pad)...)
		exchange(t, srv.HTTP, append(withBody(head, payload), probe...))
	}
	resp, err := http.Get("http://" + srv.HTTP + "/v2/models/identity_fp32/ready")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("identity_fp32 is not ready (%d): a smuggled unload ran", resp.StatusCode)
	}
}

func gzipBytes(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, _ = zw.Write(b)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
