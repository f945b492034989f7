package main

import (
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/spf13/pflag"
	"golang.org/x/sys/unix"

	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// parseServe parses args as serve's command line, with Triton's syntax,
// and returns the flags.
func parseServe(t *testing.T, args ...string) (*pflag.FlagSet, error) {
	t.Helper()
	f := newServeCommand().Flags()
	return f, f.Parse(tritonArgs(f, args))
}

// TestTritonSyntax: serve reads its command line as Triton's tritonserver
// does: a boolean option takes true, on, 1, false, off or 0, in any case,
// after "=" or as the next argument, and alone means true; --log-verbose
// takes true and false; --model-repository takes one path, commas and
// all, each time it is given.
func TestTritonSyntax(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args       []string
		flag, want string
	}{
		{[]string{"--allow-http", "false"}, "allow-http", "false"},
		{[]string{"--allow-http", "OFF"}, "allow-http", "false"},
		{[]string{"--allow-http=0"}, "allow-http", "false"},
		{[]string{"--allow-http=false", "--allow-http", "On"}, "allow-http", "true"},
		{[]string{"--allow-http"}, "allow-http", "true"},
		{[]string{"--strict-readiness", "False", "--id", "x"}, "strict-readiness", "false"},
		{[]string{"--exit-on-error", "1"}, "exit-on-error", "true"},
		{[]string{"--allow-client-shm", "false"}, "allow-client-shm", "false"},
		{[]string{"--reuse-grpc-port", "true"}, "reuse-grpc-port", "true"},
		{[]string{"--model-namespacing", "off"}, "model-namespacing", "false"},
		{[]string{"--model-namespacing", "true"}, "model-namespacing", "true"},
		{[]string{"--log-verbose=true"}, "log-verbose", "1"},
		{[]string{"--log-verbose", "false"}, "log-verbose", "0"},
		{[]string{"--log-verbose", "3"}, "log-verbose", "3"},
		{[]string{"--model-repository", "/m/a,b", "--model-repository=/m/c"}, "model-repository", "/m/a,b|/m/c"},
		{[]string{"--host-policy", "cpu,cpu-cores=0-1", "--host-policy=gpu_0,numa-node=0"}, "host-policy", "cpu,cpu-cores=0-1|gpu_0,numa-node=0"},
		{[]string{"--metrics-config", "counter_latencies=true"}, "metrics-config", "counter_latencies=true"},
	} {
		f, err := parseServe(t, tc.args...)
		if err != nil {
			t.Errorf("%q: %v", tc.args, err)
			continue
		}
		v := f.Lookup(tc.flag).Value
		got := v.String()
		if list, ok := v.(pflag.SliceValue); ok {
			got = strings.Join(list.GetSlice(), "|")
		}
		if got != tc.want {
			t.Errorf("%q: --%s is %s, want %s", tc.args, tc.flag, got, tc.want)
		}
		if rest := f.Args(); len(rest) > 0 {
			t.Errorf("%q: arguments %q left over", tc.args, rest)
		}
	}
	if _, err := parseServe(t, "--allow-http=maybe"); err == nil || !strings.Contains(err.Error(), "invalid value for bool option: maybe") {
		t.Errorf("--allow-http=maybe: %v, want Triton's refusal", err)
	}
}

// executeServe runs serve's command with args (a repository added) and
// returns its error; it must fail before serving.
func executeServe(t *testing.T, args ...string) error {
	t.Helper()
	cmd := newServeCommand()
	cmd.SetArgs(append([]string{"--model-repository", t.TempDir()}, args...))
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	return cmd.Execute()
}

// TestTritonFlagsRefuseBadValues: Triton's options are checked before the
// server starts, with Triton's words where it has them.
func TestTritonFlagsRefuseBadValues(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"stray"}, "Unexpected argument: stray"},
		{[]string{"--allow-http", "maybe"}, "Unexpected argument: maybe"},
		{[]string{"--no-such-option"}, "unknown flag: --no-such-option"},
		{[]string{"--model-config-name="}, "Error: empty argument for --model-config-name"},
		{[]string{"--model-config-name", "a b"}, "without spaces"},
		{[]string{"--model-config-name", "../x"}, "without spaces or /"},
		{[]string{"--model-load-thread-count=-1"}, "--model-load-thread-count must not be negative"},
		{[]string{"--model-load-retry-count=-1"}, "--model-load-retry-count must not be negative"},
		{[]string{"--grpc-infer-thread-count=1"}, "Must be in the range 2 to 128."},
		{[]string{"--grpc-infer-thread-count=129"}, "Must be in the range 2 to 128."},
		{[]string{"--grpc-infer-allocation-pool-size=-1"}, "must not be negative"},
		{[]string{"--grpc-infer-response-compression-level=max"}, "invalid argument for --grpc_infer_response_compression_level"},
		{[]string{"--grpc-max-connection-age=-1"}, "must not be negative"},
		{[]string{"--grpc-header-forward-pattern=("}, "--grpc-header-forward-pattern \"(\""},
		{[]string{"--http-header-forward-pattern=["}, "--http-header-forward-pattern \"[\""},
		{[]string{"--http-thread-count=0"}, "--http-thread-count must be positive"},
		{[]string{"--metrics-config=summary_latencies"}, "--metrics-config option format is <setting>=<value>. Got summary_latencies"},
		{[]string{"--metrics-config=a,b=c"}, "--metrics-config option format is <setting>=<value>"},
		{[]string{"--metrics-config=bogus=1"}, "unknown setting \"bogus\""},
		{[]string{"--metrics-config=summary_latencies=true"}, "this server reports no latency summaries"},
		{[]string{"--metrics-config=summary_quantiles=0.5:0.05"}, "this server reports no latency summaries"},
		{[]string{"--metrics-config=counter_latencies=false"}, "counters are always reported"},
		{[]string{"--metrics-config=histogram_latencies=maybe"}, "invalid value for bool option: maybe"},
		{[]string{"--host-policy=cpu"}, "--host-policy option format is '<policy name>,<setting>=<value>'. Got cpu"},
		{[]string{"--host-policy=cpu,cpu-cores="}, "--host-policy option format is"},
		{[]string{"--host-policy=cpu,cpu-cores=x"}, "is not a CPU number"},
		{[]string{"--host-policy=cpu,cpu-cores=3-1"}, "is not a range of CPUs"},
		{[]string{"--host-policy=cpu,cpu-cores=1000"}, "--host-policy cpu: cpu-cores [1000]"},
		{[]string{"--host-policy=cpu,cpu-cores=5000"}, "CPU 5000 is out of range"},
		{[]string{"--host-policy=cpu,numa-node=x"}, "is not a node number"},
		{[]string{"--model-load-gpu-limit=0"}, "Cannot parse pair option due to incorrect number of inputs."},
		{[]string{"--model-load-gpu-limit=0:1.5"}, "not within [0.0, 1.0]"},
		{[]string{"--model-load-gpu-limit=x:0.5"}, "Invalid option value. Got x"},
		{[]string{"--cuda-virtual-address-size=0"}, "Cannot parse pair option"},
		{[]string{"--cuda-virtual-address-size=0:-1"}, "Invalid option value. Got -1"},
		{[]string{"--sagemaker-safe-port-range=8000"}, "Cannot parse pair option"},
		{[]string{"--sagemaker-port=70000"}, "--sagemaker-port 70000 is out of range"},
		{[]string{"--vertex-ai-thread-count=0"}, "--vertex-ai-thread-count must be positive"},
		{[]string{"--buffer-manager-thread-count=-1"}, "--buffer-manager-thread-count must not be negative"},
		{[]string{"--allow-sagemaker", "true"}, "this server has no SageMaker endpoint"},
		{[]string{"--allow-vertex-ai=1"}, "--allow-vertex-ai=true: this server has no Vertex AI endpoint"},
		{[]string{"--log-file", filepath.Join(t.TempDir(), "missing", "server.log")}, "--log-file:"},
		{[]string{"--http-port=8123", "--grpc-port=8123"}, "The server cannot listen to HTTP requests and GRPC requests at the same address and port 0.0.0.0:8123"},
		{[]string{"--http-port=8123", "--metrics-port=8123", "--grpc-port=0"}, "HTTP requests and metrics requests at the same address and port"},
	} {
		err := executeServe(t, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.args, err, tc.want)
		}
	}
}

// TestVertexAIIsTritonsDefaultUnderAIPMode: where AIP_MODE=PREDICTION
// Triton serves Vertex AI by default, which this server refuses unless
// --allow-vertex-ai=false says to serve Triton's protocols.
func TestVertexAIIsTritonsDefaultUnderAIPMode(t *testing.T) {
	t.Setenv("AIP_MODE", "PREDICTION")
	t.Setenv("AIP_HTTP_PORT", "8085")
	if port := newServeCommand().Flags().Lookup("vertex-ai-port").DefValue; port != "8085" {
		t.Errorf("--vertex-ai-port defaults to %s under AIP_HTTP_PORT=8085", port)
	}
	if err := executeServe(t); err == nil || !strings.Contains(err.Error(), "AIP_MODE=PREDICTION") {
		t.Errorf("serve under AIP_MODE=PREDICTION: %v, want the Vertex AI refusal", err)
	}
	// The port check comes after the endpoints' in Validate: its error
	// shows that Vertex AI passed.
	if err := executeServe(t, "--allow-vertex-ai=false", "--http-port=8124", "--grpc-port=8124"); err == nil || !strings.Contains(err.Error(), "The server cannot listen") {
		t.Errorf("--allow-vertex-ai=false: %v, want the next check's error", err)
	}
}

// TestTritonOptionsCompleteTheOthers: --model-store adds repositories,
// a repository given twice counts once (Triton keeps a set), and
// --strict-model-config=true is --disable-auto-complete-config, which wins
// over --strict-model-config=false.
func TestTritonOptionsCompleteTheOthers(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args         []string
		repositories []string
		noComplete   bool
	}{
		{[]string{"--model-repository=/a"}, []string{"/a"}, false},
		{[]string{"--model-repository=/a", "--model-store=/b", "--model-repository=/a", "--model-store", "/c"}, []string{"/a", "/b", "/c"}, false},
		{[]string{"--model-store=/b"}, []string{"/b"}, false},
		{[]string{"--strict-model-config=true"}, nil, true},
		{[]string{"--strict-model-config=false"}, nil, false},
		{[]string{"--disable-auto-complete-config"}, nil, true},
		{[]string{"--disable-auto-complete-config", "--strict-model-config=false"}, nil, true},
	} {
		var s serveFlags
		f := pflag.NewFlagSet("serve", pflag.ContinueOnError)
		s.bind(f)
		if err := f.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		c, err := s.config()
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(c.Models.Repositories, tc.repositories) || c.Models.DisableAutoComplete != tc.noComplete {
			t.Errorf("%q: repositories %q, auto-complete disabled %v; want %q, %v", tc.args, c.Models.Repositories, c.Models.DisableAutoComplete, tc.repositories, tc.noComplete)
		}
	}
}

// reusablePort returns a free loopback port, held open with SO_REUSEPORT
// until the test ends, so that only sockets that set it too can listen
// there.
func reusablePort(t *testing.T) int {
	t.Helper()
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		if err := c.Control(func(fd uintptr) { serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEPORT, 1) }); err != nil {
			return err
		}
		return serr
	}}
	lis, err := lc.Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lis.Close() })
	return lis.Addr().(*net.TCPAddr).Port
}

// TestReusePortLetsServersShareAPort: with --reuse-grpc-port and
// --reuse-http-port (SO_REUSEPORT) two servers listen on the same gRPC and
// HTTP ports; without it a server cannot listen where they do.
func TestReusePortLetsServersShareAPort(t *testing.T) {
	t.Parallel()
	grpcPort, httpPort := strconv.Itoa(reusablePort(t)), strconv.Itoa(reusablePort(t))
	args := append(slices.Clone(withoutGPUs), "--grpc-port", grpcPort, "--http-port", httpPort, "--reuse-grpc-port", "true", "--reuse-http-port=true")
	var addrs []string
	for range 2 {
		s := testenv.StartServer(t, testenv.ServerConfig{Binary: serverBinary, Repo: t.TempDir(), Args: args, Graceful: true})
		addrs = append(addrs, s.Addr, s.HTTP)
	}
	if addrs[0] != addrs[2] || addrs[1] != addrs[3] {
		t.Errorf("the servers listen at %v, want the same two addresses", addrs)
	}
	out, err := serveOnce(t, append(slices.Clone(withoutGPUs), "--grpc-port", grpcPort)...)
	if err == nil || !strings.Contains(out, "address already in use") {
		t.Errorf("a server without --reuse-grpc-port on the shared port: %v\n%s", err, out)
	}
}

// serveOnce runs serve over an empty repository until it exits (it must
// fail to start) and returns its output.
func serveOnce(t *testing.T, args ...string) (string, error) {
	t.Helper()
	p := testenv.StartProcess(t, serverBinary, nil, append([]string{"serve", "--model-repository", t.TempDir(), "--http-port", "0", "--metrics-port", "0"}, args...)...)
	status, _, ok := p.Wait(testenv.StartPatience)
	if !ok {
		t.Fatalf("serve %q did not exit", args)
	}
	if status != 0 {
		return p.Log(), errExited(status)
	}
	return p.Log(), nil
}

type errExited int

func (e errExited) Error() string { return "exit status " + strconv.Itoa(int(e)) }

// TestAllowClientShmFalse: with --allow-client-shm=false the binary refuses
// to register shared memory, over HTTP and gRPC alike, and serves requests
// without it.
func TestAllowClientShmFalse(t *testing.T) {
	t.Parallel()
	s := startServer(t, "", append(slices.Clone(withoutGPUs), "--allow-client-shm", "false")...)
	status, _, body := s.httpCall(t, "POST", "/v2/systemsharedmemory/region/r/register", []byte(`{"key":"/k","byte_size":4}`))
	if status != http.StatusForbidden || !strings.Contains(string(body), "--allow-client-shm") {
		t.Errorf("register over HTTP: %d %s, want 403 naming --allow-client-shm", status, body)
	}
	_, err := s.Client.SystemSharedMemoryRegister(ctxFor(t), &pb.SystemSharedMemoryRegisterRequest{Name: "r", Key: "/k", ByteSize: 4})
	if err == nil || !strings.Contains(err.Error(), "PermissionDenied") {
		t.Errorf("register over gRPC: %v, want PERMISSION_DENIED", err)
	}
	s.echoes(t, "identity_int32", 1, 2, 3)
}

// TestAllowGRPCFalse: with --allow-grpc=false the server serves HTTP and
// metrics only.
func TestAllowGRPCFalse(t *testing.T) {
	t.Parallel()
	log := serveWith(t, t.TempDir(), []string{"--allow-grpc", "false"})
	if strings.Contains(log, "Started GRPCInferenceService") || !strings.Contains(log, "Started HTTPService") {
		t.Errorf("--allow-grpc=false: the server announced\n%s", log)
	}
}

// TestLogFileTakesTheLog: --log-file appends the log to the file (and
// writes none of it to the process's output; serveWith checks).
func TestLogFileTakesTheLog(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "server.log")
	if err := os.WriteFile(file, []byte("before\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	log := serveWith(t, t.TempDir(), []string{"--log-file", file})
	if !strings.HasPrefix(log, "before\n") || !strings.Contains(log, "Started HTTPService") {
		t.Errorf("--log-file: the file holds\n%s", log)
	}
}

// TestModelConfigNameOfTheBinary: with --model-config-name the server
// loads a model from configs/<name>.pbtxt (here: three instances) where
// the model has it, and from config.pbtxt otherwise.
func TestModelConfigNameOfTheBinary(t *testing.T) {
	t.Parallel()
	repo := t.TempDir()
	for _, name := range []string{"identity_int32", "simple"} {
		testenv.CopyTree(t, filepath.Join(testenv.ExampleModels(t), name), filepath.Join(repo, name))
	}
	base, err := os.ReadFile(filepath.Join(repo, "identity_int32", "config.pbtxt"))
	if err != nil {
		t.Fatal(err)
	}
	alt := strings.Replace(string(base), "count: 1 kind: KIND_CPU", "count: 3 kind: KIND_CPU", 1)
	if err := os.Mkdir(filepath.Join(repo, "identity_int32", "configs"), 0o755); err != nil {
		t.Fatal(err)
	}
	testenv.WriteFile(t, filepath.Join(repo, "identity_int32", "configs"), "h100.pbtxt", []byte(alt))
	s := startServer(t, repo, append(slices.Clone(withoutGPUs), "--model-config-name", "h100")...)
	for model, want := range map[string]string{"identity_int32": `"count":3`, "simple": `"count":1`} {
		status, _, body := s.httpCall(t, "GET", "/v2/models/"+model+"/config", nil)
		if status != http.StatusOK || !strings.Contains(string(body), want) {
			t.Errorf("%s: %d %s, want an instance group with %s", model, status, body, want)
		}
	}
	s.echoes(t, "identity_int32", 4, 5)
}
