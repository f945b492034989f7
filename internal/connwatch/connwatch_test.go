package connwatch

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"testing"
	"time"
)

// listen returns a loopback listener watching every tick, closed at
// cleanup.
func listen(t *testing.T, tick time.Duration) *Listener {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := Listen(lis, tick)
	t.Cleanup(func() { l.Close() })
	return l
}

// connect dials l and returns the watched connection it accepts and the
// client's end, both closed at cleanup.
func connect(t *testing.T, l *Listener) (*Conn, net.Conn) {
	t.Helper()
	client, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	c, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c.(*Conn), client
}

// pair returns a watched connection from a listener watching every tick,
// and the client's end of it.
func pair(t *testing.T, tick time.Duration) (*Listener, *Conn, net.Conn) {
	t.Helper()
	l := listen(t, tick)
	c, client := connect(t, l)
	return l, c, client
}

// fillWrites writes to c until a write fails, and returns that error (the
// peer reads nothing, so the writes block once the buffers are full).
func fillWrites(c net.Conn) error {
	buf := make([]byte, 1<<16)
	for {
		if _, err := c.Write(buf); err != nil {
			return err
		}
	}
}

func TestDeadlinePasses(t *testing.T) {
	const after = 50 * time.Millisecond
	for _, tc := range []struct {
		name string
		set  func(c *Conn, t time.Time) error
		op   func(c *Conn) error
		// other, if not nil, still works once op's deadline passed
		other func(c *Conn) error
	}{
		{"read", (*Conn).SetReadDeadline, func(c *Conn) error { _, err := c.Read(make([]byte, 1)); return err },
			func(c *Conn) error { _, err := c.Write([]byte("x")); return err }},
		{"write", (*Conn).SetWriteDeadline, func(c *Conn) error { return fillWrites(c) }, nil},
		{"both", (*Conn).SetDeadline, func(c *Conn) error { _, err := c.Read(make([]byte, 1)); return err },
			func(c *Conn) error {
				if _, err := c.Write([]byte("x")); !errors.Is(err, os.ErrDeadlineExceeded) {
					return fmt.Errorf("write: %v, want a deadline error", err)
				}
				return nil
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, c, _ := pair(t, 5*time.Millisecond)
			start := time.Now()
			if err := tc.set(c, start.Add(after)); err != nil {
				t.Fatal(err)
			}
			err := tc.op(c)
			if !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("got %v, want a deadline error", err)
			}
			var ne net.Error
			if !errors.As(err, &ne) || !ne.Timeout() {
				t.Errorf("%v is not a net.Error timeout", err)
			}
			if took := time.Since(start); took < after {
				t.Errorf("the deadline passed after %v, before its %v", took, after)
			}
			if err := tc.op(c); !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Errorf("after the deadline passed: %v, want a deadline error again", err)
			}
			if tc.other != nil {
				if err := tc.other(c); err != nil {
					t.Errorf("the other direction: %v", err)
				}
			}
		})
	}
}

// TestPassedDeadlineAtOnce: a deadline in the past (as net/http sets to
// abort a read) goes on the connection at once; the watch, which looks
// only once an hour here, plays no part.
func TestPassedDeadlineAtOnce(t *testing.T) {
	_, c, _ := pair(t, time.Hour)
	done := make(chan error, 1)
	go func() { _, err := c.Read(make([]byte, 1)); done <- err }()
	time.Sleep(10 * time.Millisecond) // let the read block, mostly
	if err := c.SetReadDeadline(time.Unix(1, 0)); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("got %v, want a deadline error", err)
	}
	if err := c.SetReadDeadline(time.Time{}); err != nil {
		t.Fatal(err)
	}
	if err := c.SetWriteDeadline(time.Unix(1, 0)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write([]byte("x")); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("write after a passed deadline: %v, want a deadline error", err)
	}
}

// TestDeadlineMovedOrCleared: a deadline moved later or taken off before
// it passes does not cut the read, and one taken off after it passed
// lets reads go on.
func TestDeadlineMovedOrCleared(t *testing.T) {
	for _, tc := range []struct {
		name   string
		then   time.Duration // the deadline set 10 ms later: 0 for none
		passed bool          // the first deadline passes before it is changed
	}{
		{"moved", time.Hour, false},
		{"cleared", 0, false},
		{"cleared after it passed", 0, true},
		{"moved after it passed", time.Hour, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, c, client := pair(t, time.Millisecond)
			first := 20 * time.Millisecond
			if err := c.SetReadDeadline(time.Now().Add(first)); err != nil {
				t.Fatal(err)
			}
			if tc.passed {
				if _, err := c.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
					t.Fatalf("got %v, want a deadline error", err)
				}
			}
			var then time.Time
			if tc.then != 0 {
				then = time.Now().Add(tc.then)
			}
			if err := c.SetReadDeadline(then); err != nil {
				t.Fatal(err)
			}
			go func() {
				time.Sleep(2 * first) // past the first deadline
				client.Write([]byte("ok"))
			}()
			buf := make([]byte, 2)
			if _, err := io.ReadFull(c, buf); err != nil || string(buf) != "ok" {
				t.Fatalf("read %q, %v; want ok", buf, err)
			}
		})
	}
}

// TestExtendedDeadlineNeverCuts: a deadline pushed ahead as bytes arrive,
// as a body's rate bound does, while the watch looks every millisecond,
// never cuts a read: changes and expiries are ordered.
func TestExtendedDeadlineNeverCuts(t *testing.T) {
	_, c, client := pair(t, time.Millisecond)
	const n = 500
	go func() {
		for range n {
			client.Write([]byte{1})
			time.Sleep(100 * time.Microsecond)
		}
	}()
	buf := make([]byte, 1)
	for i := range n {
		if err := c.SetReadDeadline(time.Now().Add(time.Second)); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(c, buf); err != nil {
			t.Fatalf("read %d: %v", i, err)
		}
	}
}

// TestWatchEndsWithItsConnections: the watch's goroutine runs while
// connections are open and ends with the last, and a connection accepted
// later starts it again.
func TestWatchEndsWithItsConnections(t *testing.T) {
	l, c, _ := pair(t, time.Millisecond)
	running := func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		return l.running
	}
	if !running() || l.Watched() != 1 {
		t.Fatalf("running %v with %d connections; want running with 1", running(), l.Watched())
	}
	c.Close()
	c.Close() // twice: leaves once
	for deadline := time.Now().Add(10 * time.Second); running(); {
		if time.Now().After(deadline) {
			t.Fatal("the watch runs on with no connection")
		}
		time.Sleep(time.Millisecond)
	}
	if l.Watched() != 0 {
		t.Fatalf("%d connections watched after the last closed", l.Watched())
	}
	c2, _ := connect(t, l)
	if err := c2.SetReadDeadline(time.Now().Add(20 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if _, err := c2.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("a connection accepted after the watch ended: %v, want a deadline error", err)
	}
}

// TestListenerCloseKeepsDeadlines: when the listener closes, the open
// connections' deadlines go on the connections, and later ones too.
func TestListenerCloseKeepsDeadlines(t *testing.T) {
	l, c, _ := pair(t, time.Hour) // the watch never looks
	if err := c.SetReadDeadline(time.Now().Add(20 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	l.Close()
	if _, err := c.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("got %v, want a deadline error", err)
	}
	if err := c.SetWriteDeadline(time.Now().Add(20 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if err := fillWrites(c); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("write: got %v, want a deadline error", err)
	}
	if l.Watched() != 0 {
		t.Fatalf("%d connections watched after the listener closed", l.Watched())
	}
}

// TestManyConnections: deadlines on many connections at once each pass,
// once, from the one watch.
func TestManyConnections(t *testing.T) {
	l := listen(t, 2*time.Millisecond)
	const n = 64
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		c, _ := connect(t, l)
		wg.Go(func() {
			c.SetReadDeadline(time.Now().Add(time.Duration(i%8) * 5 * time.Millisecond))
			_, err := c.Read(make([]byte, 1))
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("got %v, want a deadline error", err)
		}
	}
}

// TestWatchSleepsUntilTheEarliestDeadline: with every deadline far off,
// the watch does not look every tick; a nearer deadline set while it
// sleeps wakes it, and passes in time.
func TestWatchSleepsUntilTheEarliestDeadline(t *testing.T) {
	const tick = time.Millisecond
	l, c, _ := pair(t, tick)
	if err := c.SetWriteDeadline(time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	before := l.Looks()
	time.Sleep(200 * tick)
	if looks := l.Looks() - before; looks > 5 {
		t.Fatalf("the watch looked %d times in 200 ticks with the only deadline an hour off", looks)
	}
	start := time.Now()
	if err := c.SetReadDeadline(start.Add(30 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("got %v, want a deadline error", err)
	}
	if took := time.Since(start); took < 30*time.Millisecond {
		t.Fatalf("the deadline passed after %v, before its 30ms", took)
	}
	if looks := l.Looks() - before; looks > 20 {
		t.Errorf("the watch looked %d times for one deadline", looks)
	}
}
