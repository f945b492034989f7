package connlimit

import (
	"net"
	"sync/atomic"
	"testing"
	"time"
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

func dial(t *testing.T, lis net.Listener) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", lis.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestAcceptWaitsForAFreeSlot: with every slot taken and no connection
// reported idle (a gRPC server's case), Accept waits until a connection
// closes; onFull is called once each time the slots run out.
func TestAcceptWaitsForAFreeSlot(t *testing.T) {
	var full atomic.Int32
	l := New(2, func() { full.Add(1) })
	lis := listen(t, l)
	var held []net.Conn
	for range 2 {
		dial(t, lis)
		c, ok := <-acceptAsync(lis)
		if !ok {
			t.Fatal("accept failed")
		}
		held = append(held, c)
	}
	if l.Open() != 2 || full.Load() != 0 {
		t.Fatalf("%d open, onFull called %d times; want 2 and 0", l.Open(), full.Load())
	}
	dial(t, lis)
	third := acceptAsync(lis)
	select {
	case <-third:
		t.Fatal("a third connection was accepted with both slots taken")
	case <-time.After(200 * time.Millisecond):
	}
	if full.Load() != 1 {
		t.Errorf("onFull called %d times once the slots ran out, want 1", full.Load())
	}
	held[0].Close()
	held[0].Close() // a second close gives back nothing more
	select {
	case c, ok := <-third:
		if !ok {
			t.Fatal("accept failed")
		}
		defer c.Close()
	case <-time.After(10 * time.Second):
		t.Fatal("the third connection was not accepted once one closed")
	}
	if l.Open() != 2 {
		t.Errorf("%d open, want 2", l.Open())
	}
	// Still full: a connection that waits again is not reported again.
	dial(t, lis)
	fourth := acceptAsync(lis)
	time.Sleep(100 * time.Millisecond) // let Accept find the slots taken
	held[1].Close()
	c4, ok := <-fourth
	if !ok {
		t.Fatal("accept failed")
	}
	if full.Load() != 1 {
		t.Errorf("onFull called %d times while the slots stayed short, want 1", full.Load())
	}
	// A slot free at once ends the shortage; running out again is reported.
	c4.Close()
	dial(t, lis)
	c5, ok := <-acceptAsync(lis)
	if !ok {
		t.Fatal("accept failed")
	}
	defer c5.Close()
	dial(t, lis)
	sixth := acceptAsync(lis)
	time.Sleep(100 * time.Millisecond)
	if full.Load() != 2 {
		t.Errorf("onFull called %d times after the slots ran out a second time, want 2", full.Load())
	}
	lis.Close()
	<-sixth
}

// TestCloseEndsAWaitingAccept: closing the listener ends an Accept that
// waits for a slot.
func TestCloseEndsAWaitingAccept(t *testing.T) {
	l := New(1, nil)
	lis := listen(t, l)
	dial(t, lis)
	c, ok := <-acceptAsync(lis)
	if !ok {
		t.Fatal("accept failed")
	}
	defer c.Close()
	waiting := acceptAsync(lis)
	time.Sleep(50 * time.Millisecond)
	lis.Close()
	select {
	case _, ok := <-waiting:
		if ok {
			t.Fatal("a connection was accepted after the listener closed")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Accept still waits after the listener closed")
	}
}
