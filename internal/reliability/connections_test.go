package reliability

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tritonhost/tritonhost/client"
)

// TestIdleConnectionIsClosed: a client that completes the HTTP/2
// handshake and then sends nothing is told to go away (GOAWAY) and
// disconnected after --grpc-max-connection-idle.
func TestIdleConnectionIsClosed(t *testing.T) {
	const idle = time.Second
	srv := start(t, "", "--grpc-max-connection-idle", "1000")
	conn, err := net.Dial("tcp", srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, http2.ClientPreface); err != nil {
		t.Fatal(err)
	}
	fr := http2.NewFramer(conn, bufio.NewReader(conn))
	if err := fr.WriteSettings(); err != nil {
		t.Fatal(err)
	}
	begin := time.Now()
	_ = conn.SetReadDeadline(begin.Add(idle + 30*time.Second))
	goaway := false
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			break // closed by the server (or the deadline, checked below)
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if !f.IsAck() {
				_ = fr.WriteSettingsAck()
			}
		case *http2.PingFrame:
			if !f.IsAck() {
				_ = fr.WritePing(true, f.Data)
			}
		case *http2.GoAwayFrame:
			goaway = true
		}
	}
	took := time.Since(begin)
	if !goaway {
		t.Errorf("the idle connection was closed without GOAWAY")
	}
	if took < idle || took > idle+10*time.Second {
		t.Errorf("the idle connection was closed after %v; want about %v", took, idle)
	}
	t.Logf("a handshaken, idle connection was closed after %v (--grpc-max-connection-idle %v), GOAWAY %v", took.Round(time.Millisecond), idle, goaway)
}

// TestStreamsPerConnectionAreBounded: past --grpc-max-concurrent-streams
// calls on one connection, a new call waits for one to end; the open ones
// are served.
func TestStreamsPerConnectionAreBounded(t *testing.T) {
	const limit = 4
	srv := start(t, "", "--grpc-max-concurrent-streams", "4")
	_, c := srv.Dial(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	streams := make([]*client.Stream, limit)
	for i := range streams {
		st, err := client.OpenStream(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		streams[i] = st
		// A stream counts once its headers reach the server: start a request.
		if err := st.Send(squareRequest("open", 1)); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Recv(); err != nil {
			t.Fatal(err)
		}
	}
	short, shortCancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer shortCancel()
	_, err := c.ServerLive(short, nil)
	if status.Code(err) != codes.DeadlineExceeded {
		t.Fatalf("a call past the limit: %v, want it to wait (DeadlineExceeded)", err)
	}
	// One stream ends: the next call goes through.
	if err := streams[0].CloseSend(); err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := streams[0].Recv(); err != nil {
			break
		}
	}
	live, liveCancel := context.WithTimeout(ctx, 10*time.Second)
	defer liveCancel()
	if _, err := c.ServerLive(live, nil); err != nil {
		t.Fatalf("a call after a stream ended: %v", err)
	}
	t.Logf("with %d streams open on a connection (the limit) a further call waited; once one ended, it was served", limit)
}

// TestPingFloodIsDisconnected: a client that pings with no call open
// (--grpc-keepalive-permit-without-calls is off) is told to go away with
// ENHANCE_YOUR_CALM after a few pings, and disconnected.
func TestPingFloodIsDisconnected(t *testing.T) {
	srv := start(t, "")
	conn, err := net.Dial("tcp", srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, http2.ClientPreface); err != nil {
		t.Fatal(err)
	}
	fr := http2.NewFramer(conn, bufio.NewReader(conn))
	if err := fr.WriteSettings(); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	pings := make(chan struct{})
	go func() {
		defer close(pings)
		for i := range 1000 {
			if fr.WritePing(false, [8]byte{byte(i)}) != nil {
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	var code http2.ErrCode
	goaway := false
	for !goaway {
		f, err := fr.ReadFrame()
		if err != nil {
			break
		}
		if g, ok := f.(*http2.GoAwayFrame); ok {
			goaway, code = true, g.ErrCode
		}
	}
	conn.Close()
	<-pings
	if !goaway || code != http2.ErrCodeEnhanceYourCalm {
		t.Fatalf("a ping flood got GOAWAY=%v with %v; want GOAWAY ENHANCE_YOUR_CALM", goaway, code)
	}
	t.Logf("a client pinging every 5 ms with no call open was sent GOAWAY %v", code)
}

// hugeHeaderBlock encodes the headers of a ServerLive call with one more
// header of size bytes, never indexed (the same bytes on any connection).
func hugeHeaderBlock(size int) []byte {
	var buf bytes.Buffer
	enc := hpack.NewEncoder(&buf)
	for _, f := range []hpack.HeaderField{
		{Name: ":method", Value: "POST"}, {Name: ":scheme", Value: "http"},
		{Name: ":path", Value: "/inference.GRPCInferenceService/ServerLive"}, {Name: ":authority", Value: "test"},
		{Name: "content-type", Value: "application/grpc"}, {Name: "te", Value: "trailers"},
		{Name: "x-huge", Value: strings.Repeat("h", size)},
	} {
		f.Sensitive = true
		_ = enc.WriteField(f)
	}
	return buf.Bytes()
}

// holdHeaders sends block as the headers of stream 1, in a HEADERS frame
// and CONTINUATION frames of 16 KiB, all but the end (the call never
// starts), and returns how many bytes the server took before it closed the
// connection, and whether it did (a read ends within wait).
func holdHeaders(addr string, block []byte, wait time.Duration) (int64, bool) {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return 0, false
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(wait))
	w := &countingConn{Conn: conn}
	if _, err := io.WriteString(w, http2.ClientPreface); err != nil {
		return w.n, true
	}
	fr := http2.NewFramer(w, conn)
	if fr.WriteSettings() != nil {
		return w.n, true
	}
	const frame = 16 << 10
	if fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: block[:frame]}) != nil {
		return w.n, true
	}
	for rest := block[frame : len(block)-1]; len(rest) > 0; rest = rest[min(len(rest), frame):] {
		if fr.WriteContinuation(1, false, rest[:min(len(rest), frame)]) != nil {
			return w.n, true
		}
	}
	// Everything but the last byte was taken: the connection ends only if
	// the server ends it.
	_, err = io.Copy(io.Discard, conn)
	return w.n, !errors.Is(err, os.ErrDeadlineExceeded)
}

type countingConn struct {
	net.Conn
	n int64
}

func (c *countingConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.n += int64(n)
	return n, err
}

// TestHugeHeadersHoldNoMemory: clients that each send the headers of a
// call, megabytes of them across CONTINUATION frames, and never end them,
// are disconnected once past --grpc-max-header-list-size; the server's
// memory does not grow by what they sent, and a bystander keeps being
// served. The server runs at Go's default garbage-collector percentage:
// under serve's default (--gc-percent 400) the peak also holds up to four
// times the live heap of garbage from the clients' connections, the GC
// policy's memory rather than the headers' (83 MiB on a 16-core machine
// where 42,000 connections came and went in the test's 2 seconds).
func TestHugeHeadersHoldNoMemory(t *testing.T) {
	conns, size := scale(50, 200), scale(4<<20, 15<<20)
	srv := start(t, "", "--gc-percent", "100")
	_, c := srv.Dial(t)
	if err := unaryIdentity(c)(context.Background()); err != nil {
		t.Fatal(err)
	}
	before := srv.ProcStatus(t, "VmHWM")
	block := hugeHeaderBlock(size)

	stop := make(chan struct{})
	var by bystander
	done := make(chan struct{})
	go func() { defer close(done); by.run(context.Background(), unaryIdentity(c), 10*time.Millisecond, stop) }()
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		taken  int64
		closed int
	)
	// Each client sends again as soon as it is disconnected, for a while.
	until := time.Now().Add(time.Duration(scale(2, 10)) * time.Second)
	attempts := 0
	for range conns {
		wg.Go(func() {
			for first := true; first || time.Now().Before(until); first = false {
				n, ok := holdHeaders(srv.Addr, block, 60*time.Second)
				mu.Lock()
				taken += n
				attempts++
				if ok {
					closed++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	close(stop)
	<-done
	peak := srv.ProcStatus(t, "VmHWM")
	calls, median, worst := by.summary()
	for _, err := range by.errs {
		t.Errorf("bystander call failed: %v", err)
	}
	if closed != attempts {
		t.Errorf("the server closed %d of %d connections that sent %d bytes of headers", closed, attempts, size)
	}
	if worst > 5*time.Second {
		t.Errorf("a bystander call waited %v", worst)
	}
	if grew := peak - before; grew > 64<<20 {
		t.Errorf("the server's peak RSS grew by %d MiB while %d clients sent %d MiB of headers each", grew>>20, conns, size>>20)
	}
	t.Logf("%d clients sending %d MiB headers, again when disconnected: the server closed %d of %d connections, having taken %d KiB of each on average (with the kernel's buffers); peak RSS %d MiB (was %d MiB); bystander: %d calls, median %v, max %v",
		conns, size>>20, closed, attempts, taken/int64(max(attempts, 1))>>10, peak>>20, before>>20, calls, median, worst)
}
