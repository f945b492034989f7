package wire

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// MaxMessage is the largest message a Conn sends or receives whole. A
// unix datagram socket bounds a datagram by its send buffer (about 200 KiB
// by default); what is larger travels in shared memory beside it.
const MaxMessage = 128 << 10

// MaxFiles is the most file descriptors a message, or a datagram of
// several, carries.
const MaxFiles = 16

// DeferLimit bounds how long a message sent with SendDeferred waits for
// the next one sent with Send before it is sent alone.
const DeferLimit = time.Millisecond

// maxQueued bounds the bytes queued behind a send in progress; a sender
// past it waits, as it would on a full socket.
const maxQueued = 4 << 20

// Ends is one side of a connection: the socket it reads what the other
// side sends from, and the socket it writes to, each an end of one of the
// two socket pairs that Pair makes (one per direction). A side reads and
// writes on different sockets so that its reads wake nothing on the other
// side: a unix socket wakes every poller of the socket that sent a
// datagram once that datagram is read (it has room again), and the Go
// runtime polls every socket it reads for room too, so that with one
// socket for both ways every read on one side woke the other's runtime
// for nothing. The socket a side writes to is outside its runtime's
// poller (Conn.writeMsg).
type Ends struct {
	Read, Write *os.File
}

// Close closes both sockets.
func (e Ends) Close() {
	e.Read.Close()
	e.Write.Close()
}

// Pair returns the two sides of a new connection, two SOCK_SEQPACKET
// socket pairs, close on exec; the caller hands one side to a child
// process (which it then closes).
func Pair() (local, remote Ends, err error) {
	var fds [2][2]int
	for i := range fds {
		fds[i], err = unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			if i == 1 {
				unix.Close(fds[0][0])
				unix.Close(fds[0][1])
			}
			return Ends{}, Ends{}, fmt.Errorf("socketpair: %w", err)
		}
	}
	// local writes to pair 0 and reads pair 1; remote the other way.
	local = Ends{Read: os.NewFile(uintptr(fds[1][0]), "wire"), Write: os.NewFile(uintptr(fds[0][0]), "wire")}
	remote = Ends{Read: os.NewFile(uintptr(fds[0][1]), "wire"), Write: os.NewFile(uintptr(fds[1][1]), "wire")}
	return local, remote, nil
}

// Conn is one side of a connection (Ends). Send and SendDeferred are
// safe for concurrent use; Recv is for one goroutine.
//
// Messages travel framed in datagrams (frame.go), in the order they were
// sent. A sender that finds no send in progress writes its message itself,
// with whatever was queued before it, and goes on writing what others
// queue meanwhile until the queue is empty; a sender that finds a send in
// progress only queues its message (copied, its descriptors duplicated)
// and returns. A writer that finds the socket full (the other side is
// behind) hands the rest to a goroutine of its own and returns, unless its
// message brings the caller's descriptors. Everything queued while a send
// was in progress thus goes in as few datagrams as hold it: a side that is
// behind sends many messages per system call, and wakes the other side
// once for them. The queue holds at most maxQueued bytes; a sender past
// it waits, as on a full socket.
type Conn struct {
	r  *net.UnixConn   // the socket read, through the runtime's poller
	w  *os.File        // the socket written, not pollable (Ends)
	wc syscall.RawConn // w's
	// stop is an eventfd that Close signals, which a writer waiting for
	// room polls beside w (waitRoom).
	stop  *os.File
	stopc syscall.RawConn
	oob   []byte

	// Recv's: the messages of the last datagram not yet returned.
	frames  []Frame
	pending []Frame

	mu       sync.Mutex
	idle     sync.Cond // broadcast when the queue was taken, or sending stopped
	q, spare sendQueue // what waits; what the sender is writing
	flushing bool      // a sender is writing the queue
	closed   bool
	err      error       // the first failed write: every send fails from then on
	timer    *time.Timer // sends deferred messages that waited DeferLimit
	timerSet bool
}

// sendQueue is a run of framed messages, their descriptors, and the
// duplicates among those that the queue owns (closed once written).
type sendQueue struct {
	buf    []byte
	frames []queuedFrame
	fds    []int
	owned  []int
}

// queuedFrame is one framed message in sendQueue.buf.
type queuedFrame struct {
	end  int // its end in buf
	nfds int
}

func (q *sendQueue) reset() {
	if cap(q.buf) > 4*MaxDatagram { // a burst's buffer is not kept
		q.buf = nil
	}
	q.buf, q.frames, q.fds, q.owned = q.buf[:0], q.frames[:0], q.fds[:0], q.owned[:0]
}

// NewConn wraps e, one side of a Pair, which it takes over.
func NewConn(e Ends) (*Conn, error) {
	defer e.Read.Close()
	c, err := net.FileConn(e.Read)
	if err != nil {
		e.Write.Close()
		return nil, fmt.Errorf("socket: %w", err)
	}
	r, ok := c.(*net.UnixConn)
	if !ok {
		c.Close()
		e.Write.Close()
		return nil, errors.New("socket: not a unix socket")
	}
	wc, err := e.Write.SyscallConn()
	if err != nil {
		r.Close()
		e.Write.Close()
		return nil, fmt.Errorf("socket: %w", err)
	}
	efd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		r.Close()
		e.Write.Close()
		return nil, fmt.Errorf("eventfd: %w", err)
	}
	stop := os.NewFile(uintptr(efd), "wire-stop")
	stopc, err := stop.SyscallConn()
	if err != nil {
		r.Close()
		e.Write.Close()
		stop.Close()
		return nil, fmt.Errorf("eventfd: %w", err)
	}
	conn := &Conn{r: r, w: e.Write, wc: wc, stop: stop, stopc: stopc, oob: make([]byte, unix.CmsgSpace(4*MaxFiles))}
	conn.idle.L = &conn.mu
	conn.timer = time.AfterFunc(time.Hour, conn.deferredDue)
	conn.timer.Stop()
	return conn, nil
}

// Close closes the socket; a Recv blocked on it returns, and so does a
// send in progress. What is still queued is dropped.
func (c *Conn) Close() error {
	c.mu.Lock()
	c.closed = true
	c.timer.Stop()
	c.timerSet = false
	if !c.flushing { // else the sender drops the queue
		closeAll(c.q.owned)
		c.q.reset()
	}
	c.mu.Unlock()
	c.idle.Broadcast()
	// A writer waiting for room (waitRoom) wakes, and its next write
	// fails. The descriptors close once no call uses them.
	_ = c.stopc.Control(func(fd uintptr) { _, _ = unix.Write(int(fd), []byte{1, 0, 0, 0, 0, 0, 0, 0}) })
	c.stop.Close()
	werr := c.w.Close()
	if err := c.r.Close(); err != nil {
		return err
	}
	return werr
}

// ErrTooLarge is Send's error for a message over MaxMessage, or with more
// than MaxFiles descriptors.
var ErrTooLarge = errors.New("message too large")

// Send sends msg with the descriptors fds, which the receiver gets copies
// of (the caller still owns its own), after every message sent before it.
// It returns once the message was written, or queued behind a send in
// progress (which writes it); an error means the message will not
// arrive: too large (ErrTooLarge), the connection closed, or an earlier
// write failed (the other side is gone).
func (c *Conn) Send(msg []byte, fds ...int) error { return c.send(msg, fds, sendNow) }

// SendDeferred is Send for a message that need not wake the other side
// now: it waits in the queue for the next Send, and travels with it, or
// for DeferLimit at most. Its descriptors are duplicated.
func (c *Conn) SendDeferred(msg []byte, fds ...int) error { return c.send(msg, fds, sendDeferred) }

// SendSoon is Send for one of a run of messages that one caller sends
// close together (a stream's responses): it returns once the message is
// queued, and a goroutine of the Conn writes the queue, unless a send in
// progress does, so that the messages the caller queues while that write
// is under way follow in one datagram rather than one each. The first
// message of a run reaches the other side a goroutine's start later than
// it would with Send. Its descriptors are duplicated.
func (c *Conn) SendSoon(msg []byte, fds ...int) error { return c.send(msg, fds, sendSoon) }

// How a message is sent: by its caller unless a send is in progress
// (Send); after the next message sent, or DeferLimit (SendDeferred); by a
// goroutine of the Conn unless a send is in progress (SendSoon).
const (
	sendNow = iota
	sendDeferred
	sendSoon
)

func (c *Conn) send(msg []byte, fds []int, mode int) error {
	if len(msg) > MaxMessage || len(fds) > MaxFiles {
		return fmt.Errorf("%w: %d bytes, %d descriptors", ErrTooLarge, len(msg), len(fds))
	}
	c.mu.Lock()
	for c.flushing && len(c.q.buf) >= maxQueued && !c.closed && c.err == nil {
		c.idle.Wait()
	}
	if err := c.endedLocked(); err != nil {
		c.mu.Unlock()
		return err
	}
	// The sender writes itself unless a send is in progress, or the
	// message may wait (deferred, soon) and the queue is not full.
	lead := !c.flushing && (mode == sendNow || len(c.q.buf) >= maxQueued)
	held := fds
	if !lead && len(fds) > 0 {
		// The caller's descriptors may be closed once Send returns: the
		// queue holds duplicates.
		held = make([]int, 0, len(fds))
		for _, fd := range fds {
			dup, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
			if err != nil {
				closeAll(held)
				c.mu.Unlock()
				return fmt.Errorf("send: duplicate a descriptor: %w", err)
			}
			held = append(held, dup)
		}
		c.q.owned = append(c.q.owned, held...)
	}
	c.q.buf = AppendFrame(c.q.buf, msg, len(held))
	c.q.frames = append(c.q.frames, queuedFrame{end: len(c.q.buf), nfds: len(held)})
	c.q.fds = append(c.q.fds, held...)
	if !lead {
		switch {
		case c.flushing:
		case mode == sendSoon:
			c.flushing = true
			go c.flush(false) // a failed write is every later send's error
		case !c.timerSet:
			c.timerSet = true
			c.timer.Reset(DeferLimit)
		}
		c.mu.Unlock()
		return nil
	}
	c.flushing = true
	c.mu.Unlock()
	// A sender whose message brings no descriptors need not wait for a
	// full socket: it hands the rest of the writing to a goroutine, and
	// what others send meanwhile queues (and goes in as few datagrams).
	// One whose descriptors are the caller's writes them before it
	// returns.
	return c.flush(len(fds) == 0)
}

// endedLocked is the error every send gets once the connection closed or
// a write failed; c.mu held.
func (c *Conn) endedLocked() error {
	switch {
	case c.closed:
		return fmt.Errorf("send: %w", net.ErrClosed)
	case c.err != nil:
		return c.err
	}
	return nil
}

// deferredDue sends the deferred messages that waited DeferLimit, unless a
// send in progress takes them.
func (c *Conn) deferredDue() {
	c.mu.Lock()
	c.timerSet = false
	if c.flushing || c.closed || c.err != nil || len(c.q.frames) == 0 {
		c.mu.Unlock()
		return
	}
	c.flushing = true
	c.mu.Unlock()
	_ = c.flush(false) // a failed write is every later send's error
}

// Flush writes what is queued, deferred messages included, and returns
// once the queue is empty.
func (c *Conn) Flush() error {
	c.mu.Lock()
	for c.flushing {
		c.idle.Wait()
	}
	if err := c.endedLocked(); err != nil || len(c.q.frames) == 0 {
		c.mu.Unlock()
		return err
	}
	c.flushing = true
	c.mu.Unlock()
	return c.flush(false)
}

// flush writes the queue until it is empty, by the one sender that set
// c.flushing; it returns the error that stopped it, if any. With handOff,
// a write that finds the socket full leaves the rest to a goroutine
// (finish), which goes on as the sender, and flush returns at once.
func (c *Conn) flush(handOff bool) error {
	for {
		c.mu.Lock()
		err := c.endedLocked()
		if err != nil || len(c.q.frames) == 0 {
			if err != nil {
				closeAll(c.q.owned)
				c.q.reset()
			}
			c.flushing = false
			c.mu.Unlock()
			c.idle.Broadcast()
			return err
		}
		c.q, c.spare = c.spare, c.q
		if c.timerSet {
			c.timer.Stop()
			c.timerSet = false
		}
		c.mu.Unlock()
		c.idle.Broadcast()
		next, err := c.write(&c.spare, 0, handOff)
		if handOff && errors.Is(err, unix.EAGAIN) {
			go c.finish(next)
			return nil
		}
		c.written(err)
	}
}

// finish writes the frames of c.spare from the from'th on, blocking, then
// goes on writing the queue: the sender a full socket handed off to.
func (c *Conn) finish(from int) {
	_, err := c.write(&c.spare, from, false)
	c.written(err)
	_ = c.flush(false) // a failed write is every later send's error
}

// written ends the writing of c.spare, with the error that stopped it.
func (c *Conn) written(err error) {
	closeAll(c.spare.owned)
	c.spare.reset()
	if err != nil {
		c.mu.Lock()
		if c.err == nil {
			c.err = fmt.Errorf("send: %w", err)
		}
		c.mu.Unlock()
	}
}

// write writes the frames of q from the from'th on in as few datagrams as
// hold them, and returns the index of the first frame not written. With
// dontWait, a full socket stops it with unix.EAGAIN instead of waiting.
func (c *Conn) write(q *sendQueue, from int, dontWait bool) (int, error) {
	start, fdStart := 0, 0
	if from > 0 {
		start = q.frames[from-1].end
		for _, f := range q.frames[:from] {
			fdStart += f.nfds
		}
	}
	for i := from; i < len(q.frames); {
		first := i
		end, nfds := start, 0
		for ; i < len(q.frames); i++ {
			f := q.frames[i]
			if end > start && (f.end-start > MaxDatagram || nfds+f.nfds > MaxFiles) {
				break
			}
			end, nfds = f.end, nfds+f.nfds
		}
		var oob []byte
		if nfds > 0 {
			oob = unix.UnixRights(q.fds[fdStart : fdStart+nfds]...)
		}
		if err := c.writeMsg(q.buf[start:end], oob, dontWait); err != nil {
			return first, err
		}
		start, fdStart = end, fdStart+nfds
	}
	return len(q.frames), nil
}

// writeMsg writes one datagram; with dontWait, unix.EAGAIN when the
// socket is full. The socket is not in the runtime's poller (Ends), so a
// full one is waited for here, in poll(2), until it has room or the Conn
// closed.
func (c *Conn) writeMsg(b, oob []byte, dontWait bool) error {
	for {
		var werr error
		err := c.wc.Write(func(fd uintptr) bool {
			werr = unix.Sendmsg(int(fd), b, oob, nil, unix.MSG_DONTWAIT)
			return true
		})
		switch {
		case err != nil: // the socket closed
			return net.ErrClosed
		case werr != unix.EAGAIN || dontWait:
			return werr
		}
		if err := c.waitRoom(); err != nil {
			return err
		}
	}
}

// roomPoll is how long writeMsg waits in poll(2) at a time for a full
// socket to have room, before it checks that the Conn is still open (Close
// also wakes it, through Conn.stop).
const roomPoll = 100 * time.Millisecond

// waitRoom waits until the socket written has room, at most roomPoll, or
// fails once the Conn closed.
func (c *Conn) waitRoom() error {
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	if closed {
		return net.ErrClosed
	}
	var perr error
	err := c.wc.Control(func(wfd uintptr) {
		err := c.stopc.Control(func(sfd uintptr) {
			fds := []unix.PollFd{{Fd: int32(wfd), Events: unix.POLLOUT}, {Fd: int32(sfd), Events: unix.POLLIN}}
			_, perr = unix.Poll(fds, int(roomPoll/time.Millisecond))
		})
		if err != nil {
			perr = net.ErrClosed
		}
	})
	if err != nil || perr == net.ErrClosed {
		return net.ErrClosed
	}
	if perr != nil && perr != unix.EINTR {
		return perr
	}
	return nil
}

// Recv receives the next message into buf (MaxDatagram bytes are enough)
// and returns it with the descriptors that came with it, which the caller
// owns. The message is valid until the next Recv. It returns io.EOF once
// the other end closed. A datagram cut short (buf too small), with more
// descriptors than MaxFiles, or whose frames do not parse is an error; its
// descriptors are closed.
func (c *Conn) Recv(buf []byte) ([]byte, []int, error) {
	if len(c.pending) > 0 {
		f := c.pending[0]
		c.pending = c.pending[1:]
		return f.Msg, f.Files, nil
	}
	n, oobn, flags, _, err := c.r.ReadMsgUnix(buf, c.oob)
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
	frames, err := SplitFrames(c.frames[:0], buf[:n], fds)
	if err != nil {
		return nil, nil, err
	}
	c.frames = frames
	c.pending = frames[1:]
	return frames[0].Msg, frames[0].Files, nil
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
