package httpserver_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/coretest"
	"github.com/tritonhost/tritonhost/core/serverlog"
	"github.com/tritonhost/tritonhost/internal/frontend/httpserver"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// vector is a model from INPUT0 to OUTPUT0, INT32 vectors of any length.
var vector = coretest.VectorConfig

const decoupled = coretest.Decoupled

// harness is a core.Server on the coretest backend, served over loopback
// HTTP by an httpserver.Server.
type harness struct {
	p    *coretest.Provider
	srv  *core.Server
	http *httpserver.Server
	ts   *httptest.Server
	log  *testenv.LogBuffer
}

type setup struct {
	opts      httpserver.Options
	tracer    core.Tracer // the core server's
	explicit  bool
	connState func(net.Conn, http.ConnState) // observes the server's connections
}

// newHarness starts everything; at cleanup the HTTP server shuts down
// (every handler must return), then the core server stops, and no
// goroutine either started may outlive them.
func newHarness(t *testing.T, cfg setup, models ...coretest.ModelDir) *harness {
	t.Helper()
	h := &harness{p: coretest.NewProvider(), log: &testenv.LogBuffer{}}
	logger := serverlog.New(h.log)
	h.srv = coretest.Serve(t, core.Options{Backends: h.p, ExplicitModelControl: cfg.explicit, Logger: logger, Tracer: cfg.tracer}, models...)
	h.http = httpserver.New(h.srv, cfg.opts)
	h.ts = httptest.NewUnstartedServer(nil)
	h.ts.Config = h.http.NewHTTPServer()
	if hook := cfg.connState; hook != nil {
		track := h.ts.Config.ConnState
		h.ts.Config.ConnState = func(c net.Conn, st http.ConnState) { track(c, st); hook(c, st) }
	}
	h.ts.Listener = h.http.Listen(h.ts.Listener)
	coretest.Track(t, h.ts.Start)
	t.Cleanup(func() {
		h.http.Drain()
		ctx, cancel := context.WithTimeout(context.Background(), testenv.Patience)
		defer cancel()
		if err := h.ts.Config.Shutdown(ctx); err != nil {
			t.Errorf("the HTTP server did not shut down: a handler never returned (%v)", err)
		}
		h.ts.Close()
		if _, err := h.http.SharedMemory().Close(); err != nil {
			t.Errorf("closing the shared-memory registry: %v", err)
		}
	})
	return h
}

// call sends a request and returns the status, header and body.
func (h *harness) call(t *testing.T, method, path string, body []byte, header ...string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, h.ts.URL+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := h.ts.Client().Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading the body: %v", method, path, err)
	}
	return resp.StatusCode, resp.Header, out
}

// wantError checks a Triton error answer: the status, a JSON object with
// "error", and the words it must contain.
func wantError(t *testing.T, what string, status int, body []byte, wantStatus int, words ...string) {
	t.Helper()
	var e struct {
		Error string `json:"error"`
	}
	if err := json.Unmarshal(body, &e); err != nil || e.Error == "" {
		t.Errorf("%s: body %q is not Triton's error object", what, body)
	}
	if status != wantStatus {
		t.Errorf("%s: status %d (%s), want %d", what, status, e.Error, wantStatus)
	}
	for _, w := range words {
		if !strings.Contains(e.Error, w) {
			t.Errorf("%s: error %q does not mention %q", what, e.Error, w)
		}
	}
}

func decodeJSON(t *testing.T, body []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(body, v); err != nil {
		t.Fatalf("body %q: %v", body, err)
	}
}

func int32Bytes(values ...int32) []byte {
	b := make([]byte, 0, 4*len(values))
	for _, v := range values {
		b = binary.LittleEndian.AppendUint32(b, uint32(v))
	}
	return b
}
