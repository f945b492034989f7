package reliability

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tritonhost/tritonhost/internal/frontend/httpserver"
)

// openFiles counts the server's open file descriptors.
func openFiles(pid int) int {
	entries, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return -1
	}
	return len(entries)
}

// peakOpenFiles samples the server's open files every 20 ms until stop is
// closed, then returns the most it saw.
func peakOpenFiles(pid int, stop <-chan struct{}) (peak func() int) {
	var most atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			if n := int64(openFiles(pid)); n > most.Load() {
				most.Store(n)
			}
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	return func() int {
		<-done
		return int(most.Load())
	}
}

// stallBody opens a connection and sends an infer request whose body
// never arrives, the way kind says: "length" sends 10 of 1000 bytes,
// "chunked" one chunk and never the end, "trickle" a byte a second. It
// returns how long the server kept the connection (limit when it was
// still open then).
func stallBody(addr, kind string, limit time.Duration) time.Duration {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return 0
	}
	defer conn.Close()
	start := time.Now()
	head := "POST /v2/models/identity_int32/infer HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
	stop := make(chan struct{})
	defer close(stop)
	switch kind {
	case "length":
		fmt.Fprintf(conn, "%sContent-Length: 1000\r\n\r\n{\"inputs\":", head)
	case "chunked":
		fmt.Fprintf(conn, "%sTransfer-Encoding: chunked\r\n\r\na\r\n{\"inputs\":\r\n", head)
	case "trickle":
		fmt.Fprintf(conn, "%sContent-Length: 1000\r\n\r\n", head)
		go func() {
			for {
				if _, err := conn.Write([]byte{' '}); err != nil {
					return
				}
				select {
				case <-stop:
					return
				case <-time.After(time.Second): // the client's pace
				}
			}
		}()
	}
	_ = conn.SetReadDeadline(start.Add(limit))
	_, _ = io.Copy(io.Discard, conn)
	return min(time.Since(start), limit)
}

// httpIdentity is an infer request over HTTP on one kept-alive client.
func httpIdentity(addr string) func(context.Context) error {
	cl := &http.Client{Timeout: 60 * time.Second}
	body := []byte(`{"inputs":[{"name":"INPUT0","datatype":"INT32","shape":[4],"data":[1,2,3,4]}]}`)
	return func(ctx context.Context) error {
		req, _ := http.NewRequestWithContext(ctx, "POST", "http://"+addr+"/v2/models/identity_int32/infer", bytes.NewReader(body))
		resp, err := cl.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		if resp.StatusCode != 200 {
			return fmt.Errorf("status %d", resp.StatusCode)
		}
		return nil
	}
}

// stalledAttack runs conns clients whose bodies stall (a third each way)
// against srv while a gRPC and an HTTP bystander call identity_int32,
// and returns how long the server held each attacker and its peak of open
// files.
type attackReport struct {
	held        []time.Duration
	peakFiles   int
	grpc, httpb bystander
}

func stalledAttack(t *testing.T, srvPID int, grpcCall, httpCall func(context.Context) error, addr string, conns int, limit time.Duration) *attackReport {
	t.Helper()
	rep := &attackReport{}
	stop := make(chan struct{})
	var by sync.WaitGroup
	by.Go(func() { rep.grpc.run(context.Background(), grpcCall, 10*time.Millisecond, stop) })
	by.Go(func() { rep.httpb.run(context.Background(), httpCall, 10*time.Millisecond, stop) })
	peak := peakOpenFiles(srvPID, stop)
	var (
		mu sync.Mutex
		wg sync.WaitGroup
	)
	kinds := []string{"length", "chunked", "trickle"}
	for i := range conns {
		wg.Go(func() {
			d := stallBody(addr, kinds[i%len(kinds)], limit)
			mu.Lock()
			rep.held = append(rep.held, d)
			mu.Unlock()
		})
	}
	wg.Wait()
	close(stop)
	by.Wait()
	rep.peakFiles = peak()
	slices.Sort(rep.held)
	return rep
}

// check fails the test unless every stalled connection was cut within
// bound, no bystander call failed, gRPC bystander calls took at most two
// seconds (twice the body timeout: they wait on no attacker) and HTTP
// ones at most httpWait.
func (r *attackReport) check(t *testing.T, bound, httpWait time.Duration) {
	t.Helper()
	if worst := r.held[len(r.held)-1]; worst >= bound {
		t.Errorf("a stalled body held its connection %v (bound %v)", worst, bound)
	}
	for _, b := range []struct {
		name string
		b    *bystander
		wait time.Duration
	}{{"gRPC", &r.grpc, 2 * time.Second}, {"HTTP", &r.httpb, httpWait}} {
		for _, err := range b.b.errs {
			t.Errorf("%s bystander call failed: %v", b.name, err)
		}
		calls, _, worst := b.b.summary()
		if calls == 0 || worst > b.wait {
			t.Errorf("the %s bystander completed %d calls, the slowest in %v (bound %v)", b.name, calls, worst, b.wait)
		}
	}
}

func (r *attackReport) String() string {
	gc, gm, gx := r.grpc.summary()
	hc, hm, hx := r.httpb.summary()
	return fmt.Sprintf("stalled connections held median %v, max %v; server's open files peaked at %d; bystanders: gRPC %d calls median %v max %v, HTTP %d calls median %v max %v",
		r.held[len(r.held)/2].Round(time.Millisecond), r.held[len(r.held)-1].Round(time.Millisecond), r.peakFiles,
		gc, gm, gx, hc, hm, hx)
}

// TestStalledBodiesAreCutAndBystandersServed: clients that send a
// request's header and then stop, or send a chunked body without an end,
// or a byte a second, are disconnected at --http-read-body-timeout, while
// bystanders on gRPC and HTTP keep being served. Past
// --http-max-connections the server holds no more connections than that:
// the rest wait for the stalled ones to be cut, and gRPC is served all the
// while. (Every client here is the loopback address: its share is the
// cap.)
func TestStalledBodiesAreCutAndBystandersServed(t *testing.T) {
	const bodyTimeout = time.Second
	t.Run("below the connection bound", func(t *testing.T) {
		srv := start(t, "", "--http-read-body-timeout", "1000", "--http-max-connections-per-client", fmt.Sprint(httpserver.DefaultMaxConnections))
		_, c := srv.Dial(t)
		addr := srv.HTTP
		base := openFiles(srv.PID())
		conns := scale(1000, 3000)
		rep := stalledAttack(t, srv.PID(), unaryIdentity(c), httpIdentity(addr), addr, conns, 60*time.Second)
		rep.check(t, bodyTimeout+10*time.Second, 2*bodyTimeout)
		t.Logf("%d stalled bodies (--http-read-body-timeout %v): %v; open files before %d", conns, bodyTimeout, rep, base)
	})
	t.Run("past the connection bound", func(t *testing.T) {
		const maxConns = 100
		srv := start(t, "", "--http-read-body-timeout", "1000", "--http-max-connections", fmt.Sprint(maxConns),
			"--http-max-connections-per-client", fmt.Sprint(maxConns))
		_, c := srv.Dial(t)
		addr := srv.HTTP
		base := openFiles(srv.PID())
		conns := scale(300, 1000)
		rep := stalledAttack(t, srv.PID(), unaryIdentity(c), httpIdentity(addr), addr, conns, 60*time.Second)
		// Each wave of maxConns is cut after the body timeout: the last
		// attacker waits for the waves before it.
		// An HTTP bystander waits, as an attacker does, for a slot.
		wave := bodyTimeout + 2*time.Second
		rep.check(t, time.Duration(conns/maxConns+1)*wave, 2*wave)
		if rep.peakFiles > base+maxConns+16 {
			t.Errorf("the server held %d open files, %d before the attack, with --http-max-connections %d", rep.peakFiles, base, maxConns)
		}
		t.Logf("%d stalled bodies against --http-max-connections %d: %v; open files before %d", conns, maxConns, rep, base)
	})
}

// TestHTTPMemoryFollowsBytesReceived: a Content-Length is a promise, not
// bytes. Clients that declare the largest body the server takes and send 4
// bytes of it hold a small buffer each, not the length they declared.
func TestHTTPMemoryFollowsBytesReceived(t *testing.T) {
	t.Parallel()
	srv := start(t, "")
	const (
		clients  = 8
		declared = 60 << 20 // under the default bound of 64 MiB
	)
	before := srv.ProcStatus(t, "VmRSS")
	head := fmt.Sprintf("POST /v2/models/identity_int32/infer HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n{\"in", declared)
	for range clients {
		conn, err := net.Dial("tcp", srv.HTTP)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if _, err := conn.Write([]byte(head)); err != nil {
			t.Fatal(err)
		}
	}
	// A request after them is answered: by then each of theirs has been
	// read as far as it came. The peak is sampled for a second after.
	if err := httpIdentity(srv.HTTP)(t.Context()); err != nil {
		t.Fatalf("a bystander: %v", err)
	}
	var peak int64
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		peak = max(peak, srv.ProcStatus(t, "VmRSS"))
	}
	grew := peak - before
	t.Logf("%d clients declaring %d MiB each, 4 bytes sent: RSS %d MiB -> peak %d MiB", clients, declared>>20, before>>20, peak>>20)
	if grew > 64<<20 {
		t.Errorf("RSS grew by %d MiB for %d bytes received: the server allocates what a header promises", grew>>20, 4*clients)
	}
}
