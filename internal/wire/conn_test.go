package wire

import (
	"errors"
	"io"
	"os"
	"testing"

	"golang.org/x/sys/unix"
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

func TestMessagesKeepTheirBoundariesAndFiles(t *testing.T) {
	a, b := pair(t)
	f, err := os.CreateTemp(t.TempDir(), "shared")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString("shared bytes"); err != nil {
		t.Fatal(err)
	}
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
