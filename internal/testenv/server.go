package testenv

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/tritonhost/tritonhost/client"
	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
)

// ServerBinaryEnv names the environment variable through which a test
// binary is given a tritonhost built beforehand, for test binaries run on a
// machine with no Go toolchain (a GPU machine that is lent only the built
// files). BuildServer returns its value, unbuilt and unchecked, when it is
// set.
const ServerBinaryEnv = "TRITONHOST_TEST_SERVER"

// BuildServer builds the tritonhost command into dir and returns the
// binary's path, or returns $TRITONHOST_TEST_SERVER when that is set
// (ServerBinaryEnv). race adds the race detector to the build.
func BuildServer(dir string, race bool) (string, error) {
	if bin := os.Getenv(ServerBinaryEnv); bin != "" {
		return bin, nil
	}
	return GoBuild(dir, "./cmd/tritonhost", race)
}

// GoBuild builds the command pkg (a path from the repository root, such
// as "./cmd/tritonhost") into dir and returns the binary's path. race adds
// the race detector to the build.
func GoBuild(dir, pkg string, race bool) (string, error) {
	bin := filepath.Join(dir, filepath.Base(pkg))
	args := []string{"build", "-o", bin}
	if race {
		args = append(args, "-race")
	}
	cmd := exec.Command("go", append(args, pkg)...)
	root, err := repoRootFromCaller()
	if err != nil {
		return "", err
	}
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
	}
	return bin, nil
}

// Server is a running `tritonhost serve` process.
type Server struct {
	*Process
	Addr      string // gRPC address
	HTTP      string // HTTP/REST address; "" when HTTP is off
	Metrics   string // metrics address; "" when metrics are off
	DebugAddr string // pprof address, when started with Diagnostics
	// Client is a connection to Addr, closed at cleanup.
	Client pb.GRPCInferenceServiceClient
}

// How the server announces each of its listeners.
var (
	grpcStartedRE    = regexp.MustCompile(`Started GRPCInferenceService at (\S+)`)
	httpStartedRE    = regexp.MustCompile(`Started HTTPService at (\S+)`)
	metricsStartedRE = regexp.MustCompile(`Started Metrics Service at (\S+)`)
	debugStartedRE   = regexp.MustCompile(`Started diagnostics \(pprof\) at (\S+)`)
)

// ServerConfig says how to start a server.
type ServerConfig struct {
	Binary string   // from BuildServer
	Repo   string   // model repository (the example models when empty)
	Args   []string // more serve flags
	Env    []string // the process's environment (nil: this process's)
	// Backends is the backend directory (default: the project's, built
	// by BackendDir). BackendsBesideBinary passes none instead, so the
	// server looks where an installation puts them, next to its bin/.
	Backends             string
	BackendsBesideBinary bool
	// Diagnostics serves pprof on a loopback port (Server.Goroutines).
	Diagnostics bool
	// NoWait returns as soon as the process runs, without waiting for it
	// to serve (for tests of start-up itself); the addresses stay empty.
	NoWait bool
	// Graceful ends the server at cleanup with Stop, which expects a clean
	// exit, instead of killing it.
	Graceful bool
}

// StartServer runs `tritonhost serve` on free loopback ports and waits
// until it serves gRPC, and HTTP and metrics unless Args turn them off
// (--allow-http=false, --allow-metrics=false). At cleanup the client
// connection closes and the process is stopped (Graceful) or killed, and
// its log is printed when the test failed.
func StartServer(t testing.TB, c ServerConfig) *Server {
	t.Helper()
	if c.Repo == "" {
		c.Repo = ExampleModels(t)
	}
	args := []string{"serve", "--model-repository", c.Repo,
		"--grpc-address", "127.0.0.1", "--grpc-port", "0",
		// HTTP and metrics on free loopback ports too, so that servers run
		// side by side.
		"--http-address", "127.0.0.1", "--http-port", "0", "--metrics-port", "0"}
	if !c.BackendsBesideBinary {
		if c.Backends == "" {
			c.Backends = BackendDir(t)
		}
		args = append(args, "--backend-directory", c.Backends)
	}
	if c.Diagnostics {
		args = append(args, "--debug-address", "127.0.0.1:0")
	}
	args = append(args, c.Args...)
	s := &Server{Process: StartProcess(t, c.Binary, c.Env, args...)}
	if c.NoWait {
		return s
	}
	if c.Diagnostics {
		s.DebugAddr = s.Await(t, "its diagnostics", debugStartedRE)[1]
	}
	s.Addr = s.Await(t, "serving gRPC", grpcStartedRE)[1]
	// HTTP and metrics start after gRPC.
	if !slices.Contains(args, "--allow-http=false") {
		s.HTTP = s.Await(t, "serving HTTP", httpStartedRE)[1]
	}
	if !slices.Contains(args, "--allow-metrics=false") {
		s.Metrics = s.Await(t, "serving metrics", metricsStartedRE)[1]
	}
	conn, stub, err := client.Dial(s.Addr, 0)
	if err != nil {
		t.Fatal(err)
	}
	s.Client = stub
	t.Cleanup(func() {
		conn.Close()
		if c.Graceful {
			s.Stop(t)
		}
	})
	return s
}

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
