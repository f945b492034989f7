package httpserver_test

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/coretest"
	"github.com/tritonhost/tritonhost/core/serverlog"
	"github.com/tritonhost/tritonhost/internal/frontend/httpserver"
)

// jsonInferBody is an infer request of one vector of n values of type dt
// (INT32, FP32 or BYTES), in JSON, for a model that echoes it.
func jsonInferBody(dt string, n int) []byte {
	b := []byte(`{"inputs":[{"name":"INPUT0","datatype":"` + dt + `","shape":[` + strconv.Itoa(n) + `],"data":[`)
	for i := range n {
		if i > 0 {
			b = append(b, ',')
		}
		switch dt {
		case "INT32":
			b = strconv.AppendInt(b, int64(i*7919-1<<20), 10)
		case "FP32":
			b = strconv.AppendFloat(b, float64(float32(i)*0.37-11.5), 'g', -1, 32)
		case "BYTES":
			b = strconv.AppendQuote(b, "element "+strconv.Itoa(i))
		}
	}
	return append(b, `]}]}`...)
}

// jsonEchoServer serves models that echo one vector of INT32 ("echo"),
// FP32 ("fp") or BYTES ("strings") values.
func jsonEchoServer(tb testing.TB) http.Handler {
	tb.Helper()
	return jsonEchoFrontend(tb).Handler()
}

// jsonEchoFrontend is the server of jsonEchoServer's handler.
func jsonEchoFrontend(tb testing.TB) *httpserver.Server {
	tb.Helper()
	vec := func(t string) string {
		return `backend: "go"
input [ { name: "INPUT0" data_type: ` + t + ` dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: ` + t + ` dims: [ -1 ] } ]
`
	}
	p := coretest.NewProvider()
	srv := coretest.Serve(tb, core.Options{Backends: p, Logger: serverlog.New(io.Discard)},
		coretest.ModelDir{Name: "echo", Config: vec("TYPE_INT32")},
		coretest.ModelDir{Name: "fp", Config: vec("TYPE_FP32")},
		coretest.ModelDir{Name: "strings", Config: vec("TYPE_STRING")})
	for _, m := range []string{"echo", "fp", "strings"} {
		p.Set(m, coretest.Echo())
	}
	return httpserver.New(srv, httpserver.Options{})
}

var jsonInferModels = []struct{ dt, model string }{{"INT32", "echo"}, {"FP32", "fp"}, {"BYTES", "strings"}}

// BenchmarkInferJSON serves an infer request whose input and output are
// JSON values, through the server's handler: decoding, the model's echo
// and encoding.
func BenchmarkInferJSON(b *testing.B) {
	h := jsonEchoServer(b)
	for _, m := range jsonInferModels {
		for _, n := range []int{4, 64, 4096} {
			body := jsonInferBody(m.dt, n)
			path := "/v2/models/" + m.model + "/infer"
			b.Run(m.dt+"/"+strconv.Itoa(n), func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(body)))
				for b.Loop() {
					if resp := serve(h, "POST", path, body); resp.StatusCode != 200 {
						b.Fatalf("status %d", resp.StatusCode)
					}
				}
			})
		}
	}
}

// TestInferJSONAllocationsDoNotGrowWithElements holds a whole JSON infer
// request to a number of allocations nearly independent of its elements:
// a few more for 4096 than for 64, as buffers double, and none per
// element.
func TestInferJSONAllocationsDoNotGrowWithElements(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector drops pooled buffers at random, so allocations are not counted (the run without it counts them)")
	}
	const slack = 6 // the doublings of the body's buffer and the recorder's from 64 to 4096 elements
	h := jsonEchoServer(t)
	for _, m := range jsonInferModels {
		t.Run(m.dt, func(t *testing.T) {
			allocs := func(n int) float64 {
				body := jsonInferBody(m.dt, n)
				got := make([]byte, 1<<20)
				return testing.AllocsPerRun(10, func() {
					resp := serve(h, "POST", "/v2/models/"+m.model+"/infer", body)
					k, _ := io.ReadFull(resp.Body, got)
					got := got[:k]
					if resp.StatusCode != 200 || !strings.Contains(string(got), `"shape":[`+strconv.Itoa(n)+`]`) {
						t.Fatalf("%d %s values: %d %.200s", n, m.dt, resp.StatusCode, got)
					}
				})
			}
			small, large := allocs(64), allocs(4096)
			t.Logf("%v allocations for 64 elements, %v for 4096", small, large)
			if large > small+slack {
				t.Errorf("a JSON request of %s: %v allocations for 64 elements, %v for 4096", m.dt, small, large)
			}
		})
	}
}

// BenchmarkInferBinary serves an infer request of one vector of n INT32
// values as binary data, asked back as binary data, through the server's
// handler, as Triton's clients send it.
func BenchmarkInferBinary(b *testing.B) {
	h := jsonEchoServer(b)
	for _, n := range []int{16, 4096} {
		head := `{"inputs":[{"name":"INPUT0","datatype":"INT32","shape":[` + strconv.Itoa(n) + `],"parameters":{"binary_data_size":` + strconv.Itoa(4*n) + `}}],` +
			`"outputs":[{"name":"OUTPUT0","parameters":{"binary_data":true}}]}`
		body := append([]byte(head), make([]byte, 4*n)...)
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				resp := serve(h, "POST", "/v2/models/echo/infer", body, httpserver.HeaderContentLength, strconv.Itoa(len(head)))
				if resp.StatusCode != 200 {
					b.Fatalf("status %d", resp.StatusCode)
				}
			}
		})
	}
}
