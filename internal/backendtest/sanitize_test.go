package backendtest

// The backends under the address and undefined-behaviour sanitizers, run by
// the real server: `make backends-sanitized` (mk/backends.mk) builds them
// with -fsanitize=address,undefined, and the tritonhost binary runs with
// the sanitizer runtime preloaded (LD_PRELOAD; a Go binary's own memory is
// not the C allocator's, so only leak detection, which cannot see pointers
// held in Go memory, is turned off). The server frees a request's block
// when the backend releases it, so a backend that touches a request after
// releasing it is a use after free that the sanitizer reports and the
// server dies of; TestSanitizersCatchATouchAfterRelease shows it does.

import (
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
	"testing"
	"time"

	"github.com/tritonhost/tritonhost/client"
	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// haveSanitizers reports whether gcc builds and links a program with
// -fsanitize=address,undefined here; why not, if it does not.
func haveSanitizers(t *testing.T) (bool, string) {
	t.Helper()
	requireTools(t, "gcc")
	dir := t.TempDir()
	src := filepath.Join(dir, "probe.c")
	if err := os.WriteFile(src, []byte("int main(void) { return 0; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("gcc", "-fsanitize=address,undefined", "-o", filepath.Join(dir, "probe"), src).CombinedOutput()
	if err != nil {
		return false, fmt.Sprintf("%v: %s", err, strings.TrimSpace(string(out)))
	}
	return true, ""
}

// sanitizedBuild runs `make backends-sanitized` (under testenv's lock; after
// the first time in a test binary make finds it done) and returns its
// backend directory and its BUILD_DIR (build/sanitized); it skips the test
// where gcc has no sanitizers.
func sanitizedBuild(t *testing.T) (backendsDir, buildDir string) {
	t.Helper()
	requireTools(t, "make", "gcc", "g++")
	if ok, why := haveSanitizers(t); !ok {
		t.Skipf("gcc cannot build with -fsanitize=address,undefined: %s", why)
	}
	testenv.Make(t, "backends-sanitized")
	buildDir = filepath.Join(testenv.RepoRoot(t), "build", "sanitized")
	return filepath.Join(buildDir, "backends"), buildDir
}

// sanitizerRuntime returns what LD_PRELOAD must name for a library built
// with -fsanitize=address to load into a program that was not: the
// address sanitizer's runtime, which must come before every other library.
func sanitizerRuntime(t *testing.T, lib string) string {
	t.Helper()
	for _, needed := range testenv.ReadDynamicSymbols(t, lib).Needed {
		if strings.HasPrefix(needed, "libasan.so") {
			// gcc's own copy when it has one; else the loader finds it.
			out, err := exec.Command("gcc", "-print-file-name="+needed).Output()
			if path := strings.TrimSpace(string(out)); err == nil && filepath.IsAbs(path) {
				return path
			}
			return needed
		}
	}
	t.Fatalf("%s does not need the address sanitizer's runtime", lib)
	return ""
}

// sanitizedServer starts tritonhost over repo with the backends of
// backendsDir and the sanitizer runtime preload preloaded, under explicit
// model control with every model loaded at start, serving even if some
// fail.
func sanitizedServer(t *testing.T, preload, backendsDir, repo string, args ...string) *testenv.Server {
	t.Helper()
	bin, err := testenv.BuildServer(t.TempDir(), false) // the race detector's runtime and ASan's do not mix
	if err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "LD_PRELOAD="+preload,
		"ASAN_OPTIONS=detect_leaks=0:halt_on_error=1",
		"UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1")
	args = append([]string{"--model-control-mode", "explicit", "--load-model", "*", "--exit-on-error=false",
		"--allow-http=false", "--allow-metrics=false"}, args...)
	s := testenv.StartServer(t, testenv.ServerConfig{Binary: bin, Repo: repo, Backends: backendsDir, Env: env, Args: args})
	maps, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", s.PID()))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(maps), "libasan.so") {
		t.Fatalf("the server runs without the address sanitizer's runtime mapped")
	}
	return s
}

// sanitizerReports are what the sanitizers print when they find something.
var sanitizerReports = regexp.MustCompile(`ERROR: AddressSanitizer|runtime error:|SUMMARY: (Address|UndefinedBehavior)Sanitizer`)

// Models of the backends under test: the examples' repeat and square,
// square with its simulated failures, empty responses and delays, square
// with a batch dimension, identity with optional inputs and with a delay
// under the dynamic batcher, and configurations each backend must refuse.
func sanitizedModels(t *testing.T) []testenv.Model {
	repeat := testenv.ExampleConfig(t, "repeat_int32")
	return []testenv.Model{
		{Name: "repeat_int32", Config: repeat},
		{Name: "square_int32", Config: testenv.ExampleConfig(t, "square_int32")},
		{Name: "square_sim", Config: squareConfig("square_sim", 0, `
parameters [
  { key: "CUSTOM_FAIL_COUNT" value: { string_value: "1" } },
  { key: "CUSTOM_EMPTY_COUNT" value: { string_value: "1" } },
  { key: "CUSTOM_INFER_DELAY_NS" value: { string_value: "1000" } },
  { key: "CUSTOM_OUTPUT_DELAY_NS" value: { string_value: "not a number" } },
  { key: "OTHER" value: { string_value: "x" } }
]`)},
		{Name: "square_slow", Config: squareConfig("square_slow", 0, `
parameters [ { key: "CUSTOM_INFER_DELAY_NS" value: { string_value: "20000000" } } ]`)},
		{Name: "square_batched", Config: squareConfig("square_batched", 1, "")},
		{Name: "identity_opt", Config: identityConfig("identity_opt", 0, "", "")},
		{Name: "identity_delay", Config: identityConfig("identity_delay", 8, `
parameters [ { key: "execute_delay_ms" value: { string_value: "30" } } ]`,
			"dynamic_batching { preferred_batch_size: [ 5 ] max_queue_delay_microseconds: 2000000 }")},
		// Refused at load, each for its reason.
		{Name: "bad_repeat_batching", Config: strings.NewReplacer(`name: "repeat_int32"`, `name: "bad_repeat_batching"`,
			"max_batch_size: 0", "max_batch_size: 8").Replace(repeat)},
		{Name: "bad_square_dims", Config: strings.Replace(squareConfig("bad_square_dims", 0, ""),
			`name: "IN" data_type: TYPE_INT32 dims: [ 1 ]`, `name: "IN" data_type: TYPE_INT32 dims: [ 2 ]`, 1)},
		{Name: "bad_identity_types", Config: strings.Replace(identityConfig("bad_identity_types", 0, "", ""),
			`name: "OUTPUT9" data_type: TYPE_FP32`, `name: "OUTPUT9" data_type: TYPE_FP64`, 1)},
		{Name: "bad_identity_names", Config: strings.Replace(identityConfig("bad_identity_names", 0, "", ""),
			`name: "OUTPUT9"`, `name: "RESULT9"`, 1)},
		{Name: "bad_identity_delay", Config: identityConfig("bad_identity_delay", 0, `
parameters [ { key: "execute_delay_ms" value: { string_value: "soon" } } ]`, "")},
	}
}

// Why each bad_ model is refused: a piece of its load error.
var refusals = map[string]string{
	"bad_repeat_batching": "max_batch_size",
	"bad_square_dims":     "IN",
	"bad_identity_types":  "data types to match",
	"bad_identity_names":  "RESULT9",
	"bad_identity_delay":  "execute_delay_ms",
}

func squareConfig(name string, maxBatch int, extra string) string {
	return fmt.Sprintf(`name: %q
backend: "square"
max_batch_size: %d
model_transaction_policy { decoupled: True }
input [ { name: "IN" data_type: TYPE_INT32 dims: [ 1 ] } ]
output [ { name: "OUT" data_type: TYPE_INT32 dims: [ 1 ] } ]
instance_group [ { count: 1 kind: KIND_CPU } ]
%s
`, name, maxBatch, extra)
}

func identityConfig(name string, maxBatch int, params, batching string) string {
	return fmt.Sprintf(`name: %q
backend: "identity"
max_batch_size: %d
input [
  { name: "INPUT0" data_type: TYPE_INT32 dims: [ -1 ] },
  { name: "INPUT1" data_type: TYPE_STRING dims: [ -1 ] optional: true },
  { name: "INPUT9" data_type: TYPE_FP32 dims: [ 1 ] optional: true }
]
output [
  { name: "OUTPUT1" data_type: TYPE_STRING dims: [ -1 ] },
  { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ -1 ] },
  { name: "OUTPUT9" data_type: TYPE_FP32 dims: [ 1 ] }
]
instance_group [ { count: 1 kind: KIND_CPU } ]
%s
%s
`, name, maxBatch, params, batching)
}

// streamed is what a stream returned for its requests, in order.
type streamed struct {
	err   string              // the error message, if any
	final bool                // the final flag
	outs  map[string][]int32  // INT32 outputs
	uouts map[string][]uint32 // UINT32 outputs
	shape map[string][]int64
}

// stream sends reqs on one stream, half-closes it and returns every
// message up to the stream's end.
func stream(ctx context.Context, t *testing.T, c pb.GRPCInferenceServiceClient, reqs ...client.Request) []streamed {
	t.Helper()
	s, err := client.OpenStream(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range reqs {
		if err := s.Send(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.CloseSend(); err != nil {
		t.Fatal(err)
	}
	var got []streamed
	for {
		res, err := s.Recv()
		if err == io.EOF {
			return got
		}
		if err != nil {
			t.Fatalf("stream: %v (after %d messages)", err, len(got))
		}
		got = append(got, decoded(t, res))
	}
}

func decoded(t *testing.T, res client.Result) streamed {
	t.Helper()
	m := streamed{final: res.Final, outs: map[string][]int32{}, uouts: map[string][]uint32{}, shape: map[string][]int64{}}
	if res.Err != nil {
		m.err = res.Err.Error()
	}
	if res.Response == nil {
		return m
	}
	outs, err := client.Outputs(res.Response)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range outs {
		m.shape[o.Name] = o.Shape
		switch o.Datatype {
		case "INT32":
			if m.outs[o.Name], err = o.AsInt32s(); err != nil {
				t.Fatal(err)
			}
		case "UINT32":
			if m.uouts[o.Name], err = o.AsUint32s(); err != nil {
				t.Fatal(err)
			}
		}
	}
	return m
}

func statistics(ctx context.Context, t *testing.T, c pb.GRPCInferenceServiceClient, model string) *pb.ModelStatistics {
	t.Helper()
	st, err := c.ModelStatistics(ctx, &pb.ModelStatisticsRequest{Name: model})
	if err != nil {
		t.Fatal(err)
	}
	if len(st.GetModelStats()) != 1 {
		t.Fatalf("statistics of %s: %d models", model, len(st.GetModelStats()))
	}
	return st.GetModelStats()[0]
}

// checkCounts checks a model's request outcomes, which the backend reports
// before it releases each request (reported after, they would be refused:
// the request's handle is gone), its executions, which it reports as batch
// statistics (repeat and square, on the layer, for the requests that
// succeeded only; identity for every batch), and its inferences, the
// server's count of the successful requests' batch sizes.
func checkCounts(t *testing.T, st *pb.ModelStatistics, success, fail, executions, inferences uint64) {
	t.Helper()
	is := st.GetInferenceStats()
	if is.GetSuccess().GetCount() != success || is.GetFail().GetCount() != fail ||
		st.GetExecutionCount() != executions || st.GetInferenceCount() != inferences {
		t.Errorf("%s: %d succeeded, %d failed, %d executions, %d inferences; want %d, %d, %d, %d",
			st.GetName(), is.GetSuccess().GetCount(), is.GetFail().GetCount(), st.GetExecutionCount(),
			st.GetInferenceCount(), success, fail, executions, inferences)
	}
}

// awaitCounts is checkCounts on the model's statistics once they reach
// the counts, or testenv.Patience has passed: a backend reports a
// request's statistics after its last response, which the client may
// have read first. A report the server refused never arrives, and the
// counts stay short.
func awaitCounts(ctx context.Context, t *testing.T, c pb.GRPCInferenceServiceClient, model string, success, fail, executions, inferences uint64) {
	t.Helper()
	deadline := time.Now().Add(testenv.Patience)
	for {
		st := statistics(ctx, t, c, model)
		is := st.GetInferenceStats()
		if (is.GetSuccess().GetCount() == success && is.GetFail().GetCount() == fail &&
			st.GetExecutionCount() == executions && st.GetInferenceCount() == inferences) || time.Now().After(deadline) {
			checkCounts(t, st, success, fail, executions, inferences)
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestBackendsBehaveAsSpecifiedUnderTheServerWithSanitizers runs repeat,
// square and identity, built with the sanitizers, in the real server, and
// checks what each answers, what it reports and the protocol rules the
// server relies on: nothing sent after a request's final response (the
// server refuses it, and the backend logs the refusal), statistics reported
// before the release (after it, the server refuses them and the counts
// fall short), nothing touched after the release (the request's memory is
// freed: the sanitizer would report it), every object handed back by exit
// (the server reports what is still live), and a model unloaded while its
// response threads still send waits for them.
func TestBackendsBehaveAsSpecifiedUnderTheServerWithSanitizers(t *testing.T) {
	backendsDir, _ := sanitizedBuild(t)
	preload := sanitizerRuntime(t, filepath.Join(backendsDir, "repeat", "libtriton_repeat.so"))
	srv := sanitizedServer(t, preload, backendsDir, testenv.Repository(t, sanitizedModels(t)...), "--log-verbose", "1")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := srv.Client

	t.Run("refused configurations", func(t *testing.T) {
		index, err := c.RepositoryIndex(ctx, &pb.RepositoryIndexRequest{})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range index.GetModels() {
			want, bad := refusals[m.GetName()]
			switch {
			case bad && m.GetState() == "READY":
				t.Errorf("%s loaded; want it refused (%s)", m.GetName(), want)
			case bad && !strings.Contains(m.GetReason(), want):
				t.Errorf("%s refused for %q; want a reason naming %q", m.GetName(), m.GetReason(), want)
			case !bad && m.GetState() != "READY":
				t.Errorf("%s: %s %s", m.GetName(), m.GetState(), m.GetReason())
			}
		}
	})

	t.Run("repeat", func(t *testing.T) {
		repeat := func(id string, in []int32, delay []uint32, wait uint32) client.Request {
			return client.Request{Model: "repeat_int32", ID: id, Inputs: []client.Tensor{
				client.Int32s("IN", []int64{int64(len(in))}, in...),
				client.Uint32s("DELAY", []int64{int64(len(delay))}, delay...),
				client.Uint32s("WAIT", []int64{1}, wait),
			}, Params: map[string]any{client.EmptyFinalParam: true}}
		}
		// One response per element, from its thread (DELAY 1+2+3+4 ms is
		// longer than Execute's WAIT of 5 ms), then a final flag alone.
		got := stream(ctx, t, c, repeat("each", []int32{4, 2, 0, 1}, []uint32{1, 2, 3, 4}, 5))
		if len(got) != 5 {
			t.Fatalf("%d messages, want 4 responses and an empty final: %+v", len(got), got)
		}
		for i, want := range []int32{4, 2, 0, 1} {
			if m := got[i]; m.err != "" || m.final || !slices.Equal(m.outs["OUT"], []int32{want}) ||
				!slices.Equal(m.uouts["IDX"], []uint32{uint32(i)}) || !slices.Equal(m.shape["OUT"], []int64{1}) {
				t.Errorf("response %d: %+v; want OUT %d (INT32), IDX %d (UINT32), not final", i, m, want, i)
			}
		}
		if m := got[4]; !m.final || len(m.shape) != 0 || m.err != "" {
			t.Errorf("last message %+v; want an empty final", m)
		}
		// An empty IN: the final flag alone.
		if got := stream(ctx, t, c, repeat("empty", nil, nil, 0)); len(got) != 1 || !got[0].final || len(got[0].shape) != 0 {
			t.Errorf("empty IN: %+v; want an empty final only", got)
		}
		// IN and DELAY of different shapes: one error, which ends the request.
		got = stream(ctx, t, c, repeat("mismatch", []int32{1, 2}, []uint32{1}, 0))
		if len(got) != 1 || !strings.Contains(got[0].err, "expected IN and DELAY shape to match") {
			t.Errorf("mismatched shapes: %+v; want one error", got)
		}
		awaitCounts(ctx, t, c, "repeat_int32", 2, 1, 2, 2)
	})

	t.Run("square", func(t *testing.T) {
		square := func(model, id string, shape []int64, k int32) client.Request {
			return client.Request{Model: model, ID: id, Inputs: []client.Tensor{client.Int32s("IN", shape, k)},
				Params: map[string]any{client.EmptyFinalParam: true}}
		}
		// k responses of k, then the final flag; none for 0.
		got := stream(ctx, t, c, square("square_int32", "three", []int64{1}, 3))
		if len(got) != 4 || !got[3].final {
			t.Fatalf("IN 3: %+v; want 3 responses and an empty final", got)
		}
		for i, m := range got[:3] {
			if m.err != "" || m.final || !slices.Equal(m.outs["OUT"], []int32{3}) {
				t.Errorf("response %d: %+v; want OUT 3", i, m)
			}
		}
		if got := stream(ctx, t, c, square("square_int32", "zero", []int64{1}, 0)); len(got) != 1 || !got[0].final || len(got[0].shape) != 0 {
			t.Errorf("IN 0: %+v; want an empty final only", got)
		}
		st := statistics(ctx, t, c, "square_int32")
		checkCounts(t, st, 2, 0, 2, 2)
		for i := range 3 {
			r := st.GetResponseStats()[fmt.Sprint(i)]
			if r.GetSuccess().GetCount() != 1 || r.GetComputeInfer().GetCount() != 1 || r.GetComputeOutput().GetCount() != 1 {
				t.Errorf("response %d's statistics: %v; want one success, with its infer and output times", i, r)
			}
		}
		if len(st.GetResponseStats()) != 3 {
			t.Errorf("responses with statistics: %d, want 3", len(st.GetResponseStats()))
		}

		// With a batch dimension, OUT has IN's two dimensions.
		got = stream(ctx, t, c, square("square_batched", "2d", []int64{1, 1}, 1))
		if len(got) != 2 || !slices.Equal(got[0].shape["OUT"], []int64{1, 1}) {
			t.Errorf("IN of shape [1,1]: %+v; want one response of OUT [1,1] and the final", got)
		}

		// Simulated: two successes, a failure, an empty response (nothing
		// sent), then the final flag; the request failed.
		got = stream(ctx, t, c, square("square_sim", "sim", []int64{1}, 4))
		if len(got) != 4 || got[0].err != "" || got[1].err != "" || !strings.Contains(got[2].err, "simulated failure") || !got[3].final {
			t.Errorf("simulated: %+v; want 2 responses, the simulated failure and the final", got)
		}
		st = statistics(ctx, t, c, "square_sim")
		checkCounts(t, st, 0, 1, 0, 0)
		rs := st.GetResponseStats()
		if rs["0"].GetSuccess().GetCount() != 1 || rs["1"].GetSuccess().GetCount() != 1 ||
			rs["2"].GetFail().GetCount() != 1 || rs["3"].GetEmptyResponse().GetCount() != 1 {
			t.Errorf("simulated responses' statistics: %v; want success, success, fail, empty", rs)
		}

		// A client that goes away: square's thread sees the cancellation
		// at its next response, reports it and ends the request failed.
		sctx, scancel := context.WithCancel(ctx)
		s, err := client.OpenStream(sctx, c)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Send(square("square_slow", "cancelled", []int64{1}, 1000)); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Recv(); err != nil {
			t.Fatal(err)
		}
		scancel()
		testenv.WaitUntil(t, "square_slow's request to end", func() bool {
			return statistics(ctx, t, c, "square_slow").GetInferenceStats().GetFail().GetCount() == 1
		})
		// The cancelled response's statistics reach the server with the
		// request's FINAL, which square sends just after reporting the
		// request failed.
		cancelled := uint64(0)
		testenv.Eventually(func() bool {
			cancelled = 0
			for _, r := range statistics(ctx, t, c, "square_slow").GetResponseStats() {
				cancelled += r.GetCancel().GetCount()
			}
			return cancelled >= 1
		})
		if cancelled != 1 {
			t.Errorf("square_slow reported %d cancelled responses, want 1", cancelled)
		}
	})

	t.Run("identity", func(t *testing.T) {
		infer := func(r client.Request) (*pb.ModelInferResponse, error) {
			msg, err := r.Message()
			if err != nil {
				t.Fatal(err)
			}
			return c.ModelInfer(ctx, msg)
		}
		// Inputs copied to the outputs asked for; an optional input left
		// out when its output is not asked for; its output asked for
		// without it, refused.
		bytesIn := client.Strings("INPUT1", []int64{1}, "abc")
		resp, err := infer(client.Request{Model: "identity_opt", Inputs: []client.Tensor{
			client.Int32s("INPUT0", []int64{3}, 1, -2, 3), bytesIn}, Outputs: []string{"OUTPUT0", "OUTPUT1"}})
		if err != nil {
			t.Fatal(err)
		}
		out0, _ := client.Output(resp, "OUTPUT0")
		out1, _ := client.Output(resp, "OUTPUT1")
		if v, _ := out0.AsInt32s(); !slices.Equal(v, []int32{1, -2, 3}) || !slices.Equal(out0.Shape, []int64{3}) ||
			string(out1.Data) != string(bytesIn.Data) || out1.Datatype != "BYTES" {
			t.Errorf("identity_opt: OUTPUT0 %+v, OUTPUT1 %+v", out0, out1)
		}
		resp, err = infer(client.Request{Model: "identity_opt", Inputs: []client.Tensor{
			client.Int32s("INPUT0", []int64{0})}, Outputs: []string{"OUTPUT0"}})
		if err != nil {
			t.Fatal(err)
		}
		if out, _ := client.Output(resp, "OUTPUT0"); len(out.Data) != 0 || !slices.Equal(out.Shape, []int64{0}) || len(resp.GetOutputs()) != 1 {
			t.Errorf("empty INPUT0: %v", resp)
		}
		_, err = infer(client.Request{Model: "identity_opt", Inputs: []client.Tensor{
			client.Int32s("INPUT0", []int64{1}, 7)}, Outputs: []string{"OUTPUT0", "OUTPUT1"}})
		if err == nil || !strings.Contains(err.Error(), "INPUT1") {
			t.Errorf("OUTPUT1 without INPUT1: %v; want an error naming INPUT1", err)
		}
		awaitCounts(ctx, t, c, "identity_opt", 2, 1, 3, 2)

		// Two requests in one batch of 5, executed after execute_delay_ms.
		var wg sync.WaitGroup
		shapes := [][]int64{{3, 1}, {2, 1}}
		errs := make([]error, len(shapes))
		got := make([][]int64, len(shapes))
		start := time.Now()
		for i, shape := range shapes {
			wg.Go(func() {
				vals := make([]int32, shape[0])
				resp, err := infer(client.Request{Model: "identity_delay", Inputs: []client.Tensor{
					client.Int32s("INPUT0", shape, vals...)}, Outputs: []string{"OUTPUT0"}})
				errs[i] = err
				if out, err := client.Output(resp, "OUTPUT0"); err == nil {
					got[i] = out.Shape
				}
			})
		}
		wg.Wait()
		if elapsed := time.Since(start); elapsed < 30*time.Millisecond {
			t.Errorf("identity_delay answered in %v, before its execute_delay_ms of 30", elapsed)
		}
		for i := range shapes {
			if errs[i] != nil || !slices.Equal(got[i], shapes[i]) {
				t.Errorf("identity_delay request %d: %v, OUTPUT0 of shape %v; want %v", i, errs[i], got[i], shapes[i])
			}
		}
		awaitCounts(ctx, t, c, "identity_delay", 2, 0, 1, 5)
	})

	// Last: unloading a model whose response threads still send waits for
	// them (the instance's finalize joins them), and the stream gets every
	// response.
	t.Run("repeat unloaded while sending", func(t *testing.T) {
		s, err := client.OpenStream(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Send(client.Request{Model: "repeat_int32", ID: "unload", Inputs: []client.Tensor{
			client.Int32s("IN", []int64{2}, 7, 8), client.Uint32s("DELAY", []int64{2}, 200, 200),
			client.Uint32s("WAIT", []int64{1}, 0)}}); err != nil {
			t.Fatal(err)
		}
		// The unload is asked for once the first response is in: the
		// request is executing, and its thread has the second to send.
		unloaded := make(chan error, 1)
		var outs []int32
		asked := false
		for len(outs) < 2 {
			if len(outs) == 1 && !asked {
				asked = true
				go func() {
					_, err := c.RepositoryModelUnload(ctx, &pb.RepositoryModelUnloadRequest{ModelName: "repeat_int32"})
					unloaded <- err
				}()
			}
			res, err := s.Recv()
			if err != nil {
				t.Fatalf("after %v: %v", outs, err)
			}
			m := decoded(t, res)
			if m.err != "" {
				t.Fatalf("after %v: %s", outs, m.err)
			}
			outs = append(outs, m.outs["OUT"]...)
		}
		if !slices.Equal(outs, []int32{7, 8}) {
			t.Errorf("responses while unloading: %v, want [7 8]", outs)
		}
		if err := <-unloaded; err != nil {
			t.Fatal(err)
		}
		testenv.WaitUntil(t, "repeat_int32 to unload", func() bool {
			index, err := c.RepositoryIndex(ctx, &pb.RepositoryIndexRequest{})
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range index.GetModels() {
				if m.GetName() == "repeat_int32" {
					return m.GetState() != "READY" && m.GetState() != "UNLOADING"
				}
			}
			return false
		})
	})

	// Every model's instances finalize at exit; then the server reports
	// any backend API object still live, and the log holds every
	// refusal and every sanitizer report.
	srv.Stop(t)
	checkServerLog(t, srv.Log())
}

// hostRefusals are the server's answers to a backend that breaks the
// protocol, which the backends log: a call on a handle that is gone
// (released, sent, deleted), a response after the final one, a second
// response of a model that is not decoupled.
var hostRefusals = regexp.MustCompile(`invalid (request|response|response factory|input|output)\b|already received its final response|responses; the first was delivered`)

// liveAtExit is the server's report, at exit, of the backend API objects
// (requests, responses, factories, ...) never released or deleted.
var liveAtExit = regexp.MustCompile(`backend API objects still live at exit: .*`)

func checkServerLog(t *testing.T, log string) {
	t.Helper()
	if m := sanitizerReports.FindString(log); m != "" {
		t.Errorf("the sanitizers reported %q", m)
	}
	if m := liveAtExit.FindString(log); m != "" {
		t.Errorf("the server stopped with objects the backends did not hand back: %s", m)
	}
	for _, line := range strings.Split(log, "\n") {
		if hostRefusals.MatchString(line) {
			t.Errorf("the server refused a backend's call: %s", line)
		}
	}
}

// TestSanitizersCatchATouchAfterRelease: a backend that reads its input's
// shape after releasing the request (testdata/touch_after_release.c),
// built with the address sanitizer, kills the server it runs in with the
// sanitizer's report, so the test above would see one.
func TestSanitizersCatchATouchAfterRelease(t *testing.T) {
	sanitizedBuild(t)
	dir := filepath.Join(t.TempDir(), "backends")
	lib := filepath.Join(dir, "touch", "libtriton_touch.so")
	if err := os.MkdirAll(filepath.Dir(lib), 0o755); err != nil {
		t.Fatal(err)
	}
	run(t, testenv.RepoRoot(t), nil, "gcc", "-std=c11", "-g", "-fPIC", "-shared", "-fsanitize=address",
		"-Iinclude", "-o", lib, "internal/backendtest/testdata/touch_after_release.c")
	repo := testenv.Repository(t, testenv.Model{Name: "touch", Config: `
name: "touch"
backend: "touch"
max_batch_size: 0
input [ { name: "IN" data_type: TYPE_INT32 dims: [ 1 ] } ]
output [ { name: "OUT" data_type: TYPE_INT32 dims: [ 1 ] } ]
`})
	srv := sanitizedServer(t, sanitizerRuntime(t, lib), dir, repo)
	msg, err := client.Request{Model: "touch", Inputs: []client.Tensor{client.Int32s("IN", []int64{1}, 1)}}.Message()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, _ = srv.Client.ModelInfer(ctx, msg) // the server dies answering
	if _, _, exited := srv.Wait(testenv.Patience); !exited {
		t.Fatalf("the server still runs after its backend read a released request")
	}
	if log := srv.Log(); !strings.Contains(log, "ERROR: AddressSanitizer: heap-use-after-free") ||
		!strings.Contains(log, "touch_after_release.c") {
		t.Errorf("no use-after-free report naming the backend:\n%s", log)
	}
}
