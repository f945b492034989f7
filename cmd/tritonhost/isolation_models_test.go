package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/tritonhost/tritonhost/client"
	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// The tests of this file run Triton-style backends in worker processes
// (--backend-isolation process, or a model's tritonhost_isolation
// parameter) and check that clients see what they see of the same
// backends in the server's process.

// startIsolated serves repo (the example models when empty) with every
// backend in a worker process of its own.
func startIsolated(t *testing.T, repo string, extra ...string) *serverProcess {
	t.Helper()
	return startServer(t, repo, append([]string{"--backend-isolation", "process", "--backend-restart-backoff", "20"}, extra...)...)
}

// mapsLibrary reports whether process pid has the library lib mapped.
func mapsLibrary(pid int, lib string) bool {
	maps, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pid))
	return err == nil && bytes.Contains(maps, []byte(lib))
}

// checkIsolated checks that each of libs runs in a worker of srv's and
// not in srv itself.
func checkIsolated(t *testing.T, srv *serverProcess, libs ...string) {
	t.Helper()
	for _, lib := range libs {
		if mapsLibrary(srv.PID(), lib) {
			t.Errorf("the server's own process loaded %s", lib)
		}
		if workerHosting(t, srv.Server, lib) == 0 {
			t.Errorf("no worker process of the server loaded %s", lib)
		}
	}
}

// runExampleClient builds one of examples/clients and runs it against addr,
// returning its output.
func runExampleClient(t *testing.T, name, addr string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), name)
	build := exec.Command("go", "build", "-o", bin, "./examples/clients/"+name)
	build.Dir = testenv.RepoRoot(t)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build %s: %v\n%s", name, err, out)
	}
	out, err := exec.Command(bin, "-u", addr).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", name, err, out)
	}
	return string(out)
}

// TestIsolatedExampleClientsPass: the repeat and square example clients
// print PASS against a server whose backends all run in worker processes,
// as they do in process (TestExampleClientsPass).
func TestIsolatedExampleClientsPass(t *testing.T) {
	srv := startIsolated(t, "")
	checkIsolated(t, srv, "libtriton_repeat.so", "libtriton_square.so")
	for _, tc := range []struct {
		client string
		want   []string
	}{
		{"repeat_client", []string{"enqueued request 0 to stream...", `raw_output_contents: "\x04\x00\x00\x00"`, "PASS: repeat_int32"}},
		{"square_client", []string{"enqueued request 3 to stream...", `id: "3"`, "PASS: square_int32"}},
	} {
		t.Run(tc.client, func(t *testing.T) {
			out := runExampleClient(t, tc.client, srv.Addr)
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("%s output lacks %q:\n%s", tc.client, w, out)
				}
			}
		})
	}
}

// TestIsolatedModelsAnswerAsInProcess: identity (16 elements inline, and 1
// MiB, which crosses in shared memory both ways), addsub (the "simple"
// model, as Triton's simple_grpc_infer_client calls it) and the decoupled
// ensemble square_pipeline, whose steps identity_int32 and square_int32
// run in workers, answer exactly as in process.
func TestIsolatedModelsAnswerAsInProcess(t *testing.T) {
	srv := startIsolated(t, "")
	checkIsolated(t, srv, "libtriton_identity.so", "libtriton_addsub.so", "libtriton_square.so")
	ctx := ctxFor(t)
	for _, tc := range []struct {
		name string
		run  func(t *testing.T)
	}{
		{"identity, 16 elements", func(t *testing.T) {
			vals := []int32{0, 1, -1, 7, 1 << 30, -1 << 31, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14}
			msg, err := client.Request{Model: "identity_int32", Inputs: []client.Tensor{client.Int32s("INPUT0", []int64{16}, vals...)}}.Message()
			if err != nil {
				t.Fatal(err)
			}
			resp, err := srv.Client.ModelInfer(ctx, msg)
			if err != nil {
				t.Fatal(err)
			}
			if out := resp.GetOutputs(); len(out) != 1 || out[0].GetName() != "OUTPUT0" || out[0].GetDatatype() != "INT32" ||
				!slices.Equal(out[0].GetShape(), []int64{16}) || !bytes.Equal(resp.GetRawOutputContents()[0], msg.GetRawInputContents()[0]) {
				t.Errorf("identity_int32 answered %v", resp)
			}
		}},
		{"identity, 1 MiB", func(t *testing.T) {
			if err := identityMiB(srv); err != nil {
				t.Error(err)
			}
		}},
		{"addsub", func(t *testing.T) {
			var in0, in1, sum, diff []uint32
			for i := range 16 {
				in0, in1 = append(in0, uint32(i)), append(in1, 1)
				sum, diff = append(sum, uint32(int32(i)+1)), append(diff, uint32(int32(i)-1))
			}
			resp, err := srv.Client.ModelInfer(ctx, simpleRequest("simple", "INT32", words(in0), words(in1)))
			if err != nil {
				t.Fatal(err)
			}
			checkSimpleResponse(t, resp, "INT32", words(sum), words(diff))
		}},
		{"decoupled ensemble", func(t *testing.T) {
			s, err := client.OpenStream(ctx, srv.Client)
			if err != nil {
				t.Fatal(err)
			}
			ks := map[string]int32{"a": 3, "b": 0, "c": 2, "d": 1}
			for _, id := range []string{"a", "b", "c", "d"} {
				if err := s.Send(client.Request{Model: "square_pipeline", ID: id, Inputs: []client.Tensor{client.Int32s("IN", []int64{1}, ks[id])},
					Params: map[string]any{client.EmptyFinalParam: true}}); err != nil {
					t.Fatal(err)
				}
			}
			s.CloseSend()
			counts, finals := map[string]int32{}, map[string]int{}
			for _, r := range collect(t, s) {
				switch {
				case r.err != "":
					t.Fatalf("error response: %+v", r)
				case r.final:
					finals[r.id]++
					if counts[r.id] != ks[r.id] || len(r.names) != 0 {
						t.Errorf("the final of %s came after %d responses, or carries outputs %v", r.id, counts[r.id], r.names)
					}
				default:
					counts[r.id]++
					if !slices.Equal(r.outs["OUT"], []int64{int64(ks[r.id])}) {
						t.Errorf("a response to %s has OUT = %v, want [%d]", r.id, r.outs["OUT"], ks[r.id])
					}
				}
			}
			if fmt.Sprint(counts) != "map[a:3 c:2 d:1]" || fmt.Sprint(finals) != "map[a:1 b:1 c:1 d:1]" {
				t.Errorf("responses per request %v and finals %v, want map[a:3 c:2 d:1] and one final each", counts, finals)
			}
		}},
	} {
		t.Run(tc.name, tc.run)
	}
}

// TestIsolatedStreamCancellationReachesTheBackend: a client that cancels
// its stream cancels its requests in an isolated backend: square, in its
// worker, sees each request cancelled and records a cancelled response
// for it in its response statistics (which reach the server), as in
// process (TestCancelledStreamCancelsItsRequestsInTheBackend); the model
// keeps serving.
func TestIsolatedStreamCancellationReachesTheBackend(t *testing.T) {
	cfg := testenv.ExampleConfig(t, "square_int32") + isolatedParam +
		`parameters [{ key: "CUSTOM_INFER_DELAY_NS" value: { string_value: "5000000" } }]` + "\n"
	srv := startServer(t, testenv.Repository(t, testenv.Model{Name: "square_int32", Config: cfg}))
	checkIsolated(t, srv, "libtriton_square.so")
	ctx, cancel := context.WithCancel(ctxFor(t))
	s, err := client.OpenStream(ctx, srv.Client)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"a", "b"} {
		if err := s.Send(client.Request{Model: "square_int32", ID: id, Inputs: []client.Tensor{client.Int32s("IN", []int64{1}, 1000)}}); err != nil {
			t.Fatal(err)
		}
	}
	for range 3 { // both requests run
		if _, err := s.Recv(); err != nil {
			t.Fatal(err)
		}
	}
	cancel()
	testenv.WaitUntil(t, "square to record both requests cancelled", func() bool {
		return responseStat(t, srv, "square_int32", (*pb.InferResponseStatistics).GetCancel) == 2
	})
	s2, err := client.OpenStream(ctxFor(t), srv.Client)
	if err != nil {
		t.Fatal(err)
	}
	s2.Send(client.Request{Model: "square_int32", ID: "after", Inputs: []client.Tensor{client.Int32s("IN", []int64{1}, 1)}})
	s2.CloseSend()
	if got := collect(t, s2); len(got) != 1 || got[0].err != "" {
		t.Errorf("after the cancelled stream: %+v", got)
	}
}

// responseStat sums one count of model's response statistics.
func responseStat(t *testing.T, srv *serverProcess, model string, field func(*pb.InferResponseStatistics) *pb.StatisticDuration) uint64 {
	t.Helper()
	var n uint64
	for _, r := range modelStats(t, srv, model).GetResponseStats() {
		n += field(r).GetCount()
	}
	return n
}

// modelStats returns the statistics of model's one version.
func modelStats(t *testing.T, srv *serverProcess, model string) *pb.ModelStatistics {
	t.Helper()
	resp, err := srv.Client.ModelStatistics(ctxFor(t), &pb.ModelStatisticsRequest{Name: model})
	if err != nil || len(resp.GetModelStats()) != 1 {
		t.Fatalf("ModelStatistics(%s): %v, %d versions", model, err, len(resp.GetModelStats()))
	}
	return resp.GetModelStats()[0]
}

// statsShape renders statistics as what two runs of the same traffic
// share: every count exactly, and for every time whether it is nonzero
// (the name, version and last inference's time left out).
func statsShape(st *pb.ModelStatistics) string {
	var lines []string
	var walk func(prefix string, m protoreflect.Message)
	walk = func(prefix string, m protoreflect.Message) {
		m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			path := prefix + string(fd.Name())
			switch {
			case fd.Name() == "name" || fd.Name() == "version" || fd.Name() == "last_inference":
			case fd.IsMap():
				v.Map().Range(func(k protoreflect.MapKey, mv protoreflect.Value) bool {
					walk(fmt.Sprintf("%s[%v].", path, k.Interface()), mv.Message())
					return true
				})
			case fd.IsList():
				for i := range v.List().Len() {
					walk(fmt.Sprintf("%s[%d].", path, i), v.List().Get(i).Message())
				}
			case fd.Message() != nil && fd.Message().Name() == "StatisticDuration":
				d := v.Message().Interface().(*pb.StatisticDuration)
				lines = append(lines, fmt.Sprintf("%s: %d, time %v", path, d.GetCount(), d.GetNs() > 0))
			case fd.Message() != nil:
				walk(path+".", v.Message())
			default:
				lines = append(lines, fmt.Sprintf("%s: %v", path, v.Interface()))
			}
			return true
		})
	}
	walk("", proto.Clone(st).ProtoReflect())
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// TestIsolatedStatisticsMatchInProcess: the same traffic to a model in
// process and to its copy in a worker gives statistics of the same shape
// (every count equal, the same times nonzero: requests, executions,
// batches, each response of a decoupled model); the isolated model's
// survive its worker's restart unchanged, and go on adding up after it.
func TestIsolatedStatisticsMatchInProcess(t *testing.T) {
	copyOf := func(model, name string, extra string) testenv.Model {
		cfg := strings.Replace(testenv.ExampleConfig(t, model), fmt.Sprintf("name: %q", model), fmt.Sprintf("name: %q", name), 1)
		return testenv.Model{Name: name, Config: cfg + extra}
	}
	repo := testenv.Repository(t,
		copyOf("identity_int32", "identity_in", ""), copyOf("identity_int32", "identity_iso", isolatedParam),
		copyOf("square_int32", "square_in", ""), copyOf("square_int32", "square_iso", isolatedParam))
	srv := startServer(t, repo, "--backend-restart-backoff", "20")
	ctx := ctxFor(t)
	const n = 8
	traffic := func(t *testing.T, identity, square string) {
		msg, err := client.Request{Model: identity, Inputs: []client.Tensor{client.Int32s("INPUT0", []int64{4}, 1, 2, 3, 4)}}.Message()
		if err != nil {
			t.Fatal(err)
		}
		for range n {
			if _, err := srv.Client.ModelInfer(ctx, msg); err != nil {
				t.Fatal(err)
			}
		}
		for i := range n {
			s, err := client.OpenStream(ctx, srv.Client)
			if err != nil {
				t.Fatal(err)
			}
			s.Send(client.Request{Model: square, ID: fmt.Sprint(i), Inputs: []client.Tensor{client.Int32s("IN", []int64{1}, 3)}})
			s.CloseSend()
			if got := collect(t, s); len(got) != 3 {
				t.Fatalf("%s answered %d responses, want 3", square, len(got))
			}
		}
	}
	// sameShape waits until the isolated model's statistics have the
	// in-process one's shape (a worker's reports trail its responses).
	sameShape := func(t *testing.T, in, iso string) string {
		t.Helper()
		var a, b string
		if !testenv.Eventually(func() bool {
			a, b = statsShape(modelStats(t, srv, in)), statsShape(modelStats(t, srv, iso))
			return a == b && a != ""
		}) {
			t.Fatalf("statistics of %s (in process):\n%s\n\nof %s (isolated):\n%s", in, a, iso, b)
		}
		return b
	}
	pairs := [][2]string{{"identity_in", "identity_iso"}, {"square_in", "square_iso"}}
	traffic(t, "identity_in", "square_in")
	traffic(t, "identity_iso", "square_iso")
	shapes := map[string]string{}
	for _, p := range pairs {
		shapes[p[1]] = sameShape(t, p[0], p[1])
	}
	if !strings.Contains(shapes["square_iso"], "response_stats[2].success: 8, time true") {
		t.Errorf("square's statistics do not count its third responses:\n%s", shapes["square_iso"])
	}

	// Both isolated workers die; the statistics stay as they were.
	for _, lib := range []string{"libtriton_identity.so", "libtriton_square.so"} {
		pid := workerHosting(t, srv.Server, lib)
		if pid == 0 {
			t.Fatalf("no worker loaded %s", lib)
		}
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		testenv.WaitUntil(t, fmt.Sprintf("worker %d to be reaped", pid), func() bool {
			return !slices.Contains(children(t, srv.PID()), pid)
		})
	}
	for _, model := range []string{"identity_iso", "square_iso"} {
		testenv.WaitUntil(t, model+" to be ready again", func() bool {
			r, err := srv.Client.ModelReady(ctx, &pb.ModelReadyRequest{Name: model})
			return err == nil && r.GetReady()
		})
		if got := statsShape(modelStats(t, srv, model)); got != shapes[model] {
			t.Errorf("%s's statistics after its worker's restart:\n%s\nbefore it:\n%s", model, got, shapes[model])
		}
	}
	traffic(t, "identity_in", "square_in")
	traffic(t, "identity_iso", "square_iso")
	for _, p := range pairs {
		sameShape(t, p[0], p[1])
	}
}

// TestIsolatedModelIsNotReadyWhileItsWorkerRestarts: from its worker's
// end until a new worker has loaded it, an isolated model is not ready
// (ModelReady; the repository index reports what loaded, and keeps it
// READY) and its requests fail at once saying it restarts, while the
// other models stay ready; once a restart succeeds it is ready and
// serves. The restarts here fail until the test gives the backend library
// back.
func TestIsolatedModelIsNotReadyWhileItsWorkerRestarts(t *testing.T) {
	lib := testenv.SharedLibrary(t, "triton_crash", filepath.Join("testdata", "crash.c"))
	repo := testenv.Repository(t, testenv.Model{Name: "crash", Config: crashConfig, Files: []string{lib}},
		testenv.Model{Name: "identity_int32", Config: testenv.ExampleConfig(t, "identity_int32")})
	srv := startServer(t, repo, "--backend-restart-backoff", "20", "--backend-restart-backoff-max", "100")
	ctx := ctxFor(t)
	ready := func(model string) bool {
		r, err := srv.Client.ModelReady(ctx, &pb.ModelReadyRequest{Name: model})
		if err != nil {
			t.Fatal(err)
		}
		return r.GetReady()
	}
	if !ready("crash") {
		t.Fatal("crash is not ready after the start")
	}
	installed := filepath.Join(repo, "crash", "1", filepath.Base(lib))
	if err := os.Rename(installed, installed+".away"); err != nil {
		t.Fatal(err)
	}
	if got := crashOnce(t, srv, 1); len(got) != 1 || !strings.Contains(got[0].err, "the model restarts") {
		t.Fatalf("IN = 1 got %+v, want the worker's end", got)
	}
	testenv.WaitUntil(t, "a restart to fail", func() bool {
		return strings.Contains(srv.Log(), `model 'crash' version 1: its worker is restarting (the last try failed`)
	})
	if ready("crash") {
		t.Error("crash is ready while its worker restarts")
	}
	if !ready("identity_int32") {
		t.Error("identity_int32 is not ready while crash's worker restarts")
	}
	got := crashOnce(t, srv, 0)
	if len(got) != 1 || !strings.Contains(got[0].err, "model 'crash' version 1") || !strings.Contains(got[0].err, "restart") {
		t.Errorf("a request while crash restarts got %+v, want an error saying it restarts", got)
	}
	if err := os.Rename(installed+".away", installed); err != nil {
		t.Fatal(err)
	}
	testenv.WaitUntil(t, "crash to be ready again", func() bool { return ready("crash") })
	if got := crashOnce(t, srv, 0); len(got) != 1 || got[0].err != "" {
		t.Errorf("after the restart: %+v", got)
	}
}

// TestIsolationParameterOverridesTheFlag: a model's tritonhost_isolation
// parameter puts its backend in a worker under --backend-isolation none,
// and in the server's process under --backend-isolation process; the
// models without it go where the flag says; a value that is neither fails
// the model's load, naming the parameter.
func TestIsolationParameterOverridesTheFlag(t *testing.T) {
	param := func(v string) string {
		return fmt.Sprintf(`parameters [ { key: "tritonhost_isolation" value: { string_value: %q } } ]`+"\n", v)
	}
	for _, tc := range []struct {
		flag     string
		identity string // identity_int32's parameter ("": none)
		square   string // square_int32's
		isolated []string
		inServer []string
		failed   string // the load error of identity_int32, if it fails
	}{
		{flag: "none", identity: "process", isolated: []string{"libtriton_identity.so"}, inServer: []string{"libtriton_square.so"}},
		{flag: "process", identity: "none", isolated: []string{"libtriton_square.so"}, inServer: []string{"libtriton_identity.so"}},
		{flag: "process", identity: "none", square: "none", inServer: []string{"libtriton_identity.so", "libtriton_square.so"}},
		{flag: "none", identity: "sandbox", inServer: []string{"libtriton_square.so"},
			failed: `parameters["tritonhost_isolation"]: backend isolation "sandbox": want "none" or "process"`},
	} {
		t.Run(fmt.Sprintf("flag %s, identity %s, square %s", tc.flag, tc.identity, tc.square), func(t *testing.T) {
			cfg := func(model, v string) testenv.Model {
				c := testenv.ExampleConfig(t, model)
				if v != "" {
					c += param(v)
				}
				return testenv.Model{Name: model, Config: c}
			}
			repo := testenv.Repository(t, cfg("identity_int32", tc.identity), cfg("square_int32", tc.square))
			srv := startServer(t, repo, "--backend-isolation", tc.flag, "--exit-on-error=false")
			checkIsolated(t, srv, tc.isolated...)
			for _, lib := range tc.inServer {
				if !mapsLibrary(srv.PID(), lib) {
					t.Errorf("the server's process did not load %s", lib)
				}
				if pid := workerHosting(t, srv.Server, lib); pid != 0 {
					t.Errorf("worker %d loaded %s", pid, lib)
				}
			}
			msg, err := client.Request{Model: "identity_int32", Inputs: []client.Tensor{client.Int32s("INPUT0", []int64{1}, 9)}}.Message()
			if err != nil {
				t.Fatal(err)
			}
			_, err = srv.Client.ModelInfer(ctxFor(t), msg)
			switch {
			case tc.failed == "" && err != nil:
				t.Errorf("identity_int32: %v", err)
			case tc.failed != "" && (status.Code(err) != codes.NotFound || !strings.Contains(err.Error(), tc.failed)):
				t.Errorf("identity_int32 with a bad parameter answered %v, want NOT_FOUND saying %q", err, tc.failed)
			}
		})
	}
}

// TestIsolatedBatchTooLargeForAMessageFailsAlone: a request whose control
// fields (here a 200 KiB string parameter) do not fit in a message to the
// worker fails alone with INVALID_ARGUMENT saying so; the worker is not
// restarted and serves the next request. (In process the same request
// succeeds: parameters do not travel in shared memory yet.)
func TestIsolatedBatchTooLargeForAMessageFailsAlone(t *testing.T) {
	repo := testenv.Repository(t, testenv.Model{Name: "identity_int32", Config: testenv.ExampleConfig(t, "identity_int32") + isolatedParam})
	srv := startServer(t, repo)
	worker := workerHosting(t, srv.Server, "libtriton_identity.so")
	msg, err := client.Request{Model: "identity_int32", Inputs: []client.Tensor{client.Int32s("INPUT0", []int64{1}, 1)},
		Params: map[string]any{"big": strings.Repeat("x", 200<<10)}}.Message()
	if err != nil {
		t.Fatal(err)
	}
	_, err = srv.Client.ModelInfer(ctxFor(t), msg)
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "does not fit in a message to its worker process") {
		t.Errorf("the request with a 200 KiB parameter: %v, want INVALID_ARGUMENT saying it does not fit", err)
	}
	msg, err = client.Request{Model: "identity_int32", Inputs: []client.Tensor{client.Int32s("INPUT0", []int64{1}, 1)}}.Message()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Client.ModelInfer(ctxFor(t), msg); err != nil {
		t.Errorf("the next request: %v", err)
	}
	if now := workerHosting(t, srv.Server, "libtriton_identity.so"); now != worker || strings.Contains(srv.Log(), "the model restarts") {
		t.Errorf("the worker was restarted (pid %d, now %d)", worker, now)
	}
}
