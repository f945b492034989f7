package httpserver_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tritonhost/tritonhost/core/coretest"
	"github.com/tritonhost/tritonhost/internal/frontend/httpserver"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// inferBody is an infer request of model m with one INT32 input.
const inferBody = `{"inputs":[{"name":"INPUT0","datatype":"INT32","shape":[1],"data":[7]}]}`

// TestSlowBodiesAreCutOff: a body that stops after 10 of its 1000 bytes,
// a chunked body that never ends, and a body trickled a byte at a time,
// are each answered 408 and disconnected once the body timeout is past,
// and not before.
func TestSlowBodiesAreCutOff(t *testing.T) {
	t.Parallel()
	const timeout = 300 * time.Millisecond
	h := newHarness(t, setup{opts: httpserver.Options{ReadBodyTimeout: timeout, ReadBodyMinRate: 1 << 10}},
		coretest.ModelDir{Name: "m", Config: vector("")})
	for _, tc := range []struct {
		name   string
		header string
		send   func(conn net.Conn, stop <-chan struct{})
	}{
		{"10 of 1000 bytes", "Content-Length: 1000\r\n", func(conn net.Conn, _ <-chan struct{}) {
			io.WriteString(conn, inferBody[:10])
		}},
		{"a chunked body without an end", "Transfer-Encoding: chunked\r\n", func(conn net.Conn, _ <-chan struct{}) {
			fmt.Fprintf(conn, "%x\r\n%s\r\n", 10, inferBody[:10])
		}},
		{"a byte every 20 ms", "Content-Length: 1000\r\n", func(conn net.Conn, stop <-chan struct{}) {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				case <-time.After(20 * time.Millisecond): // the client's pace, 50 bytes a second
				}
				if _, err := conn.Write([]byte{' '}); err != nil {
					return
				}
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			conn := dial(t, h)
			start := time.Now()
			fmt.Fprintf(conn, "POST /v2/models/m/infer HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n%s\r\n", tc.header)
			stop := make(chan struct{})
			sent := make(chan struct{})
			go func() { defer close(sent); tc.send(conn, stop) }()
			conn.SetReadDeadline(start.Add(testenv.Patience))
			data, err := io.ReadAll(conn)
			took := time.Since(start)
			close(stop)
			<-sent
			if errors.Is(err, os.ErrDeadlineExceeded) || took < timeout || took > timeout+2*time.Second {
				t.Errorf("disconnected after %v (%v); want just past the body timeout, %v", took, err, timeout)
			}
			// A client still sending when the server closes may see the
			// connection reset before it reads the answer.
			if err == nil && (!bytes.HasPrefix(data, []byte("HTTP/1.1 408")) || !bytes.Contains(data, []byte("did not arrive in time"))) {
				t.Errorf("answer %q, want 408 saying the body did not arrive in time", data)
			}
		})
	}
}

// TestSlowButSteadyBodiesAreServed: a body that takes several times the
// body timeout to arrive, but above the minimum rate, is served; and once
// a body is in, the request may take longer than the body timeout (its
// model answers late) without being cut.
func TestSlowButSteadyBodiesAreServed(t *testing.T) {
	t.Parallel()
	const timeout = 200 * time.Millisecond
	h := newHarness(t, setup{opts: httpserver.Options{ReadBodyTimeout: timeout, ReadBodyMinRate: 4 << 10}},
		coretest.ModelDir{Name: "m", Config: vector("")}, coretest.ModelDir{Name: "late", Config: vector("")})
	h.p.Set("late", coretest.Delayed(3*timeout, coretest.Echo()))

	// 16 KiB of JSON at 8 KiB/s, twice the minimum: 2 s, ten times the
	// timeout; each KiB written on its own, the first with the header and
	// each next one 125 ms after the one before was due (a late write is
	// not made later by those after it).
	body := []byte(`{"inputs":[{"name":"INPUT0","datatype":"INT32","shape":[1],"data":[7]}],"pad":"` + strings.Repeat("x", 16<<10-84) + `"}`)
	conn := dial(t, h)
	start := time.Now()
	fmt.Fprintf(conn, "POST /v2/models/m/infer HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", len(body))
	for i, rest := 0, body; len(rest) > 0; i, rest = i+1, rest[min(len(rest), 1<<10):] {
		time.Sleep(time.Until(start.Add(time.Duration(i) * 125 * time.Millisecond))) // the link's pace
		if _, err := conn.Write(rest[:min(len(rest), 1<<10)]); err != nil {
			t.Fatalf("sending the body: %v", err)
		}
	}
	conn.SetReadDeadline(time.Now().Add(testenv.Patience))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	text, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Errorf("a steady body of %d bytes in %v: %d %s", len(body), time.Since(start).Round(time.Millisecond), resp.StatusCode, text)
	}

	status, _, out := h.call(t, "POST", "/v2/models/late/infer", []byte(inferBody))
	if status != 200 {
		t.Errorf("a request answered %v after its body was in: %d %s", 3*timeout, status, out)
	}
}

// TestConnectionsAreBounded: past MaxConnections the server accepts no
// connection until one closes; an idle kept-alive connection is closed to
// make room for a new one. (Every connection is the loopback client's:
// its share is the whole cap.)
func TestConnectionsAreBounded(t *testing.T) {
	t.Parallel()
	var accepted atomic.Int64
	h := newHarness(t, setup{opts: httpserver.Options{MaxConnections: 2, MaxConnectionsPerClient: 2},
		connState: func(_ net.Conn, st http.ConnState) {
			if st == http.StateNew {
				accepted.Add(1)
			}
		}}, coretest.ModelDir{Name: "m", Config: vector("")})
	get := func(conn net.Conn) (*http.Response, error) {
		fmt.Fprint(conn, "GET /v2/health/live HTTP/1.1\r\nHost: x\r\n\r\n")
		conn.SetReadDeadline(time.Now().Add(testenv.Patience))
		return http.ReadResponse(bufio.NewReader(conn), nil)
	}

	// Two connections in the middle of a request (their header unfinished)
	// take both slots.
	a, b := dial(t, h), dial(t, h)
	for _, c := range []net.Conn{a, b} {
		fmt.Fprint(c, "GET /v2/health/live HTTP/1.1\r\n")
	}
	testenv.WaitUntil(t, "two connections accepted", func() bool { return accepted.Load() == 2 })
	c := dial(t, h)
	fmt.Fprint(c, "GET /v2/health/live HTTP/1.1\r\nHost: x\r\n\r\n")
	c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	if _, err := http.ReadResponse(bufio.NewReader(c), nil); err == nil || accepted.Load() != 2 {
		t.Fatalf("a third connection was served (%v; %d accepted) with both slots taken", err, accepted.Load())
	}
	a.Close()
	c.SetReadDeadline(time.Now().Add(testenv.Patience))
	if resp, err := http.ReadResponse(bufio.NewReader(c), nil); err != nil || resp.StatusCode != 200 {
		t.Fatalf("the third connection once one closed: %v %v", resp, err)
	}

	// b finishes its request and idles, as c does: a new connection takes
	// the slot of one of them.
	fmt.Fprint(b, "Host: x\r\n\r\n")
	if resp, err := http.ReadResponse(bufio.NewReader(b), nil); err != nil || resp.StatusCode != 200 {
		t.Fatalf("b's request: %v %v", resp, err)
	}
	d := dial(t, h)
	if resp, err := get(d); err != nil || resp.StatusCode != 200 {
		t.Fatalf("a new connection while two idle ones hold the slots: %v %v", resp, err)
	}
	if n := accepted.Load(); n != 4 {
		t.Errorf("%d connections accepted, want 4", n)
	}
}
