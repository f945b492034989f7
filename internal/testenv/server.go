package testenv

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"

	"tritonhost/client"
	pb "tritonhost/frontend/inferencepb"
)

// BuildServer builds the tritonhost command into dir and returns the
// binary's path. race adds the race detector to the build.
func BuildServer(dir string, race bool) (string, error) {
	bin := filepath.Join(dir, "tritonhost")
	args := []string{"build", "-o", bin}
	if race {
		args = append(args, "-race")
	}
	cmd := exec.Command("go", append(args, "./cmd/tritonhost")...)
	root, err := repoRootFromCaller()
	if err != nil {
		return "", err
	}
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/tritonhost: %v\n%s", err, out)
	}
	return bin, nil
}

// Server is a running `tritonhost serve` process.
type Server struct {
	t         testing.TB
	cmd       *exec.Cmd
	Addr      string // gRPC address
	httpAddr  chan string
	DebugAddr string // pprof address, when started with WithDiagnostics
	log       *LogBuffer
	exited    chan struct{}
	waitErr   error
	exitedAt  time.Time
}

// LogBuffer collects a process's output; safe for concurrent use.
type LogBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *LogBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String returns everything written so far.
func (l *LogBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

var (
	grpcStartedRE  = regexp.MustCompile(`Started GRPCInferenceService at (\S+)`)
	httpStartedRE  = regexp.MustCompile(`Started HTTPService at (\S+)`)
	debugStartedRE = regexp.MustCompile(`Started diagnostics \(pprof\) at (\S+)`)
)

// ServerConfig says how to start a server.
type ServerConfig struct {
	Binary string   // from BuildServer
	Repo   string   // model repository (the example models when empty)
	Args   []string // more serve flags
	// Diagnostics serves pprof on a loopback port (Server.Goroutines).
	Diagnostics bool
	// NoWait returns as soon as the process runs, without waiting for it
	// to serve (for tests of start-up itself).
	NoWait bool
}

// StartServer runs `tritonhost serve` on free loopback ports and waits
// until it serves gRPC. At cleanup the process is killed if still running,
// and its log is printed when the test failed.
func StartServer(t testing.TB, c ServerConfig) *Server {
	t.Helper()
	if c.Repo == "" {
		c.Repo = ExampleModels(t)
	}
	args := []string{"serve", "--model-repository", c.Repo, "--backend-directory", BackendDir(t),
		"--grpc-address", "127.0.0.1", "--grpc-port", "0",
		// HTTP and metrics on free loopback ports too, so that servers run
		// side by side (pass --allow-http=false in Args to turn HTTP off).
		"--http-address", "127.0.0.1", "--http-port", "0", "--metrics-port", "0"}
	if c.Diagnostics {
		args = append(args, "--debug-address", "127.0.0.1:0")
	}
	s := &Server{t: t, cmd: exec.Command(c.Binary, append(args, c.Args...)...), log: &LogBuffer{}, exited: make(chan struct{})}
	pr, pw := io.Pipe()
	s.cmd.Stdout = s.log
	s.cmd.Stderr = io.MultiWriter(s.log, pw)
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("start tritonhost: %v", err)
	}
	go func() {
		s.waitErr = s.cmd.Wait()
		s.exitedAt = time.Now()
		pw.Close()
		close(s.exited)
	}()
	grpcAddr, debugAddr, httpAddr := make(chan string, 1), make(chan string, 1), make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			if m := grpcStartedRE.FindStringSubmatch(sc.Text()); m != nil {
				grpcAddr <- m[1]
			}
			if m := httpStartedRE.FindStringSubmatch(sc.Text()); m != nil {
				httpAddr <- m[1]
			}
			if m := debugStartedRE.FindStringSubmatch(sc.Text()); m != nil {
				debugAddr <- m[1]
			}
		}
		_, _ = io.Copy(io.Discard, pr)
	}()
	t.Cleanup(func() {
		s.Kill()
		if t.Failed() || os.Getenv("TESTLOG") != "" {
			t.Logf("server log:\n%s", s.log.String())
		}
	})
	if c.NoWait {
		return s
	}
	if c.Diagnostics {
		select {
		case s.DebugAddr = <-debugAddr:
		case <-s.exited:
			t.Fatalf("tritonhost exited before serving: %v\n%s", s.waitErr, s.log.String())
		case <-time.After(60 * time.Second):
			t.Fatalf("tritonhost did not start its diagnostics:\n%s", s.log.String())
		}
	}
	select {
	case s.Addr = <-grpcAddr:
	case <-s.exited:
		t.Fatalf("tritonhost exited before serving: %v\n%s", s.waitErr, s.log.String())
	case <-time.After(120 * time.Second):
		t.Fatalf("tritonhost did not start:\n%s", s.log.String())
	}
	s.httpAddr = httpAddr
	return s
}

// HTTPAddr returns the address the server serves HTTP on, once it says so
// (the test fails if it does not within a minute: HTTP is off).
func (s *Server) HTTPAddr(t testing.TB) string {
	t.Helper()
	select {
	case addr := <-s.httpAddr:
		s.httpAddr <- addr // for the next call
		return addr
	case <-time.After(60 * time.Second):
		t.Fatalf("tritonhost did not say where it serves HTTP:\n%s", s.log.String())
	}
	return ""
}

// Log returns the process's output so far.
func (s *Server) Log() string { return s.log.String() }

// PID returns the process id.
func (s *Server) PID() int { return s.cmd.Process.Pid }

// Dial opens a gRPC connection to the server, closed at cleanup.
func (s *Server) Dial(t testing.TB) (*grpc.ClientConn, pb.GRPCInferenceServiceClient) {
	t.Helper()
	conn, c, err := client.Dial(s.Addr, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn, c
}

// Signal sends sig to the process.
func (s *Server) Signal(sig os.Signal) {
	_ = s.cmd.Process.Signal(sig)
}

// Wait waits up to timeout for the process to exit and returns its exit
// status and when it exited; ok is false when it is still running.
func (s *Server) Wait(timeout time.Duration) (status int, at time.Time, ok bool) {
	select {
	case <-s.exited:
	case <-time.After(timeout):
		return 0, time.Time{}, false
	}
	var ee *exec.ExitError
	switch {
	case s.waitErr == nil:
		return 0, s.exitedAt, true
	case errors.As(s.waitErr, &ee):
		return ee.ExitCode(), s.exitedAt, true
	default:
		return -1, s.exitedAt, true
	}
}

// Exited reports whether the process has exited.
func (s *Server) Exited() bool {
	select {
	case <-s.exited:
		return true
	default:
		return false
	}
}

// Kill ends the process at once, if it still runs, and waits for it.
func (s *Server) Kill() {
	if s.Exited() {
		return
	}
	_ = s.cmd.Process.Kill()
	<-s.exited
}

// ProcStatus returns a field of /proc/<pid>/status as a number (kB values
// in bytes): "Threads", "VmRSS", "VmHWM".
func (s *Server) ProcStatus(t testing.TB, field string) int64 {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.PID()))
	if err != nil {
		t.Fatalf("read the server's status: %v", err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		name, rest, ok := strings.Cut(line, ":")
		if !ok || name != field {
			continue
		}
		f := strings.Fields(rest)
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			t.Fatalf("/proc status %s: %q", field, rest)
		}
		if len(f) > 1 && f[1] == "kB" {
			n *= 1024
		}
		return n
	}
	t.Fatalf("/proc status has no %s", field)
	return 0
}

// Goroutines returns the server's goroutine count, read from its pprof
// endpoint (the server must run with Diagnostics).
func (s *Server) Goroutines(t testing.TB) int {
	t.Helper()
	if s.DebugAddr == "" {
		t.Fatal("Goroutines needs a server started with Diagnostics")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+s.DebugAddr+"/debug/pprof/goroutine?debug=1", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("read the goroutine profile: %v", err)
	}
	defer resp.Body.Close()
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil {
		t.Fatalf("read the goroutine profile: %v", err)
	}
	// "goroutine profile: total N"
	f := strings.Fields(line)
	n, err := strconv.Atoi(f[len(f)-1])
	if err != nil {
		t.Fatalf("goroutine profile header %q", line)
	}
	return n
}

// repoRootFromCaller is RepoRoot for code without a testing.TB.
func repoRootFromCaller() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("go.mod not found above the working directory")
		}
		dir = parent
	}
}
