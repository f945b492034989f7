package httpserver

import (
	"net"
	"net/http"
	"sync"
)

// connLimiter bounds the connections an http.Server holds
// (Options.MaxConnections). Accept takes a slot for each connection, which
// the connection gives back when it closes; with every slot taken, Accept
// waits, and closes an idle kept-alive connection (the server tracks which
// are idle through ConnState) to make room for the one waiting. The
// connections that are not idle are bounded in time by the server's
// header, body and write timeouts, so a slot always comes free.
type connLimiter struct {
	slots chan struct{} // one token per open connection

	mu      sync.Mutex
	idle    map[*limitedConn]struct{} // connections between requests
	waiting chan struct{}             // closed when a connection turns idle while Accept waits (nil when none waits)
}

func newConnLimiter(max int) *connLimiter {
	return &connLimiter{slots: make(chan struct{}, max), idle: map[*limitedConn]struct{}{}}
}

// wrap returns lis with Accept bounded by the limiter.
func (l *connLimiter) wrap(lis net.Listener) net.Listener {
	return &limitedListener{Listener: lis, l: l, closed: make(chan struct{})}
}

// track is the http.Server's ConnState hook.
func (l *connLimiter) track(c net.Conn, st http.ConnState) {
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
func (l *connLimiter) makeRoom() <-chan struct{} {
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

type limitedListener struct {
	net.Listener
	l         *connLimiter
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
			return nil
		default:
		}
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
	l    *connLimiter
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
