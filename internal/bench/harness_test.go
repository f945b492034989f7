package bench

import (
	"fmt"
	"os"
	"regexp"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"

	"github.com/tritonhost/tritonhost/internal/testenv"
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

// process is a server started for a benchmark, and a connection to it
// that hands frames through as bytes.
type process struct {
	proc  *testenv.Process
	addr  string
	debug string // the server's pprof address, when it serves one
	conn  *grpc.ClientConn
}

// debugStartedRE is how a server announces its pprof address, before its
// gRPC address.
var debugStartedRE = regexp.MustCompile(`Started diagnostics \(pprof\) at (\S+)`)

// startTritonhost builds and starts tritonhost on the example models,
// gRPC only, with pprof when diagnostics is set.
func startTritonhost(b *testing.B, diagnostics bool) *process {
	b.Helper()
	bin, err := testenv.BuildServer(b.TempDir(), false)
	if err != nil {
		b.Fatal(err)
	}
	srv := testenv.StartServer(b, testenv.ServerConfig{Binary: bin, Diagnostics: diagnostics,
		Args: []string{"--allow-http=false", "--allow-metrics=false"}})
	return dialRaw(b, srv.Process, srv.Addr, srv.DebugAddr)
}

// startEcho builds and starts the plain grpc-go server with args.
func startEcho(b *testing.B, args ...string) *process {
	b.Helper()
	bin, err := testenv.GoBuild(b.TempDir(), "./internal/bench/echoserver", false)
	if err != nil {
		b.Fatal(err)
	}
	p := testenv.StartProcess(b, bin, nil, args...)
	addr := p.Await(b, "echoserver to listen", regexp.MustCompile(`listening on (\S+)`))[1]
	var debug string
	if m := debugStartedRE.FindStringSubmatch(p.Log()); m != nil {
		debug = m[1]
	}
	return dialRaw(b, p, addr, debug)
}

// dialRaw connects to addr with the raw codec, closing the connection at
// cleanup.
func dialRaw(b *testing.B, proc *testenv.Process, addr, debug string) *process {
	b.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.ForceCodecV2(rawCodec{}), grpc.MaxCallRecvMsgSize(256<<20), grpc.MaxCallSendMsgSize(256<<20)))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { conn.Close() })
	return &process{proc: proc, addr: addr, debug: debug, conn: conn}
}

// report prints one line that states both rates and their ratio.
func report(b *testing.B, what, unit string, ours, ceiling float64) {
	b.ReportMetric(ours, "tritonhost-"+unit)
	b.ReportMetric(ceiling, "ceiling-"+unit)
	b.ReportMetric(ours/ceiling, "ratio")
	fmt.Fprintf(os.Stdout, "%s: tritonhost %.0f %s, grpc-go ceiling %.0f %s, ratio %.2f\n", what, ours, unit, ceiling, unit, ours/ceiling)
}

// reportHandoff reports the plain server's rate through a model server's
// hand-offs (echoserver's EchoHandoff and FanoutHandoff) beside the rates
// report gave: handoff-<unit>, ratio-vs-handoff (tritonhost's rate over
// it: what tritonhost adds to the hand-offs) and handoff-ratio (its rate
// over the plain method's: what the hand-offs cost in grpc-go, the Go
// runtime and the kernel), and its CPU time and voluntary context
// switches per item (handoff-us/<item>, handoff-cs/<item>).
func reportHandoff(b *testing.B, what, unit, item string, ours, handoff, ceiling float64, cpu *cpuMeter, items float64) {
	b.ReportMetric(handoff, "handoff-"+unit)
	b.ReportMetric(ours/handoff, "ratio-vs-handoff")
	b.ReportMetric(handoff/ceiling, "handoff-ratio")
	us, cs := float64(cpu.total.Microseconds())/items, float64(cpu.switches)/items
	b.ReportMetric(us, "handoff-us/"+item)
	b.ReportMetric(cs, "handoff-cs/"+item)
	fmt.Fprintf(os.Stdout, "%s: plain grpc-go through the hand-offs %.0f %s (%.2f us and %.2f context switches each), ratio to plain grpc-go %.2f; tritonhost's ratio to it %.2f\n",
		what, handoff, unit, us, cs, handoff/ceiling, ours/handoff)
}
