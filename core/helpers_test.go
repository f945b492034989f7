package core_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/coretest"
)

// decoupled is the configuration line of a decoupled model.
const decoupled = "model_transaction_policy { decoupled: true }"

// vectorConfig is a model (named after its directory) from INPUT0 to
// OUTPUT0, INT32 vectors of any length, no batching, one CPU instance
// (<name>_0) unless extra lines say otherwise.
func vectorConfig(extra ...string) string {
	return `backend: "go"
max_batch_size: 0
input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ -1 ] } ]
` + strings.Join(extra, "\n")
}

// batchingConfig is model "m": INT32 [1] rows from INPUT0 to OUTPUT0, batches
// of up to 4, one CPU instance; dynamic_batching lines may follow.
const batchingConfig = `name: "m"
backend: "go"
max_batch_size: 4
input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ 1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ 1 ] } ]
instance_group [ { count: 1 kind: KIND_CPU } ]
`

// rows returns a request of model "m" (batchingConfig) with a batch of n
// rows.
func rows(id string, n int) *core.Submission {
	return coretest.Request("m", id, coretest.Int32Input("INPUT0", []int64{int64(n), 1}))
}

// vector returns a request of model "m" with INPUT0 = values.
func vector(id string, values ...int32) *core.Submission {
	return coretest.Request("m", id, coretest.Int32Input("INPUT0", []int64{int64(len(values))}, values...))
}

// serveModel serves model "m" with config on a fake backend where it
// behaves as b.
func serveModel(t *testing.T, config string, b coretest.Behaviour) (*core.Server, *coretest.Provider) {
	t.Helper()
	p := coretest.NewProvider().Set("m", b)
	return coretest.Start(t, p, coretest.ModelDir{Name: "m", Config: config}), p
}

// callLog renders what the backend did for a request as "Op code" lines,
// code "ok" for success, for comparing with a table.
func callLog(calls []coretest.Call) []string {
	out := make([]string, len(calls))
	for i, c := range calls {
		code := "ok"
		if c.Err != nil {
			code = core.CodeOf(c.Err).String()
		}
		out[i] = c.Op + " " + code
	}
	return out
}

// wantExactError checks that err has code and exactly the message want.
func wantExactError(t *testing.T, what string, err error, code core.Code, want string) {
	t.Helper()
	if err == nil || core.CodeOf(err) != code || err.Error() != want {
		t.Errorf("%s: error %v (code %v)\nwant %q (code %v)", what, err, core.CodeOf(err), want, code)
	}
}

// indices returns the IndexParam of each response (-1 where missing).
func indices(resps []*core.Response) []int64 {
	out := make([]int64, len(resps))
	for i, r := range resps {
		out[i] = -1
		if p, ok := coretest.Param(r, coretest.IndexParam); ok {
			out[i] = p.Int
		}
	}
	return out
}

// shapes returns "NAME[d,d]" for each output of resp, sorted.
func shapes(resp *core.Response) []string {
	var out []string
	for _, o := range resp.Outputs {
		out = append(out, fmt.Sprintf("%s%v", o.Name, o.Shape))
	}
	slices.Sort(out)
	return out
}

// vectorModels returns vector models (vectorConfig) with the given names.
func vectorModels(names ...string) []coretest.ModelDir {
	var out []coretest.ModelDir
	for _, n := range names {
		out = append(out, coretest.ModelDir{Name: n, Config: vectorConfig()})
	}
	return out
}
