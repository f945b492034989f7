package reliability

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
)

// fromAddress is a dialer whose connections come from the loopback
// address from: Linux routes all of 127/8 to the loopback interface, so
// each address is a client of its own to the server.
func fromAddress(from string) *net.Dialer {
	return &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 10 * time.Second}
}

// hog opens n connections to addr from 127.0.0.1 that send nothing, and
// returns how many the server closed within a second of their opening,
// and a function that closes the rest.
func hog(t *testing.T, addr string, n int) (closedAtOnce int, release func()) {
	t.Helper()
	var (
		mu    sync.Mutex
		conns []net.Conn
		wg    sync.WaitGroup
	)
	for range n {
		c, err := fromAddress("127.0.0.1").Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		wg.Go(func() {
			_ = c.SetReadDeadline(time.Now().Add(time.Second))
			_, err := c.Read(make([]byte, 1))
			var ne net.Error
			if err != nil && !(errors.As(err, &ne) && ne.Timeout()) {
				mu.Lock()
				closedAtOnce++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return closedAtOnce, func() {
		for _, c := range conns {
			c.Close()
		}
	}
}

// TestOneClientCannotTakeEveryConnection: a client that opens three times
// as many silent connections as a port's cap, on each port, holds only its
// share of them (a quarter of the cap, by default): the server closes the
// rest as soon as it accepts them, and says so once in its log, while a
// second client (another address) is served at once on HTTP, gRPC and
// metrics, where before it waited in the kernel's queue behind the hog's
// connections until their header or handshake timeouts cut them (10 s).
func TestOneClientCannotTakeEveryConnection(t *testing.T) {
	t.Parallel()
	const (
		maxConns        = 40
		maxMetricsConns = 8
	)
	srv := start(t, "", "--http-max-connections", fmt.Sprint(maxConns), "--grpc-max-connections", fmt.Sprint(maxConns),
		"--metrics-max-connections", fmt.Sprint(maxMetricsConns))
	web := &http.Client{Transport: &http.Transport{DialContext: fromAddress("127.0.0.2").DialContext}, Timeout: time.Minute}
	get := func(url string) func() error {
		return func() error {
			resp, err := web.Get(url)
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
	conn, err := grpc.NewClient(srv.Addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
			return fromAddress("127.0.0.2").DialContext(ctx, "tcp", addr)
		}))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	grpcLive := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_, err := pb.NewGRPCInferenceServiceClient(conn).ServerLive(ctx, &pb.ServerLiveRequest{})
		return err
	}
	for _, ep := range []struct {
		name, addr, flag string
		max              int
		call             func() error
	}{
		{"HTTP", srv.HTTP, "--http-max-connections-per-client", maxConns, get("http://" + srv.HTTP + "/v2/health/live")},
		{"gRPC", srv.Addr, "--grpc-max-connections-per-client", maxConns, grpcLive},
		{"metrics", srv.Metrics, "--metrics-max-connections-per-client", maxMetricsConns, get("http://" + srv.Metrics + "/metrics")},
	} {
		t.Run(ep.name, func(t *testing.T) {
			share := ep.max / 4
			closed, release := hog(t, ep.addr, 3*ep.max)
			defer release()
			began := time.Now()
			err := ep.call()
			took := time.Since(began)
			t.Logf("one client opened %d silent connections against a cap of %d: %d closed at once (its share %d); another client was answered in %v (%v)",
				3*ep.max, ep.max, closed, share, took.Round(time.Millisecond), err)
			if err != nil || took > 3*time.Second {
				t.Errorf("the other client was answered in %v (%v); want at once, not after the hog's connections time out", took, err)
			}
			if want := 3*ep.max - share; closed != want {
				t.Errorf("%d of the hog's connections were closed at once, want %d: all past its share of %d", closed, want, share)
			}
			srv.AwaitOutput(t, "the log to name the client", func(log string) bool {
				return strings.Count(log, "client 127.0.0.1 holds all the connections one client may ("+ep.flag+")") == 1
			})
		})
	}
}
