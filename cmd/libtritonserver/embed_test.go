package main

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/tritonhost/tritonhost/include"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// The example embeds a server through libtritonserver.so, as Triton's
// simple.cc embeds Triton: both are built by make (`make lib embed`), and
// the tests run bin/embed on examples/models with the project's backends.

// built builds the library and the example (once per make, under its lock)
// and returns the repository root.
func built(t *testing.T) string {
	t.Helper()
	testenv.BackendDir(t)
	testenv.Make(t, "lib", "embed")
	return testenv.RepoRoot(t)
}

// runEmbed runs bin/embed and returns its standard output and error (the
// server's log).
func runEmbed(t *testing.T, root string) (stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(filepath.Join(root, "bin", "embed"), testenv.ExampleModels(t), testenv.BackendDir(t), "1")
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("bin/embed: %v\nstdout:\n%s\nstderr:\n%s", err, out.String(), errOut.String())
	}
	return out.String(), errOut.String()
}

// line returns the output line that starts with prefix, without it.
func line(t *testing.T, out, prefix string) string {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if rest, ok := strings.CutPrefix(l, prefix); ok {
			return strings.TrimSpace(rest)
		}
	}
	t.Fatalf("no line %q in:\n%s", prefix, out)
	return ""
}

// TestEmbedServesTheExampleModelsInProcess: the C program creates a server
// from options, waits for it, reads its metadata, runs "simple" and the
// decoupled "square_int32" through its response allocator, reads the
// statistics and metrics, and stops and deletes the server, which leaves
// no object of the API behind.
func TestEmbedServesTheExampleModelsInProcess(t *testing.T) {
	root := built(t)
	out, log := runEmbed(t, root)
	if got := line(t, out, "api:"); got != "1.34" {
		t.Errorf("api version %q", got)
	}
	var server struct {
		Name       string   `json:"name"`
		Version    string   `json:"version"`
		Extensions []string `json:"extensions"`
	}
	if err := json.Unmarshal([]byte(line(t, out, "server metadata:")), &server); err != nil ||
		server.Name != "triton" || server.Version == "" || !slices.Contains(server.Extensions, "model_repository") {
		t.Errorf("server metadata %+v, %v", server, err)
	}
	if got := line(t, out, "simple metadata:"); !strings.Contains(got, `"inputs":[{"name":"INPUT0","datatype":"INT32","shape":[-1,16]}`) {
		t.Errorf("simple metadata %s", got)
	}
	line(t, out, "simple: INPUT0 + INPUT1 and INPUT0 - INPUT1 PASS")
	line(t, out, "square_int32: 5 responses, then the final PASS")
	line(t, out, "square_pipeline: 5 responses, then the final PASS")
	var stats struct {
		ModelStats []struct {
			Name           string `json:"name"`
			InferenceStats struct {
				Success struct {
					Count int `json:"count"`
				} `json:"success"`
			} `json:"inference_stats"`
		} `json:"model_stats"`
	}
	if err := json.Unmarshal([]byte(line(t, out, "simple statistics:")), &stats); err != nil ||
		len(stats.ModelStats) != 1 || stats.ModelStats[0].Name != "simple" || stats.ModelStats[0].InferenceStats.Success.Count != 1 {
		t.Errorf("simple statistics %+v, %v", stats, err)
	}
	if got := line(t, out, "metrics:"); !regexp.MustCompile(`^nv_inference_request_success\{model="simple",version="1"\} 1$`).MatchString(got) {
		t.Errorf("metrics line %q", got)
	}
	line(t, out, "PASS")

	// The backends the server loaded (repeat, square and bls name
	// libtritonserver.so in DT_NEEDED) resolved the API from the library
	// the program linked: no stub of that name was loaded beside it.
	var mapped []string
	for _, l := range strings.Split(out, "\n") {
		if p, ok := strings.CutPrefix(l, "mapped: "); ok {
			mapped = append(mapped, p)
		}
	}
	if want := filepath.Join(root, "lib", "libtritonserver.so"); len(mapped) != 1 || mapped[0] != want {
		t.Errorf("objects named libtritonserver.so: %q, want only %s", mapped, want)
	}
	if strings.Contains(log, "still live at exit") || !strings.Contains(log, "stopped") {
		t.Errorf("the server did not stop cleanly:\n%s", log)
	}
	if t.Failed() {
		t.Logf("stdout:\n%s\nstderr:\n%s", out, log)
	}
}

// TestEmbedLibraryExportsExactlyTheHeaderAPI: libtritonserver.so exports
// every host function the headers declare and nothing else, under the
// soname Triton's backends name.
func TestEmbedLibraryExportsExactlyTheHeaderAPI(t *testing.T) {
	root := built(t)
	syms := testenv.ReadDynamicSymbols(t, filepath.Join(root, "lib", "libtritonserver.so"))
	host, err := include.HostFunctions()
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, f := range host {
		want = append(want, f.Name)
	}
	slices.Sort(want)
	if got := syms.DefinedNames(); !slices.Equal(got, want) {
		t.Errorf("exports differ from the headers' host functions:\n got %d: %q\nwant %d", len(got), got, len(want))
	}
	for name, isFunc := range syms.Defined {
		if !isFunc {
			t.Errorf("%s is exported, not as a function", name)
		}
	}
	if syms.Soname != "libtritonserver.so" {
		t.Errorf("DT_SONAME %q, want libtritonserver.so", syms.Soname)
	}
	if slices.Contains(syms.Needed, "libtritonserver.so") {
		t.Errorf("the library needs a libtritonserver.so itself: %v", syms.Needed)
	}
}
