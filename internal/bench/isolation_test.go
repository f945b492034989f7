package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/tritonhost/tritonhost/client"
	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// The isolation benchmarks (issue 31) measure what running a backend in a
// worker process (--backend-isolation process, here each model's
// tritonhost_isolation parameter) costs against the same backend in the
// server's process: one server serves each model twice, once in process
// ("identity_int32", "square_int32") and once isolated ("identity_iso",
// "square_iso"), and each op measures both, one after the other, with the
// same client. The ratio is isolated over in process; the goals are the
// issue's (identity unary c16 >= 0.8, square one stream >= 0.7, 64 MiB
// identity >= 0.9). The CPU time per item is the server's and its
// workers' together. BenchmarkIsolationRestart times a worker's crash to
// its model serving again (goal: under a second plus the backend's own
// initialisation).

// isolatedParam isolates a model.
const isolatedParam = `parameters [ { key: "tritonhost_isolation" value: { string_value: "process" } } ]` + "\n"

// startIsolationServer serves the example identity and square models in
// process and isolated, and the crash test backend isolated, with args.
func startIsolationServer(b *testing.B, args ...string) *process {
	b.Helper()
	root := testenv.RepoRoot(b)
	copyOf := func(model, name, extra string) testenv.Model {
		cfg := strings.Replace(testenv.ExampleConfig(b, model), fmt.Sprintf("name: %q", model), fmt.Sprintf("name: %q", name), 1)
		return testenv.Model{Name: name, Config: cfg + extra}
	}
	crash := testenv.SharedLibrary(b, "triton_crash", filepath.Join(root, "cmd", "tritonhost", "testdata", "crash.c"))
	// crash.c answers IN = 0 with OUT = 0 and crashes its process on IN = 1.
	crashCfg := `name: "crash"
backend: "crash"
max_batch_size: 0
input [ { name: "IN" data_type: TYPE_INT32 dims: [ 1 ] } ]
output [ { name: "OUT" data_type: TYPE_INT32 dims: [ 1 ] } ]
instance_group [ { count: 1 kind: KIND_CPU } ]
` + isolatedParam
	repo := testenv.Repository(b,
		copyOf("identity_int32", "identity_int32", ""), copyOf("identity_int32", "identity_iso", isolatedParam),
		copyOf("square_int32", "square_int32", ""), copyOf("square_int32", "square_iso", isolatedParam),
		testenv.Model{Name: "crash", Config: crashCfg, Files: []string{crash}})
	bin, err := testenv.BuildServer(b.TempDir(), false)
	if err != nil {
		b.Fatal(err)
	}
	srv := testenv.StartServer(b, testenv.ServerConfig{Binary: bin, Repo: repo,
		Args: append([]string{"--allow-http=false", "--allow-metrics=false"}, args...)})
	return dialRaw(b, srv.Process, srv.Addr, srv.DebugAddr)
}

// familyCPU is the CPU time the server and its child processes (its
// workers) have used so far.
func (p *process) familyCPU(b *testing.B) time.Duration {
	total := p.cpuTime(b)
	for _, c := range childPIDs(p.proc.PID()) {
		total += pidCPU(c)
	}
	return total
}

// childPIDs lists pid's child processes.
func childPIDs(pid int) []int {
	files, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	var out []int
	for _, f := range files {
		data, _ := os.ReadFile(f)
		for _, s := range strings.Fields(string(data)) {
			if c, err := strconv.Atoi(s); err == nil {
				out = append(out, c)
			}
		}
	}
	return out
}

// pidCPU is the CPU time process pid has used (0 once it is gone).
func pidCPU(pid int) time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	fields := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+2:]))
	if len(fields) < 13 {
		return 0
	}
	var ticks int64
	for _, f := range fields[11:13] {
		n, _ := strconv.ParseInt(f, 10, 64)
		ticks += n
	}
	return time.Duration(ticks) * time.Second / clockTicks
}

// pair adds up both models' rates and CPU over a benchmark's ops.
type pair struct {
	inRate, isoRate float64
	inCPU, isoCPU   time.Duration
	inN, isoN       float64
	ratios          []float64
}

// measure runs one op: the in-process model's measurement, then the
// isolated one's, each returning how many items took how long.
func (s *pair) measure(b *testing.B, p *process, in, iso func() (float64, time.Duration)) {
	c0 := p.familyCPU(b)
	n, d := in()
	c1 := p.familyCPU(b)
	m, e := iso()
	c2 := p.familyCPU(b)
	s.inRate += n / d.Seconds()
	s.isoRate += m / e.Seconds()
	s.inCPU, s.isoCPU = s.inCPU+c1-c0, s.isoCPU+c2-c1
	s.inN, s.isoN = s.inN+n, s.isoN+m
	s.ratios = append(s.ratios, (m/e.Seconds())/(n/d.Seconds()))
}

// report prints and reports the rates, their ratio (isolated over in
// process) and the CPU per item.
func (s *pair) report(b *testing.B, what, unit, item string) {
	ops := float64(len(s.ratios))
	in, iso := s.inRate/ops, s.isoRate/ops
	inUs, isoUs := float64(s.inCPU.Microseconds())/s.inN, float64(s.isoCPU.Microseconds())/s.isoN
	b.ReportMetric(in, "inprocess-"+unit)
	b.ReportMetric(iso, "isolated-"+unit)
	b.ReportMetric(iso/in, "ratio")
	b.ReportMetric(inUs, "inprocess-us/"+item)
	b.ReportMetric(isoUs, "isolated-us/"+item)
	fmt.Printf("%s: in process %.1f %s, isolated %.1f %s, ratio %.2f (ops: %s); CPU per %s (server and workers): in process %.2f us, isolated %.2f us\n",
		what, in, unit, iso, unit, iso/in, formatRatios(s.ratios), item, inUs, isoUs)
}

func formatRatios(rs []float64) string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = fmt.Sprintf("%.2f", r)
	}
	return strings.Join(out, " ")
}

// identityRequest is a ModelInfer request of model with an INT32 vector
// of n elements, encoded.
func identityRequest(b *testing.B, model string, n int) []byte {
	msg, err := client.Request{Model: model, Inputs: []client.Tensor{client.Int32s("INPUT0", []int64{int64(n)}, make([]int32, n)...)}}.Message()
	if err != nil {
		b.Fatal(err)
	}
	req, _ := proto.Marshal(msg)
	return req
}

// BenchmarkIsolation: the three throughput comparisons, isolated
// over in process, each op one window (or stream round) of each:
// identity unary at concurrency 16 (16 INT32 elements, 2-second windows),
// square k=10000 on one stream (responses per second), identity unary of
// 64 MiB at concurrency 2 (2-second windows).
func BenchmarkIsolation(b *testing.B) {
	p := startIsolationServer(b)
	const method = "/inference.GRPCInferenceService/ModelInfer"
	unary := func(req []byte, clients int) func() (float64, time.Duration) {
		return func() (float64, time.Duration) {
			n, d := unaryRun(b, p.conn, method, req, clients)
			return float64(n), d
		}
	}
	b.Run("IdentityUnaryC16", func(b *testing.B) {
		in, iso := unary(identityRequest(b, "identity_int32", 16), concurrency), unary(identityRequest(b, "identity_iso", 16), concurrency)
		in() // warm-up
		iso()
		var s pair
		for b.Loop() {
			s.measure(b, p, in, iso)
		}
		s.report(b, "identity unary at concurrency 16", "requests/s", "req")
	})
	b.Run("SquareStream", func(b *testing.B) {
		round := func(model string) func() (float64, time.Duration) {
			req, err := client.Request{Model: model, ID: "0", Inputs: []client.Tensor{client.Int32s("IN", []int64{1}, squareK)},
				Params: map[string]any{client.EmptyFinalParam: true}}.Message()
			if err != nil {
				b.Fatal(err)
			}
			raw, _ := proto.Marshal(req)
			return func() (float64, time.Duration) {
				return squareK + 1, streamRound(b, p.conn, "/inference.GRPCInferenceService/ModelStreamInfer", raw, squareK+1)
			}
		}
		in, iso := round("square_int32"), round("square_iso")
		in()
		iso()
		var s pair
		for b.Loop() {
			s.measure(b, p, in, iso)
		}
		s.report(b, "square k=10000 on one stream", "responses/s", "resp")
	})
	b.Run("Identity64MiB", func(b *testing.B) {
		in, iso := unary(identityRequest(b, "identity_int32", 16<<20), 2), unary(identityRequest(b, "identity_iso", 16<<20), 2)
		in()
		iso()
		var s pair
		for b.Loop() {
			s.measure(b, p, in, iso)
		}
		s.report(b, "identity unary 64MiB at concurrency 2", "requests/s", "req")
	})
}

// crashAndWait crashes the isolated model "crash" (its backend
// dereferences NULL on IN = 1) and returns how long it took from sending
// that request until a request succeeded again, polling every poll.
func crashAndWait(b *testing.B, c pb.GRPCInferenceServiceClient, poll time.Duration) time.Duration {
	call := func(v int32) error {
		ctx, cancel := context.WithTimeout(context.Background(), testenv.Patience)
		defer cancel()
		_, err := c.ModelInfer(ctx, &pb.ModelInferRequest{ModelName: "crash", Inputs: []*pb.ModelInferRequest_InferInputTensor{
			{Name: "IN", Datatype: "INT32", Shape: []int64{1}, Contents: &pb.InferTensorContents{IntContents: []int32{v}}}}})
		return err
	}
	start := time.Now()
	if err := call(1); err == nil || !strings.Contains(err.Error(), "the model restarts") {
		b.Fatalf("IN = 1: %v, want the worker's end", err)
	}
	for time.Since(start) < testenv.Patience {
		if call(0) == nil {
			return time.Since(start)
		}
		time.Sleep(poll)
	}
	b.Fatalf("crash did not serve again within %v", testenv.Patience)
	return 0
}

// BenchmarkIsolationRestart: from a request that crashes an isolated
// backend's worker (a NULL dereference in execute) to the first request
// its model serves again, with the default restart backoff (100 ms) and
// with 1 ms, polling every millisecond. One op is one crash; the median
// of the ops is reported too.
func BenchmarkIsolationRestart(b *testing.B) {
	for _, backoff := range []string{"100", "1"} {
		b.Run("backoff"+backoff+"ms", func(b *testing.B) {
			p := startIsolationServer(b, "--backend-restart-backoff", backoff, "--backend-restart-backoff-max", backoff)
			conn, c, err := client.Dial(p.addr, 0)
			if err != nil {
				b.Fatal(err)
			}
			defer conn.Close()
			crashAndWait(b, c, time.Millisecond) // warm-up: page cache, the first restart
			var took []time.Duration
			for b.Loop() {
				took = append(took, crashAndWait(b, c, time.Millisecond))
			}
			slices.Sort(took)
			var sum time.Duration
			for _, d := range took {
				sum += d
			}
			mean, median := sum/time.Duration(len(took)), took[len(took)/2]
			b.ReportMetric(float64(mean.Microseconds())/1000, "crash-to-serving-ms")
			b.ReportMetric(float64(median.Microseconds())/1000, "median-crash-to-serving-ms")
			fmt.Printf("crash to serving again, restart backoff %s ms: mean %.1f ms, median %.1f ms, min %.1f ms, max %.1f ms over %d crashes\n",
				backoff, float64(mean.Microseconds())/1000, float64(median.Microseconds())/1000,
				float64(took[0].Microseconds())/1000, float64(took[len(took)-1].Microseconds())/1000, len(took))
		})
	}
}
