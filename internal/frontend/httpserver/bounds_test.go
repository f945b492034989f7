package httpserver_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tritonhost/tritonhost/core/coretest"
	"github.com/tritonhost/tritonhost/internal/frontend/httpserver"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// dial opens a raw connection to the harness's server.
func dial(t *testing.T, h *harness) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", h.ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// closedWithin reads conn until the server closes it, and fails unless
// that happens within limit; it returns what was read and how long after
// since it closed. since must come before the server can start the clock
// the test checks (before dialling, before the request that the clock
// follows): a time taken after it, on a loaded machine, can be late by
// as much as the scheduler delays the test, and a close on time looks
// early.
func closedWithin(t *testing.T, conn net.Conn, since time.Time, limit time.Duration) ([]byte, time.Duration) {
	t.Helper()
	conn.SetReadDeadline(time.Now().Add(limit))
	data, err := io.ReadAll(conn)
	if err != nil {
		t.Fatalf("the server did not close the connection within %v (%v)", limit, err)
	}
	return data, time.Since(since)
}

func TestHeaderTimeoutClosesASlowClient(t *testing.T) {
	t.Parallel()
	const timeout = 200 * time.Millisecond
	h := newHarness(t, setup{opts: httpserver.Options{ReadHeaderTimeout: timeout}}, coretest.ModelDir{Name: "m", Config: vector("")})
	start := time.Now() // the server's clock starts when it accepts the connection
	conn := dial(t, h)
	fmt.Fprint(conn, "GET /v2/health/live HTTP/1.1\r\nHost: x\r\n") // and never the blank line
	_, took := closedWithin(t, conn, start, testenv.Patience)
	if took < timeout {
		t.Errorf("closed %v after dialling, before the header timeout (%v)", took, timeout)
	}
}

func TestIdleTimeoutClosesAKeptAliveConnection(t *testing.T) {
	t.Parallel()
	const timeout = 200 * time.Millisecond
	h := newHarness(t, setup{opts: httpserver.Options{IdleTimeout: timeout}}, coretest.ModelDir{Name: "m", Config: vector("")})
	conn := dial(t, h)
	start := time.Now() // the server's idle clock starts once it has answered
	fmt.Fprint(conn, "GET /v2/health/live HTTP/1.1\r\nHost: x\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("health: %v %v", resp, err)
	}
	if _, took := closedWithin(t, conn, start, testenv.Patience); took < timeout {
		t.Errorf("closed %v after the request, before the idle timeout (%v)", took, timeout)
	}
}

func TestOversizedHeaderIsRefused(t *testing.T) {
	t.Parallel()
	h := newHarness(t, setup{opts: httpserver.Options{MaxHeaderBytes: 4 << 10}}, coretest.ModelDir{Name: "m", Config: vector("")})
	status, _, _ := h.call(t, "GET", "/v2/health/live", nil, "X-Big", strings.Repeat("x", 16<<10))
	if status != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("a 16 KiB header: %d, want 431", status)
	}
	if status, _, _ := h.call(t, "GET", "/v2/health/live", nil, "X-Small", "x"); status != 200 {
		t.Errorf("a small header after it: %d", status)
	}
}

// TestWriteTimeoutCutsOffAClientThatDoesNotRead: the response to a client
// that does not read is abandoned after WriteTimeout, and the connection
// closed, so its handler does not wait for ever.
func TestWriteTimeoutCutsOffAClientThatDoesNotRead(t *testing.T) {
	t.Parallel()
	closed := make(chan struct{}, 8)
	h := newHarness(t, setup{opts: httpserver.Options{WriteTimeout: 200 * time.Millisecond},
		connState: func(_ net.Conn, st http.ConnState) {
			if st == http.StateClosed {
				closed <- struct{}{}
			}
		}}, coretest.ModelDir{Name: "echo", Config: vector("")})
	h.p.Set("echo", coretest.Echo())
	data := make([]byte, 32<<20)
	header := fmt.Sprintf(`{"inputs":[{"name":"INPUT0","datatype":"INT32","shape":[%d],"parameters":{"binary_data_size":%d}}],"parameters":{"binary_data_output":true}}`, len(data)/4, len(data))
	body := append([]byte(header), data...)
	conn := dial(t, h)
	if tc, ok := conn.(*net.TCPConn); ok {
		tc.SetReadBuffer(4 << 10)
	}
	start := time.Now()
	fmt.Fprintf(conn, "POST /v2/models/echo/infer HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n%s: %d\r\n\r\n", len(body), httpserver.HeaderContentLength, len(header))
	if _, err := conn.Write(body); err != nil {
		t.Fatal(err)
	}
	select {
	case <-closed:
	case <-time.After(testenv.Patience):
		t.Fatal("the server still holds the connection of a client that does not read its response")
	}
	if took := time.Since(start); took < 200*time.Millisecond {
		t.Errorf("the connection was closed after %v, before the write timeout", took)
	}
	if got := len(h.p.Executions("echo")); got != 1 {
		t.Errorf("%d executions, want the request answered once", got)
	}
}
