package httpserver_test

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/coretest"
	"github.com/tritonhost/tritonhost/internal/frontend/httpserver"
)

func TestStatusOfMapsCoreCodesAsTriton(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want int
	}{
		{core.Errorf(core.CodeInternal, "x"), 500},
		{core.Errorf(core.CodeNotFound, "x"), 404},
		{core.Errorf(core.CodeUnavailable, "x"), 503},
		{core.Errorf(core.CodeUnsupported, "x"), 501},
		{core.Errorf(core.CodeInvalidArg, "x"), 400},
		{core.Errorf(core.CodeAlreadyExists, "x"), 400},
		{core.Errorf(core.CodeCancelled, "x"), 400},
		{core.Errorf(core.CodeUnknown, "x"), 400},
		{errors.New("plain"), 400},
	} {
		if got := httpserver.StatusOf(tt.err); got != tt.want {
			t.Errorf("StatusOf(%v, code %v) = %d, want %d", tt.err, core.CodeOf(tt.err), got, tt.want)
		}
	}
}

func TestHealthMetadataConfigAndStatistics(t *testing.T) {
	t.Parallel()
	h := newHarness(t, setup{opts: httpserver.Options{ServerName: "th", ServerVersion: "9.9", StrictReadiness: true}},
		coretest.ModelDir{Name: "echo", Config: vector("max_batch_size: 4")})
	h.p.Set("echo", coretest.Reporting(true, coretest.Echo()))
	for _, path := range []string{"/v2/health/live", "/v2/health/ready", "/v2/models/echo/ready", "/v2/models/echo/versions/1/ready"} {
		if status, _, _ := h.call(t, "GET", path, nil); status != http.StatusOK {
			t.Errorf("GET %s: %d, want 200", path, status)
		}
	}
	for _, path := range []string{"/v2/models/nope/ready", "/v2/models/echo/versions/7/ready"} {
		if status, _, _ := h.call(t, "GET", path, nil); status != http.StatusBadRequest {
			t.Errorf("GET %s: %d, want 400 (not ready)", path, status)
		}
	}
	status, _, body := h.call(t, "GET", "/v2/models/nope/ready", nil)
	wantError(t, "ready of an unknown model", status, body, 400, "Model version not ready")
	status, _, body = h.call(t, "GET", "/v2/models/echo/versions/x/ready", nil)
	wantError(t, "ready of version x", status, body, 400,
		"failed to get model version from specified version string 'x' (details: stol), version should be an integral value > 0")

	var meta struct {
		Name, Version string
		Extensions    []string
	}
	_, _, body = h.call(t, "GET", "/v2", nil)
	decodeJSON(t, body, &meta)
	if meta.Name != "th" || meta.Version != "9.9" || !slices.Contains(meta.Extensions, "binary_tensor_data") || slices.Contains(meta.Extensions, "generate") {
		t.Errorf("server metadata %+v", meta)
	}

	var md struct {
		Name     string
		Versions []string
		Platform string
		Inputs   []struct {
			Name, Datatype string
			Shape          []int64
		}
	}
	_, _, body = h.call(t, "GET", "/v2/models/echo", nil)
	decodeJSON(t, body, &md)
	if md.Name != "echo" || !slices.Equal(md.Versions, []string{"1"}) || md.Platform != "go" ||
		len(md.Inputs) != 1 || md.Inputs[0].Datatype != "INT32" || !slices.Equal(md.Inputs[0].Shape, []int64{-1, -1}) {
		t.Errorf("model metadata %s", body)
	}
	status, _, body = h.call(t, "GET", "/v2/models/nope", nil)
	wantError(t, "metadata of an unknown model", status, body, 404, "nope")

	var cfg struct {
		Name         string `json:"name"`
		MaxBatchSize int    `json:"max_batch_size"`
	}
	_, hdr, body := h.call(t, "GET", "/v2/models/echo/versions/1/config", nil)
	decodeJSON(t, body, &cfg)
	if cfg.Name != "echo" || cfg.MaxBatchSize != 4 || hdr.Get("Content-Type") != "application/json" {
		t.Errorf("config %s (%s)", body, hdr.Get("Content-Type"))
	}

	infer := []byte(`{"inputs":[{"name":"INPUT0","datatype":"INT32","shape":[1,2],"data":[1,2]}]}`)
	for range 3 {
		if status, _, body := h.call(t, "POST", "/v2/models/echo/infer", infer); status != 200 {
			t.Fatalf("infer: %d %s", status, body)
		}
	}
	type stats struct {
		ModelStats []struct {
			Name           string `json:"name"`
			Version        string `json:"version"`
			InferenceCount uint64 `json:"inference_count"`
			ExecutionCount uint64 `json:"execution_count"`
			InferenceStats struct {
				Success struct{ Count, Ns uint64 } `json:"success"`
			} `json:"inference_stats"`
			BatchStats []struct {
				BatchSize uint64 `json:"batch_size"`
			} `json:"batch_stats"`
		} `json:"model_stats"`
	}
	for _, path := range []string{"/v2/models/stats", "/v2/models/echo/stats", "/v2/models/echo/versions/1/stats"} {
		var st stats
		_, _, body = h.call(t, "GET", path, nil)
		decodeJSON(t, body, &st)
		if len(st.ModelStats) != 1 || st.ModelStats[0].Version != "1" || st.ModelStats[0].InferenceStats.Success.Count != 3 ||
			st.ModelStats[0].ExecutionCount != 3 || len(st.ModelStats[0].BatchStats) != 1 {
			t.Errorf("GET %s: %s", path, body)
		}
	}
	status, _, body = h.call(t, "GET", "/v2/models/nope/stats", nil)
	wantError(t, "stats of an unknown model", status, body, 404, "nope")
}

func TestRepositoryIndexLoadAndUnload(t *testing.T) {
	t.Parallel()
	h := newHarness(t, setup{explicit: true}, coretest.ModelDir{Name: "m", Config: vector("")})
	index := func(body string) string {
		t.Helper()
		status, _, out := h.call(t, "POST", "/v2/repository/index", []byte(body))
		if status != 200 {
			t.Fatalf("index: %d %s", status, out)
		}
		return string(out)
	}
	if got := index(""); !strings.Contains(got, `"name":"m"`) || !strings.Contains(got, `"state":"UNAVAILABLE"`) {
		t.Errorf("index before load: %s", got)
	}
	if status, _, body := h.call(t, "POST", "/v2/repository/models/m/load", nil); status != 200 {
		t.Fatalf("load: %d %s", status, body)
	}
	if got := index(`{"ready":true}`); !strings.Contains(got, `"version":"1","state":"READY"`) {
		t.Errorf("ready index after load: %s", got)
	}
	status, _, body := h.call(t, "POST", "/v2/repository/models/nope/load", nil)
	wantError(t, "load of an unknown model", status, body, 500, "failed to load 'nope'")
	for _, path := range []string{"/v2/repository/r/index", "/v2/repository/r/models/m/load", "/v2/repository/r/models/m/unload"} {
		status, _, body := h.call(t, "POST", path, nil)
		wantError(t, path, status, body, 501, "'repository_name' specification is not supported")
	}
	status, _, body = h.call(t, "POST", "/v2/repository/models/m/unload", []byte(`{"parameters":{"unload_dependents":"yes"}}`))
	wantError(t, "unload_dependents of the wrong type", status, body, 400, "Unable to parse 'unload_dependents'")
	if status, _, body := h.call(t, "POST", "/v2/repository/models/m/unload", []byte(`{"parameters":{"unload_dependents":true}}`)); status != 200 {
		t.Fatalf("unload: %d %s", status, body)
	}
	if got := index(`{"ready":true}`); got != "[]" {
		t.Errorf("ready index after unload: %s, want []", got)
	}
	status, _, body = h.call(t, "POST", "/v2/repository/index", []byte(`{"ready":`))
	wantError(t, "index with a broken body", status, body, 400, "JSON")
}

// TestLoadTakesTritonsParameters: "config" (a JSON string) overrides the
// repository's configuration, "file:<path>" parameters (base64) bring the
// model's files; the refusals are Triton's.
func TestLoadTakesTritonsParameters(t *testing.T) {
	t.Parallel()
	h := newHarness(t, setup{explicit: true}, coretest.ModelDir{Name: "echo", Config: vector("")})
	h.p.Set("echo", coretest.Echo())
	h.p.Set("fresh", coretest.Echo())
	override := `{"backend":"go","input":[{"name":"INPUT0","data_type":"TYPE_INT32","dims":[2]}],"output":[{"name":"OUTPUT0","data_type":"TYPE_INT32","dims":[2]}]}`
	params := func(kv ...string) []byte {
		obj := map[string]json.RawMessage{}
		for i := 0; i+1 < len(kv); i += 2 {
			obj[kv[i]] = json.RawMessage(kv[i+1])
		}
		b, _ := json.Marshal(map[string]any{"parameters": obj})
		return b
	}
	quoted, _ := json.Marshal(override)
	if status, _, body := h.call(t, "POST", "/v2/repository/models/echo/load", params("config", string(quoted))); status != 200 {
		t.Fatalf("load with a config: %d %s", status, body)
	}
	_, _, body := h.call(t, "GET", "/v2/models/echo/config", nil)
	if !strings.Contains(string(body), `"dims":[2]`) {
		t.Errorf("config after the override: %s", body)
	}
	status, _, body := h.call(t, "POST", "/v2/models/echo/infer", []byte(`{"id":"r","inputs":[{"name":"INPUT0","datatype":"INT32","shape":[3],"data":[1,2,3]}]}`))
	wantError(t, "a request the override refuses", status, body, 400,
		"[request id: r] unexpected shape for input 'INPUT0' for model 'echo'. Expected [2], got [3]. ")

	file := `"` + base64.StdEncoding.EncodeToString([]byte{1, 2}) + `"`
	if status, _, body := h.call(t, "POST", "/v2/repository/models/fresh/load", params("config", string(quoted), "file:1/weights", file)); status != 200 {
		t.Fatalf("a model from files: %d %s", status, body)
	}
	if status, _, body := h.call(t, "POST", "/v2/models/fresh/infer", []byte(`{"inputs":[{"name":"INPUT0","datatype":"INT32","shape":[2],"data":[1,2]}]}`)); status != 200 {
		t.Errorf("infer on the model loaded from files: %d %s", status, body)
	}
	for _, tc := range []struct {
		what   string
		body   []byte
		status int
		want   string
	}{
		{"a config that is not a string", params("config", "{}"), 400, "Unable to parse load parameter 'config': expected a string"},
		{"a file that is not base64", params("config", string(quoted), "file:1/x", `"%%%"`), 400, "Unable to parse load parameter 'file:1/x': not base64"},
		{"an unknown parameter", params("nope", `"x"`), 400, "unrecognized load parameter 'nope'."},
		{"files without a config", params("file:1/x", `""`), 500,
			"failed to load 'echo', failed to poll from model repository: Load parameter 'config' must be specified for model file override"},
	} {
		status, _, body := h.call(t, "POST", "/v2/repository/models/echo/load", tc.body)
		wantError(t, tc.what, status, body, tc.status, tc.want)
	}
	// Models loaded by a request run on goroutines the test tracks: unload
	// them before its end.
	for _, name := range []string{"fresh", "echo"} {
		if status, _, body := h.call(t, "POST", "/v2/repository/models/"+name+"/unload", nil); status != 200 {
			t.Errorf("unload %s: %d %s", name, status, body)
		}
	}
}

func TestLoggingSettings(t *testing.T) {
	t.Parallel()
	h := newHarness(t, setup{}, coretest.ModelDir{Name: "m", Config: vector("")})
	status, _, body := h.call(t, "POST", "/v2/logging", []byte(`{"log_verbose_level":2,"log_info":false,"log_format":"ISO8601"}`))
	if status != 200 || !strings.Contains(string(body), `"log_verbose_level":2`) || !strings.Contains(string(body), `"log_info":false`) ||
		!strings.Contains(string(body), `"log_format":"ISO8601"`) {
		t.Errorf("POST /v2/logging: %d %s", status, body)
	}
	if got := h.srv.Logger().VerboseLevel(); got != 2 {
		t.Errorf("verbose level %d after the POST, want 2", got)
	}
	_, _, body = h.call(t, "GET", "/v2/logging", nil)
	if !strings.Contains(string(body), `"log_verbose_level":2`) {
		t.Errorf("GET /v2/logging: %s", body)
	}
	for _, tt := range []struct {
		body   string
		status int
		words  []string
	}{
		{`{"log_info":"yes"}`, 400, []string{"log_info", "bool"}},
		{`{"log_verbose_level":-1}`, 400, []string{"log_verbose_level"}},
		{`{"log_colour":true}`, 400, []string{"unknown log setting", "log_colour"}},
		{`{"log_file":"/tmp/x.log"}`, 403, []string{"--allow-log-file-setting"}},
		{`{"log_info":{}}`, 400, []string{"log_info"}},
	} {
		status, _, body := h.call(t, "POST", "/v2/logging", []byte(tt.body))
		wantError(t, "POST /v2/logging "+tt.body, status, body, tt.status, tt.words...)
	}
	if got := h.srv.Logger().VerboseLevel(); got != 2 {
		t.Errorf("a refused request changed the verbose level to %d", got)
	}
}

func TestUnknownAndUnsupportedRoutes(t *testing.T) {
	t.Parallel()
	h := newHarness(t, setup{}, coretest.ModelDir{Name: "m", Config: vector("")})
	status, _, body := h.call(t, "GET", "/v2/nothing/here", nil)
	wantError(t, "unknown route", status, body, 404, "/v2/nothing/here")
	for _, path := range []string{"/v2/trace/setting", "/v2/models/m/trace/setting"} {
		status, _, body := h.call(t, "POST", path, nil)
		wantError(t, path+" on a server without a tracer", status, body, 503, "the server does not support tracing")
	}
	status, _, body = h.call(t, "DELETE", "/v2/health/live", nil)
	wantError(t, "DELETE /v2/health/live", status, body, 404, "DELETE")
}

// TestInferRoutesAsServeMux: infer requests are routed as http.ServeMux
// routes them, whatever form their path takes: escaped segments are
// unescaped, unclean paths redirected, other methods left to the routes
// that have none.
func TestInferRoutesAsServeMux(t *testing.T) {
	t.Parallel()
	h := newHarness(t, setup{}, coretest.ModelDir{Name: "echo", Config: vector("")})
	h.p.Set("echo", coretest.Echo())
	body := `{"inputs":[{"name":"INPUT0","datatype":"INT32","shape":[2],"data":[1,2]}]}`
	for _, tt := range []struct {
		method, target string
		status         int
		want           string // in the answer: its body, or its Location
	}{
		{"POST", "/v2/models/echo/infer", 200, `"model_name":"echo"`},
		{"POST", "/v2/models/echo/versions/1/infer", 200, `"model_name":"echo"`},
		{"POST", "/v2/models/ech%6F/infer", 200, `"model_name":"echo"`},
		{"POST", "/v2/models/a%2Fb/infer", 404, `unknown model: 'a/b'`},
		{"POST", "/v2/models/nope/infer", 404, `unknown model: 'nope'`},
		{"POST", "/v2/models/./infer", 307, "Location: /v2/models/infer"},
		{"POST", "/v2/models/x/../echo/infer", 307, "Location: /v2/models/echo/infer"},
		{"POST", "/v2/models//infer", 307, "Location: /v2/models/infer"},
		{"GET", "/v2/models/echo/infer", 404, "no route GET /v2/models/echo/infer"},
		{"PUT", "/v2/models/echo/infer", 404, "no route PUT /v2/models/echo/infer"},
	} {
		t.Run(tt.method+" "+tt.target, func(t *testing.T) {
			conn, err := net.Dial("tcp", h.ts.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			fmt.Fprintf(conn, "%s %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
				tt.method, tt.target, len(body), body)
			answer, err := io.ReadAll(conn)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(string(answer), fmt.Sprintf("HTTP/1.1 %d ", tt.status)) || !strings.Contains(string(answer), tt.want) {
				t.Errorf("answer %q, want status %d and %q", answer, tt.status, tt.want)
			}
		})
	}
}
