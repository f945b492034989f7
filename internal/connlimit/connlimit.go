// Package connlimit bounds the connections a server holds at once, so
// that a flood of connections cannot take the file descriptors the
// server's other endpoints and its models need. Each endpoint (gRPC, HTTP,
// metrics) has a Limiter of its own.
package connlimit

import (
	"net"
	"net/http"
	"sync"
)

// Limiter bounds the connections accepted through the listeners it wraps.
// Accept takes a slot for each connection, which the connection gives back
// when it closes; with every slot taken, Accept waits. An http.Server that
// reports its connections' states to Track also has its idle kept-alive
// connections closed, one at a time, to make room for a connection that
// waits. The server must bound how long a connection that is not idle may
// hold its slot (its header, body and write timeouts; for gRPC, the
// handshake timeout, keepalive and the idle timeout), so that a slot
// always comes free. Safe for concurrent use.
type Limiter struct {
	slots  chan struct{} // one token per open connection
	onFull func()        // called when Accept starts to wait, once per time the slots run out

	mu      sync.Mutex
	full    bool                      // Accept has waited since a slot was last free at once
	idle    map[*limitedConn]struct{} // connections between requests
	waiting chan struct{}             // closed when a connection turns idle while Accept waits (nil when none waits)
}

// New returns a limiter of n connections (at least 1). onFull, if not
// nil, is called when Accept finds every slot taken, once until a slot is
// again free when asked for: to log that connections wait.
func New(n int, onFull func()) *Limiter {
	return &Limiter{slots: make(chan struct{}, max(n, 1)), onFull: onFull, idle: map[*limitedConn]struct{}{}}
}

// Wrap returns lis with Accept bounded by the limiter.
func (l *Limiter) Wrap(lis net.Listener) net.Listener {
	return &limitedListener{Listener: lis, l: l, closed: make(chan struct{})}
}

// Open reports how many connections hold a slot.
func (l *Limiter) Open() int { return len(l.slots) }

// Track is an http.Server's ConnState hook: it tells the limiter which
// connections are idle, so that they can be closed to make room.
func (l *Limiter) Track(c net.Conn, st http.ConnState) {
	lc, ok := c.(*limitedConn)
	if !ok {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if st == http.StateIdle {
		l.idle[lc] = struct{}{}
		if l.waiting != nil {
			close(l.waiting)
			l.waiting = nil
		}
		return
	}
	delete(l.idle, lc)
}

// makeRoom closes one idle connection, if there is one, and returns a
// channel that is closed when a connection next turns idle.
func (l *Limiter) makeRoom() <-chan struct{} {
	l.mu.Lock()
	var victim *limitedConn
	for c := range l.idle {
		victim = c
		delete(l.idle, c)
		break
	}
	if l.waiting == nil {
		l.waiting = make(chan struct{})
	}
	next := l.waiting
	l.mu.Unlock()
	if victim != nil {
		victim.Close() // its slot comes free; the server sees the close
	}
	return next
}

// setFull records whether Accept found every slot taken, calling onFull
// when the slots have just run out.
func (l *Limiter) setFull(full bool) {
	l.mu.Lock()
	changed := l.full != full
	l.full = full
	l.mu.Unlock()
	if full && changed && l.onFull != nil {
		l.onFull()
	}
}

type limitedListener struct {
	net.Listener
	l         *Limiter
	closeOnce sync.Once
	closed    chan struct{}
}

// Accept waits for a free slot, then for a connection.
func (ll *limitedListener) Accept() (net.Conn, error) {
	if err := ll.takeSlot(); err != nil {
		return nil, err
	}
	c, err := ll.Listener.Accept()
	if err != nil {
		<-ll.l.slots
		return nil, err
	}
	return &limitedConn{Conn: c, l: ll.l}, nil
}

// takeSlot takes a slot, closing idle connections to free one while every
// slot is taken, until the listener closes.
func (ll *limitedListener) takeSlot() error {
	for {
		select {
		case ll.l.slots <- struct{}{}:
			ll.l.setFull(false)
			return nil
		default:
		}
		ll.l.setFull(true)
		idle := ll.l.makeRoom()
		select {
		case ll.l.slots <- struct{}{}:
			return nil
		case <-idle: // one turned idle: close it on the next round
		case <-ll.closed:
			return net.ErrClosed
		}
	}
}

func (ll *limitedListener) Close() error {
	ll.closeOnce.Do(func() { close(ll.closed) })
	return ll.Listener.Close()
}

// limitedConn gives its slot back when it closes.
type limitedConn struct {
	net.Conn
	l    *Limiter
	once sync.Once
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		c.l.mu.Lock()
		delete(c.l.idle, c)
		c.l.mu.Unlock()
		<-c.l.slots
	})
	return err
}

// CloseWrite half-closes the connection when it can, as the http.Server
// does before closing one whose client may still be sending (so that the
// client reads the answer instead of a reset).
func (c *limitedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
