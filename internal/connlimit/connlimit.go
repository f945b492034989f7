// Package connlimit bounds the connections a server holds at once, so
// that a flood of connections cannot take the file descriptors the
// server's other endpoints and its models need, and the connections of
// one client (one source IP address), so that one client cannot take all
// of them from the others. Each endpoint (gRPC, HTTP, metrics) has a
// Limiter of its own.
package connlimit

import (
	"net"
	"net/http"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultReportInterval is Options.ReportInterval unless told otherwise.
const DefaultReportInterval = time.Minute

// DefaultPerClient is Options.PerClient unless told otherwise: a quarter
// of maxConns (at least 1), so that one client leaves three quarters of
// the connections to the others, and the connections a busy client keeps
// open are still far more than it needs (a gRPC client multiplexes its
// calls on one, an HTTP client pools a few).
func DefaultPerClient(maxConns int) int { return max(1, maxConns/4) }

// Options configure a Limiter.
type Options struct {
	// Max bounds the connections open at once (at least 1).
	Max int
	// PerClient bounds the connections of one client, by source IP
	// address (IPv4-mapped IPv6 addresses as IPv4), at once (0:
	// DefaultPerClient(Max); more than Max: Max, no share of its own). A
	// connection past its client's share is closed as soon as it is
	// accepted. Connections without an IP address (a Unix
	// socket, an in-memory pipe) have no client and only Max bounds them.
	PerClient int
	// OnFull, if not nil, is called when Accept finds every slot taken,
	// once until a slot is again free when asked for: to log that
	// connections wait.
	OnFull func()
	// OnClientFull, if not nil, is called when a connection past its
	// client's share is closed, at most once per ReportInterval: with that
	// client and how many connections past their clients' shares were
	// closed since the last call (this one included), to log it.
	OnClientFull func(client netip.Addr, refused int)
	// ReportInterval spaces the calls of OnClientFull (default
	// DefaultReportInterval).
	ReportInterval time.Duration
}

// Limiter bounds the connections accepted through the listeners it wraps.
// Accept takes a slot for each connection, which the connection gives back
// when it closes; with every slot taken, Accept waits. An http.Server that
// reports its connections' states to Track also has its idle kept-alive
// connections closed, one at a time, to make room for a connection that
// waits. The server must bound how long a connection that is not idle may
// hold its slot (its header, body and write timeouts; for gRPC, the
// handshake timeout, keepalive and the idle timeout), so that a slot
// always comes free. A client holding its share of the slots has its next
// connections closed at once, so the slots it does not hold stay for the
// others. Safe for concurrent use.
type Limiter struct {
	opts  Options
	slots chan struct{} // one token per open connection
	now   func() time.Time

	// awaited is whether waiting is open: Track, which runs twice per
	// HTTP request, takes mu only then.
	awaited atomic.Bool

	mu       sync.Mutex
	full     bool                      // Accept has waited since a slot was last free at once
	waits    int                       // times Accept has waited for a slot (for tests)
	conns    map[*limitedConn]struct{} // the open connections
	waiting  chan struct{}             // closed when a connection turns idle while Accept waits (nil when none waits)
	clients  map[netip.Addr]int        // open connections by client
	refused  int                       // connections past their client's share since the last report
	reported time.Time                 // when OnClientFull was last called
}

// New returns a limiter with opts.
func New(opts Options) *Limiter {
	opts.Max = max(opts.Max, 1)
	if opts.PerClient <= 0 {
		opts.PerClient = DefaultPerClient(opts.Max)
	}
	opts.PerClient = min(opts.PerClient, opts.Max)
	if opts.ReportInterval <= 0 {
		opts.ReportInterval = DefaultReportInterval
	}
	return &Limiter{opts: opts, slots: make(chan struct{}, opts.Max), now: time.Now,
		conns: map[*limitedConn]struct{}{}, clients: map[netip.Addr]int{}}
}

// Wrap returns lis with Accept bounded by the limiter.
func (l *Limiter) Wrap(lis net.Listener) net.Listener {
	return &limitedListener{Listener: lis, l: l, closed: make(chan struct{})}
}

// Open reports how many connections hold a slot.
func (l *Limiter) Open() int { return len(l.slots) }

// Track is an http.Server's ConnState hook: it tells the limiter which
// connections are idle, so that they can be closed to make room. It marks
// the connection alone, and takes the limiter's lock only while Accept
// waits for a connection to turn idle.
func (l *Limiter) Track(c net.Conn, st http.ConnState) {
	lc, ok := c.(*limitedConn)
	if !ok {
		return
	}
	idle := st == http.StateIdle
	lc.idle.Store(idle)
	// makeRoom sets awaited before it looks for an idle connection, and
	// this looks at awaited after marking the connection: either it finds
	// this connection idle, or this sees it waits (both atomics are
	// sequentially consistent).
	if idle && l.awaited.Load() {
		l.mu.Lock()
		if l.waiting != nil {
			close(l.waiting)
			l.waiting = nil
			l.awaited.Store(false)
		}
		l.mu.Unlock()
	}
}

// makeRoom closes one idle connection, if there is one, and returns a
// channel that is closed when a connection next turns idle. It looks at
// every open connection: it runs only while every slot is taken.
func (l *Limiter) makeRoom() <-chan struct{} {
	l.mu.Lock()
	if l.waiting == nil {
		l.waiting = make(chan struct{})
		l.awaited.Store(true)
	}
	var victim *limitedConn
	for c := range l.conns {
		if c.idle.CompareAndSwap(true, false) {
			victim = c
			break
		}
	}
	l.waits++
	next := l.waiting
	l.mu.Unlock()
	if victim != nil {
		victim.Close() // its slot comes free; the server sees the close
	}
	return next
}

// setFull records whether Accept found every slot taken, calling OnFull
// when the slots have just run out.
func (l *Limiter) setFull(full bool) {
	l.mu.Lock()
	changed := l.full != full
	l.full = full
	l.mu.Unlock()
	if full && changed && l.opts.OnFull != nil {
		l.opts.OnFull()
	}
}

// clientOf is the client of a connection from addr: its IP address, or
// the zero Addr when it has none.
func clientOf(addr net.Addr) netip.Addr {
	if tcp, ok := addr.(*net.TCPAddr); ok {
		return tcp.AddrPort().Addr().Unmap()
	}
	return netip.Addr{}
}

// admit counts c against its client's share and adds it to the open
// connections, or reports that the share is taken; a connection without a
// client is always admitted.
func (l *Limiter) admit(c *limitedConn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if c.client.IsValid() {
		if l.clients[c.client] >= l.opts.PerClient {
			return false
		}
		l.clients[c.client]++
	}
	l.conns[c] = struct{}{}
	return true
}

// release gives back a connection of client.
func (l *Limiter) release(client netip.Addr) {
	if !client.IsValid() {
		return
	}
	if l.clients[client]--; l.clients[client] <= 0 {
		delete(l.clients, client)
	}
}

// refuse counts a connection closed past its client's share, and reports
// it when the last report is at least ReportInterval old.
func (l *Limiter) refuse(client netip.Addr) {
	l.mu.Lock()
	l.refused++
	now := l.now()
	report := l.opts.OnClientFull != nil && (l.reported.IsZero() || now.Sub(l.reported) >= l.opts.ReportInterval)
	n := l.refused
	if report {
		l.refused, l.reported = 0, now
	}
	l.mu.Unlock()
	if report {
		l.opts.OnClientFull(client, n)
	}
}

type limitedListener struct {
	net.Listener
	l         *Limiter
	closeOnce sync.Once
	closed    chan struct{}
}

// Accept waits for a free slot, then for a connection, which it closes
// and does not return when its client already holds its share.
func (ll *limitedListener) Accept() (net.Conn, error) {
	for {
		if err := ll.takeSlot(); err != nil {
			return nil, err
		}
		c, err := ll.Listener.Accept()
		if err != nil {
			<-ll.l.slots
			return nil, err
		}
		client := clientOf(c.RemoteAddr())
		lc := &limitedConn{Conn: c, l: ll.l, client: client}
		if ll.l.admit(lc) {
			return lc, nil
		}
		c.Close()
		<-ll.l.slots
		ll.l.refuse(client)
	}
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

// limitedConn gives its slot, and its place in its client's share, back
// when it closes.
type limitedConn struct {
	net.Conn
	l      *Limiter
	client netip.Addr
	idle   atomic.Bool // between requests, as Track was told
	once   sync.Once
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		c.l.mu.Lock()
		delete(c.l.conns, c)
		c.l.release(c.client)
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
