// Package connwatch enforces the read and write deadlines of a listener's
// connections from one goroutine that looks at all of them when the
// earliest deadline comes, so that setting a deadline costs a lock and a
// store instead of the runtime timer a net.Conn arms for each. An
// HTTP/1.1 server sets a connection's deadlines many times per request
// (the idle and header timeouts, the body's rate bound, the response's
// write bound, net/http's own clearing and aborting of its background
// read): on a loopback benchmark of small requests those timers took about
// 5% of the server's CPU samples.
//
// The watch sleeps until the earliest deadline of all, or one tick at
// least, and a deadline set earlier than it plans to look wakes it: a
// deadline in the future passes at most one tick late, and a server whose
// deadlines are far off (idle connections, requests with timeouts of
// seconds) wakes it seldom. A deadline that has passed (net/http aborts a
// read by setting one long ago) is set on the connection itself at once,
// as are the deadlines set after the listener has closed. When a deadline
// passes, the watch sets the connection's own deadline to that time, so a
// read or write in progress or to come fails with os.ErrDeadlineExceeded
// exactly as with net.Conn's deadlines, until a new deadline (or none) is
// set.
package connwatch

import (
	"math"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultTick is the least time between two looks of a watch at its
// connections unless told otherwise: how late a deadline may pass at most.
const DefaultTick = 10 * time.Millisecond

// Listener is a listener whose connections' deadlines one goroutine
// enforces. The goroutine runs while connections are open, and ends when
// the last one closes. Safe for concurrent use.
type Listener struct {
	net.Listener
	tick time.Duration
	// Times are kept in nanoseconds since epoch, the listener's making,
	// measured on the monotonic clock whenever the deadline carries a
	// reading of it (time.Now's do): a step of the wall clock neither
	// cuts connections at once nor lets them overstay, as with the
	// runtime's own deadlines.
	epoch time.Time
	// now is the time of the watch's last look: a deadline at or before
	// it has passed.
	now atomic.Int64
	// wakeAt is when the watch looks next (math.MaxInt64: when woken); a
	// deadline set before it wakes it.
	wakeAt atomic.Int64
	looks  atomic.Int64 // times the watch has looked (for tests)

	mu      sync.Mutex
	conns   map[*Conn]struct{}
	running bool          // the watch's goroutine runs
	kick    chan struct{} // wakes the watch: an earlier deadline, or the last connection closed
	closed  bool          // the listener closed: deadlines go on the connections
	expired []*Conn       // the watch's buffer of connections past a deadline
}

// Listen returns lis with its connections' deadlines enforced by a watch
// that looks at most once a tick (0: DefaultTick).
func Listen(lis net.Listener, tick time.Duration) *Listener {
	if tick <= 0 {
		tick = DefaultTick
	}
	l := &Listener{Listener: lis, tick: tick, epoch: time.Now(), conns: map[*Conn]struct{}{}, kick: make(chan struct{}, 1)}
	l.wakeAt.Store(math.MaxInt64)
	return l
}

// Accept returns the next connection, watched.
func (l *Listener) Accept() (net.Conn, error) {
	nc, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	c := &Conn{Conn: nc, l: l}
	l.mu.Lock()
	if l.closed {
		c.unwatched = true
	} else {
		l.conns[c] = struct{}{}
		if !l.running {
			l.running = true
			l.now.Store(l.clock())
			go l.watch()
		}
	}
	l.mu.Unlock()
	return c, nil
}

// Close closes the listener. Its open connections keep their deadlines,
// now set on the connections themselves.
func (l *Listener) Close() error {
	err := l.Listener.Close()
	l.mu.Lock()
	if !l.closed {
		l.closed = true
		for c := range l.conns {
			c.unwatch()
		}
		clear(l.conns)
		l.wake()
	}
	l.mu.Unlock()
	return err
}

// Watched reports how many connections the watch looks at (for tests).
func (l *Listener) Watched() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.conns)
}

// Looks reports how many times the watch has looked at its connections
// (for tests).
func (l *Listener) Looks() int64 { return l.looks.Load() }

// wake wakes the watch, if it sleeps, to look again.
func (l *Listener) wake() {
	select {
	case l.kick <- struct{}{}:
	default:
	}
}

// watch looks at the connections, sets the deadlines that have passed on
// them, and sleeps until the earliest of the others (one tick at least)
// or until woken, until no connection is left.
func (l *Listener) watch() {
	t := time.NewTimer(time.Hour)
	t.Stop()
	defer t.Stop()
	for {
		now := l.clock()
		l.now.Store(now)
		l.looks.Add(1)
		l.mu.Lock()
		if len(l.conns) == 0 {
			l.running = false
			l.wakeAt.Store(math.MaxInt64)
			l.mu.Unlock()
			return
		}
		expired := l.expired[:0]
		earliest := int64(math.MaxInt64)
		for c := range l.conns {
			if c.read.passed(now) || c.write.passed(now) {
				expired = append(expired, c)
			} else {
				earliest = min(earliest, c.read.pending(), c.write.pending())
			}
		}
		l.expired = expired
		l.mu.Unlock()
		for i, c := range expired {
			c.expire(now)
			expired[i] = nil
		}
		// A deadline set while the connections were looked at may be
		// earlier than the look planned from them, and its setter may
		// have read the plan before this one: publish the plan, then
		// look once more. Each deadline set from here on is either seen
		// by that look or sees the plan (both are sequentially
		// consistent atomics), and wakes the watch if earlier.
		at := l.plan(now, earliest)
		l.wakeAt.Store(at)
		l.mu.Lock()
		for c := range l.conns {
			earliest = min(earliest, c.read.pending(), c.write.pending())
		}
		l.mu.Unlock()
		if next := l.plan(now, earliest); next < at {
			at = next
			l.wakeAt.Store(at)
		}
		if at != math.MaxInt64 {
			t.Reset(time.Duration(at - now))
		}
		select {
		case <-t.C:
		case <-l.kick:
			t.Stop()
		}
	}
}

// clock returns the time now, since epoch.
func (l *Listener) clock() int64 { return int64(time.Since(l.epoch)) }

// timeAt returns the time t since epoch (with the monotonic reading epoch
// has).
func (l *Listener) timeAt(t int64) time.Time { return l.epoch.Add(time.Duration(t)) }

// plan returns when to look next, seen at now, for the earliest deadline
// (math.MaxInt64 for none: when woken).
func (l *Listener) plan(now, earliest int64) int64 {
	if earliest == math.MaxInt64 {
		return earliest
	}
	return max(earliest, now+int64(l.tick))
}

// Conn is a watched connection. Its deadlines are enforced by its
// listener's watch; everything else is the connection's own.
type Conn struct {
	net.Conn
	l *Listener

	mu        sync.Mutex // orders the deadlines' changes with the watch's expiring them
	read      deadline
	write     deadline
	unwatched bool // deadlines go on the connection at once
	closeOnce sync.Once
}

// deadline is one direction's deadline. due is written under Conn.mu and
// read by the watch without it.
type deadline struct {
	due atomic.Int64 // nanoseconds since the listener's epoch; 0: none, or set on the connection
	set bool         // a deadline is set on the connection itself
}

// passed reports whether the deadline is watched and has passed at now.
func (d *deadline) passed(now int64) bool {
	due := d.due.Load()
	return due != 0 && due <= now
}

// pending returns the watched deadline, or math.MaxInt64 for none.
func (d *deadline) pending() int64 {
	if due := d.due.Load(); due != 0 {
		return due
	}
	return math.MaxInt64
}

// SetReadDeadline sets the read deadline (the zero time: none).
func (c *Conn) SetReadDeadline(t time.Time) error {
	return c.setDeadline(&c.read, t, c.Conn.SetReadDeadline)
}

// SetWriteDeadline sets the write deadline (the zero time: none).
func (c *Conn) SetWriteDeadline(t time.Time) error {
	return c.setDeadline(&c.write, t, c.Conn.SetWriteDeadline)
}

// SetDeadline sets both deadlines.
func (c *Conn) SetDeadline(t time.Time) error {
	if err := c.SetReadDeadline(t); err != nil {
		return err
	}
	return c.SetWriteDeadline(t)
}

// setDeadline records t as d's deadline for the watch, or sets it on the
// connection with set when it has passed already (as the watch last saw
// the clock) or the connection is no longer watched; a deadline set on
// the connection before is taken off it.
func (c *Conn) setDeadline(d *deadline, t time.Time, set func(time.Time) error) error {
	var due int64 // 0: none; a deadline kept is after now, which is at least 0
	if !t.IsZero() {
		due = int64(t.Sub(c.l.epoch))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.unwatched || (!t.IsZero() && due <= c.l.now.Load()) {
		d.due.Store(0)
		d.set = !t.IsZero()
		return set(t)
	}
	d.due.Store(due)
	if due != 0 && due < c.l.wakeAt.Load() {
		c.l.wake()
	}
	if d.set {
		d.set = false
		return set(time.Time{})
	}
	return nil
}

// expire sets on the connection each deadline that has passed at now, if
// it was not changed since the watch saw it.
func (c *Conn) expire(now int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pinLocked(now)
}

// unwatch sets the connection's watched deadlines on it, for good.
func (c *Conn) unwatch() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.unwatched = true
	c.pinLocked(math.MaxInt64)
}

// pinLocked sets on the connection each watched deadline due at or before
// by, and stops watching it. c.mu is held.
func (c *Conn) pinLocked(by int64) {
	rd, wd := c.read.due.Load(), c.write.due.Load()
	pinRead, pinWrite := rd != 0 && rd <= by, wd != 0 && wd <= by
	if pinRead && pinWrite && (rd == wd || by != math.MaxInt64) {
		// Both in one call, as the runtime expires a read and a write
		// deadline of one time together: a reader woken by the one finds
		// the other passed too. (Passed deadlines of different times are
		// both passed: the later stands for both.)
		c.read.due.Store(0)
		c.write.due.Store(0)
		c.read.set, c.write.set = true, true
		_ = c.Conn.SetDeadline(c.l.timeAt(max(rd, wd))) // fails only on a closed connection
		return
	}
	pin := func(d *deadline, due int64, set func(time.Time) error) {
		d.due.Store(0)
		d.set = true
		_ = set(c.l.timeAt(due))
	}
	if pinRead {
		pin(&c.read, rd, c.Conn.SetReadDeadline)
	}
	if pinWrite {
		pin(&c.write, wd, c.Conn.SetWriteDeadline)
	}
}

// Close closes the connection and leaves the watch.
func (c *Conn) Close() error {
	err := c.Conn.Close()
	c.closeOnce.Do(func() {
		l := c.l
		l.mu.Lock()
		delete(l.conns, c)
		if len(l.conns) == 0 && l.running {
			l.wake()
		}
		l.mu.Unlock()
	})
	return err
}

// CloseWrite half-closes the connection when it can (net/http does before
// closing a connection whose client may still be sending).
func (c *Conn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
