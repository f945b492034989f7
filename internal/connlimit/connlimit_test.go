package connlimit

import (
	"errors"
	"io"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tritonhost/tritonhost/internal/testenv"
)

// listen returns a loopback listener bounded by l, closed at cleanup.
func listen(t *testing.T, l *Limiter) net.Listener {
	t.Helper()
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	lis := l.Wrap(raw)
	t.Cleanup(func() { lis.Close() })
	return lis
}

// acceptAsync accepts one connection on another goroutine.
func acceptAsync(lis net.Listener) <-chan net.Conn {
	got := make(chan net.Conn, 1)
	go func() {
		c, err := lis.Accept()
		if err != nil {
			close(got)
			return
		}
		got <- c
	}()
	return got
}

// dial connects to lis from the loopback address from (Linux routes all
// of 127/8 to the loopback interface, so each address is a client of its
// own), closed at cleanup.
func dial(t *testing.T, lis net.Listener, from string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
	c, err := d.Dial("tcp", lis.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// waitCount is how many times Accept has waited for a slot.
func (l *Limiter) waitCount() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.waits
}

// awaitWaiting waits until Accept has started to wait for a slot for the
// n-th time: from then on it takes no connection until a slot is free.
func awaitWaiting(t *testing.T, l *Limiter, n int) {
	t.Helper()
	testenv.WaitUntil(t, "Accept to wait for a slot", func() bool { return l.waitCount() >= n })
}

// TestAcceptWaitsForAFreeSlot: with every slot taken and no connection
// reported idle (a gRPC server's case), Accept waits until a connection
// closes; OnFull is called once each time the slots run out.
func TestAcceptWaitsForAFreeSlot(t *testing.T) {
	var full atomic.Int32
	l := New(Options{Max: 2, PerClient: 2, OnFull: func() { full.Add(1) }})
	lis := listen(t, l)
	var held []net.Conn
	for range 2 {
		dial(t, lis, "127.0.0.1")
		c, ok := <-acceptAsync(lis)
		if !ok {
			t.Fatal("accept failed")
		}
		held = append(held, c)
	}
	if l.Open() != 2 || full.Load() != 0 {
		t.Fatalf("%d open, OnFull called %d times; want 2 and 0", l.Open(), full.Load())
	}
	dial(t, lis, "127.0.0.1")
	third := acceptAsync(lis)
	awaitWaiting(t, l, 1)
	select {
	case <-third:
		t.Fatal("a third connection was accepted with both slots taken")
	default:
	}
	if full.Load() != 1 {
		t.Errorf("OnFull called %d times once the slots ran out, want 1", full.Load())
	}
	held[0].Close()
	held[0].Close() // a second close gives back nothing more
	select {
	case c, ok := <-third:
		if !ok {
			t.Fatal("accept failed")
		}
		defer c.Close()
	case <-time.After(testenv.Patience):
		t.Fatal("the third connection was not accepted once one closed")
	}
	if l.Open() != 2 {
		t.Errorf("%d open, want 2", l.Open())
	}
	// Still full: a connection that waits again is not reported again.
	dial(t, lis, "127.0.0.1")
	fourth := acceptAsync(lis)
	awaitWaiting(t, l, 2)
	held[1].Close()
	c4, ok := <-fourth
	if !ok {
		t.Fatal("accept failed")
	}
	if full.Load() != 1 {
		t.Errorf("OnFull called %d times while the slots stayed short, want 1", full.Load())
	}
	// A slot free at once ends the shortage; running out again is reported.
	c4.Close()
	dial(t, lis, "127.0.0.1")
	c5, ok := <-acceptAsync(lis)
	if !ok {
		t.Fatal("accept failed")
	}
	defer c5.Close()
	dial(t, lis, "127.0.0.1")
	sixth := acceptAsync(lis)
	awaitWaiting(t, l, 3)
	if full.Load() != 2 {
		t.Errorf("OnFull called %d times after the slots ran out a second time, want 2", full.Load())
	}
	lis.Close()
	<-sixth
}

// TestCloseEndsAWaitingAccept: closing the listener ends an Accept that
// waits for a slot.
// TestAnIdleConnectionMakesRoom: with every slot taken, a connection
// reported idle is closed for the one that waits, whether it turned idle
// before Accept began to wait or while it waits (then at once, not on a
// later connection's change). Each round races the two.
func TestAnIdleConnectionMakesRoom(t *testing.T) {
	for round := range 50 {
		l := New(Options{Max: 1, PerClient: 1})
		lis := listen(t, l)
		dial(t, lis, "127.0.0.1")
		held, ok := <-acceptAsync(lis)
		if !ok {
			t.Fatal("accept failed")
		}
		l.Track(held, http.StateActive)
		dial(t, lis, "127.0.0.2")
		next := acceptAsync(lis)
		if round%2 == 0 {
			awaitWaiting(t, l, 1)
		}
		l.Track(held, http.StateIdle)
		select {
		case c, ok := <-next:
			if !ok {
				t.Fatal("accept failed")
			}
			c.Close()
		case <-time.After(testenv.Patience):
			t.Fatalf("round %d: the waiting connection was not accepted once the other turned idle", round)
		}
		if _, err := held.Read(make([]byte, 1)); !errors.Is(err, net.ErrClosed) {
			t.Fatalf("round %d: the idle connection reads %v, want it closed", round, err)
		}
		lis.Close()
	}
}

func TestCloseEndsAWaitingAccept(t *testing.T) {
	l := New(Options{Max: 1})
	lis := listen(t, l)
	dial(t, lis, "127.0.0.1")
	c, ok := <-acceptAsync(lis)
	if !ok {
		t.Fatal("accept failed")
	}
	defer c.Close()
	waiting := acceptAsync(lis)
	awaitWaiting(t, l, 1)
	lis.Close()
	select {
	case _, ok := <-waiting:
		if ok {
			t.Fatal("a connection was accepted after the listener closed")
		}
	case <-time.After(testenv.Patience):
		t.Fatal("Accept still waits after the listener closed")
	}
}

// closedByPeer reports whether c was closed by the other end: a read
// ends with EOF or a reset rather than waiting (for testenv.Patience).
func closedByPeer(c net.Conn) bool {
	_ = c.SetReadDeadline(time.Now().Add(testenv.Patience))
	_, err := c.Read(make([]byte, 1))
	var ne net.Error
	return errors.Is(err, io.EOF) || err != nil && !(errors.As(err, &ne) && ne.Timeout())
}

// TestAClientHoldsNoMoreThanItsShare: connections of a client past its
// share are closed as they are accepted, and the next connection Accept
// returns is another client's; a connection that closes gives its place
// back; the refusals are reported at most once per interval, with their
// count. Each case dials from loopback addresses, one per client.
func TestAClientHoldsNoMoreThanItsShare(t *testing.T) {
	cases := []struct {
		name      string
		max, per  int
		wantShare int
	}{
		{"a share set", 8, 2, 2},
		{"the default share, a quarter", 8, 0, 2},
		{"a share past the cap is the cap", 3, 10, 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			type report struct {
				client  netip.Addr
				refused int
			}
			var (
				mu      sync.Mutex
				reports []report
			)
			clock := time.Unix(1000, 0)
			l := New(Options{Max: c.max, PerClient: c.per, ReportInterval: time.Minute,
				OnClientFull: func(client netip.Addr, refused int) {
					mu.Lock()
					reports = append(reports, report{client, refused})
					mu.Unlock()
				}})
			l.now = func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
			lis := listen(t, l)
			var held []net.Conn
			for range c.wantShare {
				dial(t, lis, "127.0.0.1")
				conn, ok := <-acceptAsync(lis)
				if !ok {
					t.Fatal("accept failed")
				}
				held = append(held, conn)
			}
			if c.wantShare == c.max {
				return // no room for another client: the cap is the share
			}
			// Two more from the same client, then one from another: Accept
			// closes the two and returns the other client's.
			over := []net.Conn{dial(t, lis, "127.0.0.1"), dial(t, lis, "127.0.0.1")}
			other := dial(t, lis, "127.0.0.2")
			got, ok := <-acceptAsync(lis)
			if !ok {
				t.Fatal("accept failed")
			}
			defer got.Close()
			if got.RemoteAddr().String() != other.LocalAddr().String() {
				t.Errorf("Accept returned a connection from %v, want the other client's %v", got.RemoteAddr(), other.LocalAddr())
			}
			for i, conn := range over {
				if !closedByPeer(conn) {
					t.Errorf("connection %d past the share was not closed", i)
				}
			}
			mu.Lock()
			if len(reports) != 1 || reports[0].client != netip.MustParseAddr("127.0.0.1") || reports[0].refused != 1 {
				t.Errorf("reports %+v, want one for 127.0.0.1 with 1 refused (the second within the interval)", reports)
			}
			clock = clock.Add(time.Minute)
			mu.Unlock()
			// A connection past the share after the interval is reported
			// again, with the one not reported before.
			dial(t, lis, "127.0.0.1")
			dial(t, lis, "127.0.0.3")
			if conn, ok := <-acceptAsync(lis); ok {
				defer conn.Close()
			}
			mu.Lock()
			if len(reports) != 2 || reports[1].refused != 2 {
				t.Errorf("reports %+v, want a second with 2 refused", reports)
			}
			mu.Unlock()
			// A connection that closes gives its place back.
			held[0].Close()
			again := dial(t, lis, "127.0.0.1")
			conn, ok := <-acceptAsync(lis)
			if !ok {
				t.Fatal("accept failed")
			}
			defer conn.Close()
			if conn.RemoteAddr().String() != again.LocalAddr().String() {
				t.Errorf("Accept returned %v, want the client's connection once one of its own closed", conn.RemoteAddr())
			}
		})
	}
}

// pipeListener hands out in-memory connections, which have no IP address.
type pipeListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func (p *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-p.conns:
		return c, nil
	case <-p.done:
		return nil, net.ErrClosed
	}
}

func (p *pipeListener) Close() error { p.once.Do(func() { close(p.done) }); return nil }

func (p *pipeListener) Addr() net.Addr { return pipeAddr{} }

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "pipe" }

// TestConnectionsWithoutAnAddressHaveNoShare: connections that have no IP
// address (an in-memory transport) are bounded by the cap alone.
func TestConnectionsWithoutAnAddressHaveNoShare(t *testing.T) {
	l := New(Options{Max: 4, PerClient: 1})
	p := &pipeListener{conns: make(chan net.Conn, 4), done: make(chan struct{})}
	lis := l.Wrap(p)
	defer lis.Close()
	for i := range 4 {
		server, client := net.Pipe()
		defer client.Close()
		p.conns <- server
		c, err := lis.Accept()
		if err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		defer c.Close()
	}
	if l.Open() != 4 {
		t.Errorf("%d open, want 4", l.Open())
	}
}
