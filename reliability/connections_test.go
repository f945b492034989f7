package reliability

import (
	"bufio"
	"context"
	"io"
	"net"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"tritonhost/client"
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
