package objstoretest

import (
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
)

// Proxy relays TCP connections to a server, and can make the server seem
// to stop answering in the middle of a download: once Stall is called,
// a connection that relays more than stallAfter bytes of the server's
// answers stops relaying them (and holds the connection open), while
// small answers (listings) still pass.
type Proxy struct {
	lis    net.Listener
	target string
	armed  atomic.Int64 // Stall's generation; 0: relaying everything
	wg     sync.WaitGroup

	mu    sync.Mutex
	conns []net.Conn
}

// stallAfter is what a connection relays after Stall before it stops.
const stallAfter = 256 << 10

// StartProxy relays connections on a loopback port to the store's server,
// until the test ends.
func StartProxy(t testing.TB, s *Store) *Proxy {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, "proxy", err)
	p := &Proxy{lis: lis, target: s.direct}
	p.wg.Go(p.accept)
	t.Cleanup(p.close)
	return p
}

// Addr is the proxy's host:port.
func (p *Proxy) Addr() string { return p.lis.Addr().String() }

// Stall makes large answers stop part way (see Proxy).
func (p *Proxy) Stall() { p.armed.Add(1) }

func (p *Proxy) accept() {
	for {
		c, err := p.lis.Accept()
		if err != nil {
			return
		}
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, up)
		p.mu.Unlock()
		p.wg.Go(func() { _, _ = io.Copy(up, c); closeWrite(up) })
		p.wg.Go(func() { p.relay(c, up) })
	}
}

// relay copies the server's answers to the client, stalling once armed.
func (p *Proxy) relay(client, server net.Conn) {
	buf := make([]byte, 32<<10)
	var gen, since int64
	for {
		n, err := server.Read(buf)
		if g := p.armed.Load(); g != gen {
			gen, since = g, 0
		}
		if gen != 0 {
			since += int64(n)
			if since > stallAfter {
				_, _ = io.Copy(io.Discard, server) // nothing more reaches the client
				return
			}
		}
		if n > 0 {
			if _, werr := client.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			closeWrite(client)
			return
		}
	}
}

func closeWrite(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.CloseWrite()
	}
}

func (p *Proxy) close() {
	p.lis.Close()
	p.mu.Lock()
	for _, c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}
