package reliability

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// silentConn opens a connection to addr that sends nothing and returns how
// long the server kept it (limit when it was still open then).
func silentConn(addr string, limit time.Duration) time.Duration {
	start := time.Now()
	conn, err := net.DialTimeout("tcp", addr, limit)
	if err != nil {
		return min(time.Since(start), limit)
	}
	defer conn.Close()
	_ = conn.SetReadDeadline(start.Add(limit))
	_, _ = io.Copy(io.Discard, conn)
	return min(time.Since(start), limit)
}

// TestGRPCConnectionFloodIsBounded: clients that open gRPC connections and
// send nothing are closed at --grpc-handshake-timeout, and past
// --grpc-max-connections the server holds no more than that: the rest wait
// in the kernel's queue, the server logs that its connections are all
// taken, a client on a connection opened before the flood is served all
// the while, and a new client gets in once the flood's connections are
// cut. (Every client here is the loopback address: its share is the cap.)
func TestGRPCConnectionFloodIsBounded(t *testing.T) {
	const (
		maxConns  = 50
		handshake = time.Second
	)
	srv := start(t, "", "--grpc-max-connections", fmt.Sprint(maxConns), "--grpc-max-connections-per-client", fmt.Sprint(maxConns),
		"--grpc-handshake-timeout", fmt.Sprint(handshake.Milliseconds()))
	_, c := srv.Dial(t)
	if _, err := c.ServerLive(context.Background(), &pb.ServerLiveRequest{}); err != nil { // the bystander's connection is open
		t.Fatal(err)
	}
	base := openFiles(srv.PID())
	conns := scale(300, 2000)
	wave := handshake + 2*time.Second
	limit := time.Duration(conns/maxConns+2) * wave

	var by bystander
	stop := make(chan struct{})
	var watchers sync.WaitGroup
	watchers.Go(func() { by.run(context.Background(), unaryIdentity(c), 10*time.Millisecond, stop) })
	peak := peakOpenFiles(srv.PID(), stop)
	var (
		mu   sync.Mutex
		held []time.Duration
		wg   sync.WaitGroup
	)
	for range conns {
		wg.Go(func() {
			d := silentConn(srv.Addr, limit)
			mu.Lock()
			held = append(held, d)
			mu.Unlock()
		})
	}
	srv.AwaitOutput(t, "the log to say the connections are all taken", func(out string) bool {
		return strings.Contains(out, fmt.Sprintf("gRPC: all %d connections the server may hold are open", maxConns))
	})
	// A new client, while the flood holds every slot.
	newcomer := make(chan error, 1)
	var newcomerTook time.Duration
	go func() {
		begin := time.Now()
		_, nc := srv.Dial(t)
		ctx, cancel := context.WithTimeout(context.Background(), limit)
		defer cancel()
		_, err := nc.ServerLive(ctx, &pb.ServerLiveRequest{})
		newcomerTook = time.Since(begin)
		newcomer <- err
	}()
	wg.Wait()
	if err := <-newcomer; err != nil {
		t.Errorf("a client connecting during the flood: %v after %v", err, newcomerTook)
	}
	close(stop)
	watchers.Wait()
	peakFiles := peak()

	slices.Sort(held)
	if worst := held[len(held)-1]; worst >= limit {
		t.Errorf("a silent connection was held %v (bound %v)", worst, limit)
	}
	if peakFiles > base+maxConns+16 {
		t.Errorf("the server held %d open files, %d before the flood, with --grpc-max-connections %d", peakFiles, base, maxConns)
	}
	for _, err := range by.errs {
		t.Errorf("bystander call failed: %v", err)
	}
	calls, median, worst := by.summary()
	if calls == 0 || worst > 2*time.Second {
		t.Errorf("the bystander completed %d calls, the slowest in %v", calls, worst)
	}
	t.Logf("%d silent gRPC connections against --grpc-max-connections %d and --grpc-handshake-timeout %v: held median %v, max %v; open files peaked at %d (%d before); bystander %d calls median %v max %v; a new client was served after %v",
		conns, maxConns, handshake, held[len(held)/2].Round(time.Millisecond), held[len(held)-1].Round(time.Millisecond), peakFiles, base,
		calls, median, worst, newcomerTook.Round(time.Millisecond))
}

// TestMetricsConnectionsAreBounded: past --metrics-max-connections a
// scraper waits until a connection closes; an idle kept-alive scraper's
// connection is closed to make room for a new one.
func TestMetricsConnectionsAreBounded(t *testing.T) {
	srv := start(t, "", "--metrics-max-connections", "1")
	scrape := func(cl *http.Client, timeout time.Duration) error {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, "GET", "http://"+srv.Metrics+"/metrics", nil)
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
	// A connection in the middle of a request takes the only slot.
	stuck, err := net.Dial("tcp", srv.Metrics)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprint(stuck, "GET /metrics HTTP/1.1\r\n")
	srv.AwaitOutput(t, "the log to say the connections are all taken", func(out string) bool {
		return strings.Contains(out, "metrics: all 1 connections the endpoint may hold are open")
	})
	fresh := func() *http.Client { return &http.Client{Transport: &http.Transport{}} }
	if err := scrape(fresh(), 300*time.Millisecond); err == nil {
		t.Fatal("a scrape was served while the only connection slot was taken")
	}
	stuck.Close()
	idle := fresh()
	if err := scrape(idle, testenv.Patience); err != nil {
		t.Fatalf("a scrape once the slot came free: %v", err)
	}
	// idle's connection stays open, kept alive: a new scraper gets its slot.
	if err := scrape(fresh(), testenv.Patience); err != nil {
		t.Fatalf("a scrape while an idle kept-alive connection held the slot: %v", err)
	}
}
