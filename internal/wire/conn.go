package wire

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// MaxMessage is the largest message a Conn sends or receives whole. A
// unix datagram socket bounds a message by its send buffer (about 200 KiB
// by default); what is larger travels in shared memory beside it.
const MaxMessage = 128 << 10

// MaxFiles is the most file descriptors a message carries.
const MaxFiles = 16

// Pair returns the two ends of a new SOCK_SEQPACKET socket pair, close on
// exec; the caller hands one to a child process (which it then closes).
func Pair() (local, remote *os.File, err error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("socketpair: %w", err)
	}
	return os.NewFile(uintptr(fds[0]), "wire"), os.NewFile(uintptr(fds[1]), "wire"), nil
}

// Conn is one end of the socket. Send is safe for concurrent use (each
// message goes whole); Recv is for one goroutine.
type Conn struct {
	uc     *net.UnixConn
	sendMu sync.Mutex
	oob    []byte
}

// NewConn wraps f, one end of a Pair, which it takes over.
func NewConn(f *os.File) (*Conn, error) {
	defer f.Close()
	c, err := net.FileConn(f)
	if err != nil {
		return nil, fmt.Errorf("socket: %w", err)
	}
	uc, ok := c.(*net.UnixConn)
	if !ok {
		c.Close()
		return nil, errors.New("socket: not a unix socket")
	}
	return &Conn{uc: uc, oob: make([]byte, unix.CmsgSpace(4*MaxFiles))}, nil
}

// Close closes the socket; a Recv blocked on it returns.
func (c *Conn) Close() error { return c.uc.Close() }

// ErrTooLarge is Send's error for a message over MaxMessage, or with more
// than MaxFiles descriptors.
var ErrTooLarge = errors.New("message too large")

// Send sends msg with the descriptors fds, which the receiver gets copies
// of (the caller still owns its own).
func (c *Conn) Send(msg []byte, fds ...int) error {
	if len(msg) > MaxMessage || len(fds) > MaxFiles {
		return fmt.Errorf("%w: %d bytes, %d descriptors", ErrTooLarge, len(msg), len(fds))
	}
	var oob []byte
	if len(fds) > 0 {
		oob = unix.UnixRights(fds...)
	}
	c.sendMu.Lock()
	defer c.sendMu.Unlock()
	_, _, err := c.uc.WriteMsgUnix(msg, oob, nil)
	return err
}

// Recv receives the next message into buf (MaxMessage bytes are enough)
// and returns it with the descriptors that came with it, which the caller
// owns. It returns io.EOF once the other end closed. A message cut short
// (buf too small) or with more descriptors than MaxFiles is an error; its
// descriptors are closed.
func (c *Conn) Recv(buf []byte) ([]byte, []int, error) {
	n, oobn, flags, _, err := c.uc.ReadMsgUnix(buf, c.oob)
	if err != nil {
		if errors.Is(err, net.ErrClosed) {
			return nil, nil, io.EOF
		}
		return nil, nil, err
	}
	fds, ferr := parseRights(c.oob[:oobn])
	switch {
	case ferr != nil:
		closeAll(fds)
		return nil, nil, ferr
	case flags&(unix.MSG_TRUNC|unix.MSG_CTRUNC) != 0:
		closeAll(fds)
		return nil, nil, fmt.Errorf("%w: the message or its descriptors were cut short", ErrMalformed)
	case n == 0 && oobn == 0:
		return nil, nil, io.EOF // a datagram socket reads 0 once the other end is gone
	}
	return buf[:n], fds, nil
}

func parseRights(oob []byte) ([]int, error) {
	if len(oob) == 0 {
		return nil, nil
	}
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil, fmt.Errorf("%w: control message: %v", ErrMalformed, err)
	}
	var fds []int
	for _, m := range msgs {
		got, err := unix.ParseUnixRights(&m)
		if err != nil {
			closeAll(fds)
			return nil, fmt.Errorf("%w: control message: %v", ErrMalformed, err)
		}
		fds = append(fds, got...)
	}
	if len(fds) > MaxFiles {
		return fds, fmt.Errorf("%w: %d descriptors", ErrMalformed, len(fds))
	}
	return fds, nil
}

// closeAll closes descriptors received and not used.
func closeAll(fds []int) {
	for _, fd := range fds {
		_ = unix.Close(fd)
	}
}

// CloseFiles closes descriptors a message brought that the caller does not
// keep.
func CloseFiles(fds []int) { closeAll(fds) }
