package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tritonhost/tritonhost/internal/testenv"
)

// TestRateLimitFlags: --rate-limit is off by default, and what it and
// --rate-limit-resource do not take is refused before the server starts,
// with Triton's texts (server's TestRateLimitSettings has what they take).
func TestRateLimitFlags(t *testing.T) {
	if f := newServeCommand().Flags().Lookup("rate-limit"); f == nil || f.DefValue != "off" {
		t.Fatalf("--rate-limit: %+v, want default off", f)
	}
	const format = "--rate-limit-resource option format is '<resource_name>:<count>:<device>' or '<resource_name>:<count>'. Got "
	refused := []struct {
		args []string
		want string
	}{
		{[]string{"--rate-limit", "sometimes"}, `invalid argument for --rate-limit: "sometimes" (want off or execution_count)`},
		{[]string{"--rate-limit-resource", "R"}, format + "R"},
		{[]string{"--rate-limit-resource", ":1"}, format + ":1"},
		{[]string{"--rate-limit-resource", "R:1:0:2"}, format + "R:1:0:2"},
		{[]string{"--rate-limit-resource", "R:many"}, format + `R:many: the count "many" is not a number of copies`},
		{[]string{"--rate-limit-resource", "R:-1"}, format + `R:-1: the count "-1" is not a number of copies`},
		{[]string{"--rate-limit-resource", "R:1:-1"}, format + `R:1:-1: the device "-1" is not a device id`},
	}
	for _, tc := range refused {
		cmd := newServeCommand()
		cmd.SetArgs(append([]string{"--model-repository", t.TempDir()}, tc.args...))
		cmd.SetOut(io.Discard)
		cmd.SetErr(io.Discard)
		if err := cmd.Execute(); err == nil || err.Error() != tc.want {
			t.Errorf("serve %s: %v, want %q", strings.Join(tc.args, " "), err, tc.want)
		}
	}
}

// limitedIdentity is an identity model (INPUT0 to OUTPUT0, INT32) whose
// execution takes delayMs and whose one instance needs resources.
func limitedIdentity(name string, delayMs int, resources string) testenv.Model {
	return testenv.Model{Name: name, Config: fmt.Sprintf(`name: "%s"
backend: "identity"
max_batch_size: 0
input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ -1 ] } ]
instance_group [ { count: 1 kind: KIND_CPU rate_limiter { resources [ %s ] } } ]
parameters { key: "execute_delay_ms" value: { string_value: "%d" } }
`, name, resources, delayMs)}
}

// TestRateLimiterServe: with --rate-limit=execution_count, two identity
// models whose instances share the one copy of a resource that
// --rate-limit-resource gives execute one after the other; a model that
// needs two copies fails to load with Triton's text.
func TestRateLimiterServe(t *testing.T) {
	t.Parallel()
	const delay = 300 * time.Millisecond
	repo := testenv.Repository(t,
		limitedIdentity("a", int(delay/time.Millisecond), `{ name: "R" count: 1 }`),
		limitedIdentity("b", int(delay/time.Millisecond), `{ name: "R" count: 1 }`),
		limitedIdentity("greedy", 0, `{ name: "R" count: 2 }`))
	srv := startServer(t, repo, "--rate-limit", "execution_count", "--rate-limit-resource", "R:1", "--exit-on-error=false")
	line := indexLine(t, srv, "greedy", "1")
	const want = `Resource count for "R" is limited to 1 which will prevent scheduling of one or more model instances, the minimum required count is 2`
	if line.GetState() != "UNAVAILABLE" || !strings.Contains(line.GetReason(), want) {
		t.Errorf("greedy: %s %q, want UNAVAILABLE with %q", line.GetState(), line.GetReason(), want)
	}
	start := time.Now()
	var wg sync.WaitGroup
	for _, model := range []string{"a", "b"} {
		wg.Go(func() { srv.echoes(t, model, 1, 2, 3) })
	}
	wg.Wait()
	// Each execution sleeps for delay; one after the other they take twice
	// as long.
	if took := time.Since(start); took < 2*delay {
		t.Errorf("the two requests took %v, less than two executions of %v one after the other", took, delay)
	}
}

// warmupIdentity is an identity model of INT32 [2] rows, batching up to 4,
// with model_warmup samples.
func warmupIdentity(name, samples string) testenv.Model {
	return testenv.Model{Name: name, Config: fmt.Sprintf(`name: "%s"
backend: "identity"
max_batch_size: 4
input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ 2 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ 2 ] } ]
instance_group [ { count: 1 kind: KIND_CPU } ]
model_warmup [ %s ]
`, name, samples)}
}

// TestWarmupServe: model_warmup samples run on the identity backend
// before the model serves (its statistics count them before any client
// request), with data from the model's warmup/ directory; a file too short
// fails the load with Triton's text.
func TestWarmupServe(t *testing.T) {
	t.Parallel()
	repo := testenv.Repository(t,
		warmupIdentity("warm", `{ name: "from_file" batch_size: 3 count: 2 inputs { key: "INPUT0" value: { data_type: TYPE_INT32 dims: [ 2 ] input_data_file: "row.bin" } } },
  { name: "zeros" batch_size: 1 inputs { key: "INPUT0" value: { data_type: TYPE_INT32 dims: [ 2 ] zero_data: true } } }`),
		warmupIdentity("short", `{ name: "s" batch_size: 1 inputs { key: "INPUT0" value: { data_type: TYPE_INT32 dims: [ 2 ] input_data_file: "row.bin" } } }`))
	for model, data := range map[string][]byte{"warm": {1, 0, 0, 0, 2, 0, 0, 0}, "short": {1, 0, 0, 0}} {
		dir := filepath.Join(repo, model, "warmup")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "row.bin"), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	srv := startServer(t, repo, "--exit-on-error=false", "--log-verbose", "1")
	st, _ := srv.modelStats(t, "warm")
	// from_file: 2 executions of 3 requests; zeros: 1 of 1.
	if st.GetExecutionCount() != 3 || st.GetInferenceCount() != 7 {
		t.Errorf("before any client request: %d executions, %d inferences; want the warmup's 3 and 7", st.GetExecutionCount(), st.GetInferenceCount())
	}
	for _, want := range []string{
		"model 'warm' instance warm_0_0 is running warmup sample 'from_file' for iteration 2",
		"model 'warm' instance warm_0_0 is running warmup sample 'zeros' for iteration 1",
	} {
		if !strings.Contains(srv.Log(), want) {
			t.Errorf("the log does not say %q", want)
		}
	}
	line := indexLine(t, srv, "short", "1")
	const want = "warmup setting expects 8 bytes, but the data provided from row.binonly has 4 bytes"
	if line.GetState() != "UNAVAILABLE" || !strings.Contains(line.GetReason(), want) {
		t.Errorf("short: %s %q, want UNAVAILABLE with %q", line.GetState(), line.GetReason(), want)
	}
}
