package httpserver_test

import (
	"bufio"
	"errors"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tritonhost/tritonhost/core/coretest"
	"github.com/tritonhost/tritonhost/internal/frontend/httpserver"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// events reads a text/event-stream body to its end and returns the data of
// each event.
func events(t *testing.T, h *harness, path, body string) (int, string, []string) {
	t.Helper()
	resp, err := h.ts.Client().Post(h.ts.URL+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if data, ok := strings.CutPrefix(line, "data: "); ok {
			out = append(out, data)
		} else if line != "" {
			out = append(out, "?"+line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("reading the stream: %v", err)
	}
	return resp.StatusCode, resp.Header.Get("Content-Type"), out
}

func TestGenerateStreamSendsOneEventPerResponseAndEnds(t *testing.T) {
	t.Parallel()
	h := newHarness(t, setup{}, coretest.ModelDir{Name: "stream", Config: vector(decoupled)})
	h.p.Set("stream", coretest.Answering(coretest.Stream(3)))
	status, ctype, got := events(t, h, "/v2/models/stream/generate_stream", `{"INPUT0":[4,2],"parameters":{"temperature":0.5}}`)
	want := func(i int) string {
		return `{"model_name":"stream","model_version":"1","index":` + strconv.Itoa(i) + `,"OUTPUT0":[4,2]}`
	}
	if status != 200 || ctype != "text/event-stream; charset=utf-8" || len(got) != 3 || got[0] != want(0) || got[2] != want(2) {
		t.Fatalf("stream: %d %q %q, want three events %s ...", status, ctype, got, want(0))
	}
}

func TestGenerateStreamErrorEventsAndRefusals(t *testing.T) {
	t.Parallel()
	h := newHarness(t, setup{},
		coretest.ModelDir{Name: "fails", Config: vector(decoupled)},
		coretest.ModelDir{Name: "echo", Config: vector("")})
	h.p.Set("fails", coretest.Answering(coretest.Then(coretest.Send(false), coretest.FailWith(errBackend))))
	h.p.Set("echo", coretest.Echo())
	_, _, got := events(t, h, "/v2/models/fails/generate_stream", `{"INPUT0":[1]}`)
	if len(got) != 2 || !strings.Contains(got[0], `"OUTPUT0":1`) || got[1] != `{"error":"backend broke"}` {
		t.Errorf("events %q, want a response then an error event", got)
	}
	// A model that is not decoupled streams its one response.
	_, _, got = events(t, h, "/v2/models/echo/generate_stream", `{"INPUT0":[5,6,7]}`)
	if len(got) != 1 || !strings.Contains(got[0], `"OUTPUT0":[5,6,7]`) {
		t.Errorf("echo events %q", got)
	}
	// Refused before it runs: a JSON error with its status.
	for _, tt := range []struct {
		path, body string
		status     int
		words      []string
	}{
		{"/v2/models/nope/generate_stream", `{}`, 404, []string{"nope"}},
		{"/v2/models/echo/generate_stream", `[1]`, 500, []string{"attempt to get members for non-object"}},
		{"/v2/models/echo/generate_stream", `{"INPUT0":["x"]}`, 500, []string{"Unable to parse 'data': attempt to access JSON non-signed-integer as signed-integer"}},
		{"/v2/models/echo/generate_stream", `{"other":{"a":1}}`, 400, []string{"parameter 'other' has invalid type"}},
		// A decoupled model that sent more than one response.
		{"/v2/models/fails/generate", `{"INPUT0":[1]}`, 500, []string{"generate expects model to produce exactly 1 response"}},
	} {
		status, _, body := h.call(t, "POST", tt.path, []byte(tt.body))
		wantError(t, tt.path+" "+tt.body, status, body, tt.status, tt.words...)
	}
}

func TestGenerateAnswersOnceWithOutputsAsValues(t *testing.T) {
	t.Parallel()
	h := newHarness(t, setup{}, coretest.ModelDir{Name: "echo", Config: vector("")})
	h.p.Set("echo", coretest.Echo())
	status, hdr, body := h.call(t, "POST", "/v2/models/echo/generate", []byte(`{"INPUT0":9}`))
	if want := `{"model_name":"echo","model_version":"1","OUTPUT0":9}`; status != 200 || string(body) != want || hdr.Get("Content-Type") != "application/json" {
		t.Errorf("generate: %d %s, want %s", status, body, want)
	}
}

// TestNonReadingStreamIsCutOffAndTheModelServesOthers: a client that stops
// reading its event stream holds the backend thread for at most the stall
// timeout; then its stream ends, its request is cancelled, and the model's
// only instance serves the next client.
func TestNonReadingStreamIsCutOffAndTheModelServesOthers(t *testing.T) {
	t.Parallel()
	h := newHarness(t, setup{opts: httpserver.Options{Stream: httpserver.StreamLimits{MaxResponses: 2, MaxResponseBytes: 64 << 10, StallTimeout: 200 * time.Millisecond}}},
		coretest.ModelDir{Name: "stream", Config: vector(decoupled)})
	h.p.Set("stream", coretest.Answering(coretest.Stream(300)))
	conn, err := net.Dial("tcp", h.ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if tc, ok := conn.(*net.TCPConn); ok {
		tc.SetReadBuffer(4 << 10)
	}
	big := strings.Repeat("123456,", 16<<10) // ~100 KiB an event
	body := `{"INPUT0":[` + big + `1]}`
	req := "POST /v2/models/stream/generate_stream HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: " +
		strconv.Itoa(len(body)) + "\r\n\r\n" + body
	if _, err := conn.Write([]byte(req)); err != nil {
		t.Fatal(err)
	}
	testenv.WaitUntil(t, "the stream to be cut off", func() bool { return strings.Contains(h.log.String(), "did not read its responses") })
	status, _, got := events(t, h, "/v2/models/stream/generate_stream", `{"INPUT0":[1]}`)
	if status != 200 || len(got) != 300 {
		t.Errorf("the next client: %d, %d events, want 300", status, len(got))
	}
	testenv.WaitUntil(t, "the hog's request to finish", func() bool { return h.srv.LiveRequests() == 0 })
}

var errBackend = errors.New("backend broke")
