package wire

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tritonhost/tritonhost/internal/testenv"
)

func pair(t *testing.T) (*Conn, *Conn) {
	t.Helper()
	a, b, err := Pair()
	if err != nil {
		t.Fatal(err)
	}
	ca, err := NewConn(a)
	if err != nil {
		t.Fatal(err)
	}
	cb, err := NewConn(b)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ca.Close(); cb.Close() })
	return ca, cb
}

// sharedFile is a file holding content, for messages to bring its
// descriptor; closed when the test ends.
func sharedFile(t *testing.T, content string) *os.File {
	t.Helper()
	f, err := os.CreateTemp(t.TempDir(), "shared")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if _, err := f.WriteString(content); err != nil {
		t.Fatal(err)
	}
	return f
}

func TestMessagesKeepTheirBoundariesAndFiles(t *testing.T) {
	a, b := pair(t)
	f := sharedFile(t, "shared bytes")
	if err := a.Send([]byte("first")); err != nil {
		t.Fatal(err)
	}
	if err := a.Send([]byte("second"), int(f.Fd())); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, MaxMessage)
	msg, fds, err := b.Recv(buf)
	if err != nil || string(msg) != "first" || len(fds) != 0 {
		t.Fatalf("first: %q %v %v", msg, fds, err)
	}
	msg, fds, err = b.Recv(buf)
	if err != nil || string(msg) != "second" || len(fds) != 1 {
		t.Fatalf("second: %q %v %v", msg, fds, err)
	}
	got := make([]byte, 12)
	if n, err := unix.Pread(fds[0], got, 0); err != nil || string(got[:n]) != "shared bytes" {
		t.Errorf("the file that came along reads %q, %v", got[:n], err)
	}
	CloseFiles(fds)
	if err := a.Send(make([]byte, MaxMessage+1)); !errors.Is(err, ErrTooLarge) {
		t.Errorf("an oversized message: %v, want ErrTooLarge", err)
	}
	a.Close()
	if _, _, err := b.Recv(buf); !errors.Is(err, io.EOF) {
		t.Errorf("after the other end closed: %v, want EOF", err)
	}
}

func TestAMessageCutShortIsAnError(t *testing.T) {
	a, b := pair(t)
	if err := a.Send(make([]byte, 100)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.Recv(make([]byte, 10)); !errors.Is(err, ErrMalformed) {
		t.Errorf("Recv into a small buffer: %v, want ErrMalformed", err)
	}
}

func TestDeferredMessagesKeepTheirOrderAndArrive(t *testing.T) {
	a, b := pair(t)
	f := sharedFile(t, "deferred")
	if err := a.SendDeferred([]byte("one")); err != nil {
		t.Fatal(err)
	}
	if err := a.SendDeferred([]byte("two"), int(f.Fd())); err != nil {
		t.Fatal(err)
	}
	f.Close() // the queue holds its own copy of the descriptor
	if err := a.Send([]byte("three")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, MaxDatagram)
	for i, want := range []string{"one", "two", "three"} {
		msg, fds, err := b.Recv(buf)
		if err != nil || string(msg) != want || len(fds) != btoi(i == 1) {
			t.Fatalf("message %d: %q %v %v, want %q", i, msg, fds, err, want)
		}
		if i == 1 {
			got := make([]byte, 8)
			if n, err := unix.Pread(fds[0], got, 0); err != nil || string(got[:n]) != "deferred" {
				t.Errorf("the deferred message's file reads %q, %v", got[:n], err)
			}
		}
		CloseFiles(fds)
	}
	// Alone, a deferred message goes within DeferLimit.
	if err := a.SendDeferred([]byte("alone")); err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 1)
	go func() {
		msg, _, _ := b.Recv(buf)
		got <- string(msg)
	}()
	select {
	case m := <-got:
		if m != "alone" {
			t.Errorf("got %q, want the deferred message", m)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a deferred message alone never arrived")
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestMessagesQueuedBehindASendShareADatagram: what is queued while a send
// is in progress goes in one datagram, which Recv splits back.
func TestMessagesQueuedBehindASendShareADatagram(t *testing.T) {
	a, b := pair(t)
	a.mu.Lock()
	a.flushing = true // a send in progress
	a.mu.Unlock()
	for _, m := range []string{"a", "b", "c"} {
		if err := a.Send([]byte(m)); err != nil {
			t.Fatal(err)
		}
	}
	a.mu.Lock()
	a.flushing = false
	a.mu.Unlock()
	if err := a.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := a.Send([]byte("d")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, MaxDatagram)
	n, _, _, _, err := b.r.ReadMsgUnix(buf, nil)
	if err != nil {
		t.Fatal(err)
	}
	frames, err := SplitFrames(nil, buf[:n], nil)
	if err != nil || len(frames) != 3 || string(frames[0].Msg) != "a" || string(frames[2].Msg) != "c" {
		t.Fatalf("the first datagram: %d frames, %v; want a, b and c", len(frames), err)
	}
	if msg, _, err := b.Recv(buf); err != nil || string(msg) != "d" {
		t.Fatalf("then %q, %v; want d", msg, err)
	}
	a.Close()
	if err := a.Send([]byte("e")); err == nil {
		t.Error("a send after Close succeeded")
	}
}

func TestMalformedDatagramsAreRefused(t *testing.T) {
	for _, c := range []struct {
		name  string
		dgram []byte
		nfds  int
	}{
		{"a length past the end", []byte{0, 9, 'x'}, 0},
		{"a count that does not parse", []byte{0x80}, 0},
		{"more descriptors beside than the frames bring", AppendFrame(nil, []byte("x"), 0), 1},
		{"fewer descriptors beside than the frames bring", AppendFrame(nil, []byte("x"), 2), 1},
		{"descriptors and no frame", nil, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, b := pair(t)
			var oob []byte
			if c.nfds > 0 {
				fd, err := unix.MemfdCreate("x", unix.MFD_CLOEXEC)
				if err != nil {
					t.Fatal(err)
				}
				defer unix.Close(fd)
				oob = unix.UnixRights(fd)
			}
			if err := a.writeMsg(c.dgram, oob, false); err != nil {
				t.Fatal(err)
			}
			if _, _, err := b.Recv(make([]byte, MaxDatagram)); !errors.Is(err, ErrMalformed) {
				t.Errorf("Recv: %v, want ErrMalformed", err)
			}
		})
	}
}

func FuzzSplitFrames(f *testing.F) {
	f.Add(AppendFrame(AppendFrame(nil, []byte("one"), 0), []byte("two"), 0), 0)
	f.Add(AppendFrame(nil, []byte("x"), 1), 1)
	f.Fuzz(func(t *testing.T, dgram []byte, nfds int) {
		nfds = max(0, min(nfds, 3))
		fds := make([]int, nfds)
		for i := range fds {
			fd, err := unix.MemfdCreate("x", unix.MFD_CLOEXEC)
			if err != nil {
				t.Fatal(err)
			}
			fds[i] = fd
		}
		frames, err := SplitFrames(nil, dgram, fds)
		if err != nil {
			return // SplitFrames closed them
		}
		total, n := 0, 0
		for _, fr := range frames {
			total += len(fr.Files)
			n += len(fr.Msg)
			CloseFiles(fr.Files)
		}
		if total != nfds || n > len(dgram) {
			t.Fatalf("%d frames bring %d descriptors of %d, %d bytes of %d", len(frames), total, nfds, n, len(dgram))
		}
	})
}

// TestASenderAheadOfItsReaderIsBatched: a sender far ahead of the reader
// does not wait on the full socket; what it sends meanwhile queues and
// goes in few datagrams, in order.
func TestASenderAheadOfItsReaderIsBatched(t *testing.T) {
	a, b := pair(t)
	const n = 20000
	sent := make(chan error, 1)
	go func() {
		for i := range n {
			if err := a.Send(binary.AppendUvarint(nil, uint64(i))); err != nil {
				sent <- err
				return
			}
		}
		sent <- nil
	}()
	select {
	case err := <-sent:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the sender waited for its reader")
	}
	buf := make([]byte, MaxDatagram)
	datagrams := 0
	for i := 0; i < n; {
		nb, oobn, _, _, err := b.r.ReadMsgUnix(buf, b.oob)
		if err != nil {
			t.Fatal(err)
		}
		frames, err := SplitFrames(nil, buf[:nb], nil)
		if err != nil || oobn != 0 {
			t.Fatal(err)
		}
		datagrams++
		for _, f := range frames {
			if v, _ := binary.Uvarint(f.Msg); v != uint64(i) {
				t.Fatalf("message %d reads %d", i, v)
			}
			i++
		}
	}
	if datagrams > n/2 {
		t.Errorf("%d messages took %d datagrams", n, datagrams)
	}
	if err := a.Flush(); err != nil {
		t.Fatal(err)
	}
}

// TestMessagesSentSoonShareADatagram: messages sent with SendSoon in a run
// are written by the Conn, not their caller, in order, the run's messages
// (descriptors included) in one datagram when the caller queues them
// before the Conn's goroutine runs (one processor: it runs once the
// caller waits).
func TestMessagesSentSoonShareADatagram(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	a, b := pair(t)
	f := sharedFile(t, "")
	for i, m := range []string{"a", "b", "c"} {
		var fds []int
		if i == 1 {
			fds = []int{int(f.Fd())}
		}
		if err := a.SendSoon([]byte(m), fds...); err != nil {
			t.Fatal(err)
		}
	}
	buf := make([]byte, MaxDatagram)
	n, oobn, _, _, err := b.r.ReadMsgUnix(buf, b.oob)
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := unix.ParseSocketControlMessage(b.oob[:oobn])
	if err != nil || len(msgs) != 1 {
		t.Fatalf("control messages %v, %v", msgs, err)
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != 1 {
		t.Fatalf("descriptors %v, %v", fds, err)
	}
	defer CloseFiles(fds)
	frames, err := SplitFrames(nil, buf[:n], fds)
	if err != nil || len(frames) != 3 || string(frames[0].Msg) != "a" || string(frames[1].Msg) != "b" || string(frames[2].Msg) != "c" || len(frames[1].Files) != 1 {
		t.Fatalf("the datagram: %+v, %v; want a, b (with a file) and c", frames, err)
	}
	// A run over, the next message sent soon goes alone.
	if err := a.SendSoon([]byte("d")); err != nil {
		t.Fatal(err)
	}
	if msg, _, err := b.Recv(buf); err != nil || string(msg) != "d" {
		t.Fatalf("then %q, %v; want d", msg, err)
	}
}

// TestCloseEndsASendWaitingForRoom: a send that waits for room on a full
// socket (its reader reads nothing) returns with an error as soon as the
// Conn closes, not when the wait's poll interval ends.
func TestCloseEndsASendWaitingForRoom(t *testing.T) {
	a, _ := pair(t)
	f := sharedFile(t, "")
	// Fill the socket: a message that brings the caller's descriptors is
	// written before Send returns, waiting for room if need be.
	big := make([]byte, MaxMessage)
	sent := make(chan error, 1)
	go func() {
		for {
			if err := a.Send(big, int(f.Fd())); err != nil {
				sent <- err
				return
			}
		}
	}()
	testenv.WaitUntil(t, "the socket to fill", func() bool {
		full := false
		_ = a.wc.Control(func(fd uintptr) {
			fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLOUT}}
			n, err := unix.Poll(fds, 0)
			full = err == nil && n == 0
		})
		return full && len(sent) == 0
	})
	time.Sleep(10 * time.Millisecond) // into its poll
	start := time.Now()
	a.Close()
	select {
	case err := <-sent:
		if !errors.Is(err, net.ErrClosed) {
			t.Errorf("the waiting send returned %v, want net.ErrClosed", err)
		}
		if d := time.Since(start); d >= roomPoll/4 {
			t.Errorf("the waiting send returned %v after Close; the shut socket should wake its poll (interval %v) at once", d, roomPoll)
		}
	case <-time.After(testenv.Patience):
		t.Fatal("the waiting send did not return after Close")
	}
}
