package ensemble_test

import (
	"bytes"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/coretest"
)

// decoupled is the configuration line of a decoupled model.
const decoupled = coretest.Decoupled

// vectorConfig is a model (named after its directory) from INPUT0 to
// OUTPUT0, INT32 vectors of any length, not batching, plus extra lines.
func vectorConfig(extra ...string) string { return coretest.VectorConfig(strings.Join(extra, "\n")) }

// Ensembles in these tests are built from "vector" models (vectorConfig:
// INPUT0 -> OUTPUT0, INT32 vectors, not batching) run by the fake backend.

// ensembleConfig returns the configuration of an ensemble with INT32
// vector inputs and outputs named by ios ("IN", "OUT:out" for an output)
// and the given steps; extra lines follow.
func ensembleConfig(inputs, outputs []string, steps []string, extra ...string) string {
	var b strings.Builder
	b.WriteString("platform: \"ensemble\"\nmax_batch_size: 0\n")
	for _, in := range inputs {
		fmt.Fprintf(&b, "input [ { name: %q data_type: TYPE_INT32 dims: [ -1 ] } ]\n", in)
	}
	for _, out := range outputs {
		fmt.Fprintf(&b, "output [ { name: %q data_type: TYPE_INT32 dims: [ -1 ] } ]\n", out)
	}
	fmt.Fprintf(&b, "ensemble_scheduling { %s step [ %s ] }\n", strings.Join(extra, " "), strings.Join(steps, ", "))
	return b.String()
}

// step returns one step of model with maps written "model tensor:ensemble
// tensor", comma-separated.
func step(model, inputs, outputs string) string {
	return fmt.Sprintf("{ model_name: %q model_version: -1 input_map [ %s ] output_map [ %s ] }", model, pairs(inputs), pairs(outputs))
}

func pairs(list string) string {
	var out []string
	for _, p := range strings.Split(list, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(p), ":")
		out = append(out, fmt.Sprintf("{ key: %q value: %q }", k, v))
	}
	return strings.Join(out, ", ")
}

// pipeline is ensemble "pipe": IN -> pre -> mid -> post -> OUT.
func pipeline(extra ...string) coretest.ModelDir {
	return coretest.ModelDir{Name: "pipe", Config: ensembleConfig([]string{"IN"}, []string{"OUT"},
		[]string{step("pre", "INPUT0:IN", "OUTPUT0:mid"), step("post", "INPUT0:mid", "OUTPUT0:OUT")}, extra...)}
}

// vectorModels returns vector models with the given names.
func vectorModels(names ...string) []coretest.ModelDir {
	var out []coretest.ModelDir
	for _, n := range names {
		out = append(out, coretest.ModelDir{Name: n, Config: vectorConfig()})
	}
	return out
}

// ints returns the INT32 values of output name of resp.
func ints(t *testing.T, resp *core.Response, name string) []int32 {
	t.Helper()
	if resp == nil {
		t.Fatalf("no response, want output %q", name)
	}
	if resp.Err != nil {
		t.Fatalf("error response %v, want output %q", resp.Err, name)
	}
	o, ok := coretest.OutputOf(resp, name)
	if !ok {
		t.Fatalf("response has no output %q: %+v", name, resp.Outputs)
	}
	return coretest.Int32s(o.Data)
}

// input returns an INT32 vector input.
func input(name string, values ...int32) core.Input {
	return coretest.Int32Input(name, []int64{int64(len(values))}, values...)
}

// indexReason returns the readiness and reason the repository index gives
// for model (its first line).
func indexReason(t *testing.T, srv *core.Server, model string) (core.ModelReadiness, string) {
	t.Helper()
	for _, st := range srv.RepositoryIndex() {
		if st.Name == model {
			return st.Readiness, st.Reason
		}
	}
	t.Fatalf("model %q is not in the repository index", model)
	return 0, ""
}

// running reports whether a goroutine is in fn, a function or method of
// package ensemble ("(*stepLimiter).acquire"), now.
func running(fn string) bool {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return bytes.Contains(buf[:n], []byte("github.com/tritonhost/tritonhost/core/ensemble."+fn+"("))
		}
		buf = make([]byte, 2*len(buf))
	}
}
