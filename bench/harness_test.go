package bench

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"

	"tritonhost/internal/testenv"
)

// rawCodec hands gRPC frames through as bytes, so the client spends the
// same (near zero) time per message whichever server sent it. It keeps the
// name "proto" so servers decode requests with their protobuf codec.
type rawCodec struct{}

func (rawCodec) Marshal(v any) (mem.BufferSlice, error) {
	return mem.BufferSlice{mem.SliceBuffer(*v.(*[]byte))}, nil
}

func (rawCodec) Unmarshal(data mem.BufferSlice, v any) error {
	*v.(*[]byte) = data.Materialize()
	return nil
}

func (rawCodec) Name() string { return "proto" }

var _ encoding.CodecV2 = rawCodec{}

// process is a server started for a benchmark.
type process struct {
	cmd   *exec.Cmd
	addr  string
	debug string // tritonhost's --debug-address, when it announced one
	conn  *grpc.ClientConn
}

// diagnostics is how tritonhost announces its --debug-address, before its
// gRPC address.
var diagnostics = regexp.MustCompile(`Started diagnostics \(pprof\) at (\S+)`)

// startProcess builds (once) and starts a server, and waits for the line
// that announces its address.
func startProcess(b *testing.B, pkg string, announce *regexp.Regexp, args ...string) *process {
	b.Helper()
	bin := filepath.Join(b.TempDir(), filepath.Base(pkg))
	build := exec.Command("go", "build", "-o", bin, pkg)
	build.Dir = testenv.RepoRoot(b)
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("build %s: %v\n%s", pkg, err, out)
	}
	cmd := exec.Command(bin, args...)
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	addr := make(chan [2]string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		var debug string
		for sc.Scan() {
			if m := diagnostics.FindStringSubmatch(sc.Text()); m != nil {
				debug = m[1]
			}
			if m := announce.FindStringSubmatch(sc.Text()); m != nil {
				addr <- [2]string{m[1], debug}
			}
		}
	}()
	p := &process{cmd: cmd}
	select {
	case a := <-addr:
		p.addr, p.debug = a[0], a[1]
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		b.Fatalf("%s did not start", pkg)
	}
	conn, err := grpc.NewClient(p.addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.ForceCodecV2(rawCodec{}), grpc.MaxCallRecvMsgSize(256<<20), grpc.MaxCallSendMsgSize(256<<20)))
	if err != nil {
		b.Fatal(err)
	}
	p.conn = conn
	b.Cleanup(func() {
		conn.Close()
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); pw.Close(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
		}
	})
	return p
}

func startTritonhost(b *testing.B, args ...string) *process {
	return startProcess(b, "./cmd/tritonhost", regexp.MustCompile(`Started GRPCInferenceService at (\S+)`),
		append([]string{"serve", "--model-repository", testenv.ExampleModels(b), "--backend-directory", testenv.BackendDir(b),
			"--grpc-address", "127.0.0.1", "--grpc-port", "0", "--allow-http=false", "--allow-metrics=false"}, args...)...)
}

func startEcho(b *testing.B, args ...string) *process {
	return startProcess(b, "./bench/echoserver", regexp.MustCompile(`listening on (\S+)`), args...)
}

// report prints one line that states both rates and their ratio.
func report(b *testing.B, what, unit string, ours, ceiling float64) {
	b.ReportMetric(ours, "tritonhost-"+unit)
	b.ReportMetric(ceiling, "ceiling-"+unit)
	b.ReportMetric(ours/ceiling, "ratio")
	fmt.Fprintf(os.Stdout, "%s: tritonhost %.0f %s, grpc-go ceiling %.0f %s, ratio %.2f\n", what, ours, unit, ceiling, unit, ours/ceiling)
}
