package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"tritonhost/client"
	pb "tritonhost/internal/inferencepb"
	"tritonhost/internal/testenv"
)

// serverBinary is the tritonhost executable the integration tests run, built once
// by TestMain.
var serverBinary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "tritonhost-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	serverBinary = filepath.Join(dir, "tritonhost")
	args := []string{"build", "-o", serverBinary}
	if raceEnabled {
		args = append(args, "-race")
	}
	build := exec.Command("go", append(args, ".")...)
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build tritonhost:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// server is a running tritonhost process.
type server struct {
	t       *testing.T
	cmd     *exec.Cmd
	addr    string // gRPC
	http    string // HTTP/REST, "" when off
	metrics string // metrics, "" when off
	log     *syncBuffer
	exited  chan struct{}
	err     error
	client  pb.GRPCInferenceServiceClient
}

type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

var startedRE = regexp.MustCompile(`Started (GRPCInferenceService|HTTPService|Metrics Service) at (\S+)`)

// startServer runs `tritonhost serve` on a free loopback port over repo (the
// example models when empty) and waits until it is ready. At cleanup it
// sends SIGTERM and expects a clean exit.
func startServer(t *testing.T, repo string, extra ...string) *server {
	t.Helper()
	return startServerEnv(t, repo, nil, extra...)
}

// startServerEnv is startServer with the process environment env (nil:
// this process's).
func startServerEnv(t *testing.T, repo string, env []string, extra ...string) *server {
	t.Helper()
	if repo == "" {
		repo = testenv.ExampleModels(t)
	}
	args := append([]string{"serve", "--model-repository", repo, "--backend-directory", testenv.BackendDir(t),
		"--grpc-address", "127.0.0.1", "--grpc-port", "0", "--http-address", "127.0.0.1", "--http-port", "0",
		"--metrics-port", "0"}, extra...)
	cmd := exec.Command(serverBinary, args...)
	cmd.Env = env
	s := &server{t: t, cmd: cmd, log: &syncBuffer{}, exited: make(chan struct{})}
	pr, pw := io.Pipe()
	cmd.Stderr = io.MultiWriter(s.log, pw)
	cmd.Stdout = s.log
	if err := cmd.Start(); err != nil {
		t.Fatalf("start tritonhost: %v", err)
	}
	go func() {
		s.err = cmd.Wait()
		pw.Close()
		close(s.exited)
	}()
	addr := make(chan string, 1)
	var mu sync.Mutex
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			m := startedRE.FindStringSubmatch(sc.Text())
			switch {
			case m == nil:
			case m[1] == "GRPCInferenceService":
				addr <- m[2]
			case m[1] == "HTTPService":
				mu.Lock()
				s.http = m[2]
				mu.Unlock()
			default:
				mu.Lock()
				s.metrics = m[2]
				mu.Unlock()
			}
		}
		io.Copy(io.Discard, pr)
	}()
	select {
	case s.addr = <-addr:
		// HTTP and metrics start after gRPC: wait for those not turned off.
		waitUntil(t, "the HTTP and metrics endpoints", func() bool {
			mu.Lock()
			defer mu.Unlock()
			return (s.http != "" || slices.Contains(args, "--allow-http=false")) &&
				(s.metrics != "" || slices.Contains(args, "--allow-metrics=false"))
		})
	case <-s.exited:
		t.Fatalf("tritonhost exited before serving: %v\n%s", s.err, s.log.String())
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("tritonhost did not start:\n%s", s.log.String())
	}
	conn, c, err := client.Dial(s.addr, 0)
	if err != nil {
		t.Fatal(err)
	}
	s.client = c
	t.Cleanup(func() {
		conn.Close()
		s.stop()
		if t.Failed() || os.Getenv("TESTLOG") != "" {
			t.Logf("server log:\n%s", s.log.String())
		}
	})
	return s
}

// stop sends SIGTERM and waits for a clean exit.
func (s *server) stop() {
	s.t.Helper()
	select {
	case <-s.exited:
		return
	default:
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(60 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.exited
		s.t.Errorf("tritonhost did not exit after SIGTERM")
	}
	if s.err != nil {
		s.t.Errorf("tritonhost exited with %v", s.err)
	}
	if strings.Contains(s.log.String(), "DATA RACE") {
		s.t.Errorf("the server reported a data race")
	}
	if strings.Contains(s.log.String(), "still live at exit") {
		s.t.Errorf("the server leaked backend API objects")
	}
}

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// result is one streamed message, decoded.
type result struct {
	id    string
	final bool
	err   string
	outs  map[string][]int64
	names []string
}

func decode(t *testing.T, r client.Result) result {
	t.Helper()
	res := result{id: r.ID, final: r.Final, outs: map[string][]int64{}}
	if r.Err != nil {
		res.err = r.Err.Error()
	}
	if r.Response == nil {
		return res
	}
	outs, err := client.Outputs(r.Response)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range outs {
		vals, err := o.Values()
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range vals {
			switch v := v.(type) {
			case int64:
				res.outs[o.Name] = append(res.outs[o.Name], v)
			case uint64:
				res.outs[o.Name] = append(res.outs[o.Name], int64(v))
			}
		}
		res.names = append(res.names, o.Name)
	}
	return res
}

// collect reads a stream until EOF.
func collect(t *testing.T, s *client.Stream) []result {
	t.Helper()
	var out []result
	for {
		r, err := s.Recv()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("stream ended with %v after %d messages", err, len(out))
		}
		out = append(out, decode(t, r))
	}
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
