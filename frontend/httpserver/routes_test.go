package httpserver_test

import (
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"

	"tritonhost/core"
	"tritonhost/core/coretest"
	"tritonhost/frontend/httpserver"
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
	status, _, body := h.call(t, "GET", "/v2/models/echo/versions/x/ready", nil)
	wantError(t, "ready of version x", status, body, 400, "echo", "positive integer")

	var meta struct {
		Name, Version string
		Extensions    []string
	}
	_, _, body = h.call(t, "GET", "/v2", nil)
	decodeJSON(t, body, &meta)
	if meta.Name != "th" || meta.Version != "9.9" || !slices.Contains(meta.Extensions, "binary_tensor_data") || !slices.Contains(meta.Extensions, "generate") {
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
	status, _, body := h.call(t, "POST", "/v2/repository/models/m/load", []byte(`{"parameters":{"config":"{}"}}`))
	wantError(t, "load with a config override", status, body, 501, "not supported")
	status, _, body = h.call(t, "POST", "/v2/repository/models/nope/load", nil)
	wantError(t, "load of an unknown model", status, body, 404, "nope")
	if status, _, body := h.call(t, "POST", "/v2/repository/models/m/unload", []byte(`{"parameters":{"unload_dependents":true}}`)); status != 200 {
		t.Fatalf("unload: %d %s", status, body)
	}
	if got := index(`{"ready":true}`); got != "[]" {
		t.Errorf("ready index after unload: %s, want []", got)
	}
	status, _, body = h.call(t, "POST", "/v2/repository/index", []byte(`{"ready":`))
	wantError(t, "index with a broken body", status, body, 400, "JSON")
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
	for _, path := range []string{"/v2/systemsharedmemory/status", "/v2/cudasharedmemory/region/r/register", "/v2/trace/setting", "/v2/models/m/trace/setting"} {
		status, _, body := h.call(t, "POST", path, nil)
		wantError(t, path, status, body, 501, "not supported")
	}
	status, _, body = h.call(t, "DELETE", "/v2/health/live", nil)
	wantError(t, "DELETE /v2/health/live", status, body, 404, "DELETE")
}
