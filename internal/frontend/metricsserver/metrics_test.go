package metricsserver_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil/promlint"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/coretest"
	"github.com/tritonhost/tritonhost/core/metrics"
	"github.com/tritonhost/tritonhost/internal/frontend/metricsserver"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

var vector = coretest.VectorConfig("")

// scrape GETs /metrics, checks it with promlint (what promtool check
// metrics runs) and returns the text.
func scrape(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
		t.Fatalf("GET /metrics: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	problems, err := promlint.New(strings.NewReader(string(body))).Lint()
	if err != nil {
		t.Fatalf("the exposition does not parse: %v\n%s", err, body)
	}
	for _, p := range problems {
		if !metricsserver.NamingConvention(p.Text) {
			t.Errorf("lint: %s: %s", p.Metric, p.Text)
		}
	}
	return string(body)
}

func serve(t *testing.T, opts metricsserver.Options) (*metricsserver.Server, string) {
	t.Helper()
	s, err := metricsserver.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	ts := httptest.NewServer(s.NewHTTPServer().Handler)
	t.Cleanup(ts.Close)
	return s, ts.URL
}

func TestModelCountsRiseWithTraffic(t *testing.T) {
	t.Parallel()
	p := coretest.NewProvider().
		Set("plain", coretest.Reporting(true, coretest.Echo())).
		Set("stream", coretest.Answering(coretest.Stream(2))).
		Set("broken", coretest.Fail(errors.New("broken")))
	srv := coretest.Start(t, p, coretest.ModelDir{Name: "plain", Config: vector},
		coretest.ModelDir{Name: "stream", Config: coretest.VectorConfig(coretest.Decoupled)},
		coretest.ModelDir{Name: "broken", Config: vector})
	_, url := serve(t, metricsserver.Options{Core: srv})
	before := scrape(t, url)
	for _, want := range []string{`nv_inference_request_success{model="plain",version="1"} 0`,
		`nv_inference_request_failure{model="broken",reason="BACKEND",version="1"} 0`,
		`nv_inference_pending_request_count{model="plain",version="1"} 0`} {
		if !strings.Contains(before, want) {
			t.Errorf("before traffic, no %s in\n%s", want, before)
		}
	}
	in := func(id string) *core.Submission {
		return coretest.Request("", id, coretest.Int32Input("INPUT0", []int64{2}, 1, 2))
	}
	for i := range 3 {
		r := in(string(rune('a' + i)))
		r.Model = "plain"
		coretest.Infer(t, srv, r).Wait(t)
	}
	r := in("s")
	r.Model = "stream"
	coretest.Infer(t, srv, r).Wait(t)
	r = in("b")
	r.Model = "broken"
	coretest.Infer(t, srv, r).Wait(t)
	after := scrape(t, url)
	for _, want := range []string{
		`nv_inference_request_success{model="plain",version="1"} 3`,
		`nv_inference_count{model="plain",version="1"} 3`,
		`nv_inference_exec_count{model="plain",version="1"} 3`,
		`nv_inference_compute_infer_duration_us{model="plain",version="1"} 0`,
		`nv_inference_request_failure{model="broken",reason="BACKEND",version="1"} 1`,
		`nv_inference_first_response_histogram_ms_count{model="stream",version="1"} 1`,
		`nv_inference_first_response_histogram_ms_bucket{model="stream",version="1",le="100"}`,
		"# TYPE nv_inference_first_response_histogram_ms histogram",
		"# TYPE nv_inference_queue_duration_us counter",
		"# TYPE nv_inference_pending_request_count gauge",
	} {
		if !strings.Contains(after, want) {
			t.Errorf("after traffic, no %s", want)
		}
	}
	if strings.Contains(after, `nv_inference_first_response_histogram_ms_count{model="plain"`) {
		t.Error("a model that is not decoupled has a first-response histogram")
	}
}

// TestBackendFamiliesAreServedEscapedAndCannotShadowTheServers: the
// registry's families come out in the text format with their help, label
// values escaped and histograms cumulative; one named as a server family
// is left out.
func TestBackendFamiliesAreServedEscapedAndCannotShadowTheServers(t *testing.T) {
	t.Parallel()
	srv := coretest.Start(t, coretest.NewProvider())
	reg := metrics.NewRegistry()
	counter, _ := reg.Register("thost_requests", "Requests seen,\nin two lines with a \\ backslash.", metrics.KindCounter)
	var c metrics.Counter
	c.Add(7)
	counter.Add([]metrics.Label{{Name: "kind", Value: "quote \" backslash \\ newline \n"}}, func() (metrics.Collector, error) { return &c, nil })
	gauge, _ := reg.Register("thost_level", "Last level set.", metrics.KindGauge)
	var g metrics.Gauge
	g.Set(-1.5)
	gauge.Add(nil, func() (metrics.Collector, error) { return &g, nil })
	hist, _ := reg.Register("thost_latency", "Observed latencies.", metrics.KindHistogram)
	h, _ := metrics.NewHistogram([]float64{0.5, 1})
	for _, v := range []float64{0.25, 0.75, 3} {
		h.Observe(v)
	}
	hist.Add([]metrics.Label{{Name: "model", Value: "m"}}, func() (metrics.Collector, error) { return h, nil })
	shadow, _ := reg.Register("nv_inference_count", "", metrics.KindCounter)
	shadow.Add(nil, func() (metrics.Collector, error) { return &c, nil })

	_, url := serve(t, metricsserver.Options{Core: srv, Custom: reg})
	text := scrape(t, url)
	for _, want := range []string{
		`# HELP thost_requests Requests seen,\nin two lines with a \\ backslash.`,
		`thost_requests{kind="quote \" backslash \\ newline \n"} 7`,
		`thost_level -1.5`,
		`thost_latency_bucket{model="m",le="0.5"} 1`,
		`thost_latency_bucket{model="m",le="1"} 2`,
		`thost_latency_bucket{model="m",le="+Inf"} 3`,
		`thost_latency_sum{model="m"} 4`,
		`thost_latency_count{model="m"} 3`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("no %s in\n%s", want, text)
		}
	}
	if strings.Contains(text, "nv_inference_count 7") {
		t.Error("a backend family shadows the server's nv_inference_count")
	}
}

func TestCPUMetricsArePolledAtTheInterval(t *testing.T) {
	t.Parallel()
	proc := t.TempDir()
	data, _ := os.ReadFile("testdata/proc/meminfo")
	os.WriteFile(filepath.Join(proc, "meminfo"), data, 0o644)
	stat := filepath.Join(proc, "stat")
	os.WriteFile(stat, []byte("cpu  100 0 100 800 0 0 0 0 0 0\ncpu0 1 2 3\n"), 0o644)
	srv := coretest.Start(t, coretest.NewProvider())
	_, url := serve(t, metricsserver.Options{Core: srv, CPU: true, ProcRoot: proc, Interval: 20 * time.Millisecond})
	// 300 busy and 100 idle jiffies more: 0.75.
	os.WriteFile(stat, []byte("cpu  250 0 250 900 0 0 0 0 0 0\n"), 0o644)
	testenv.WaitUntil(t, "a poll of the new /proc/stat", func() bool {
		return strings.Contains(scrape(t, url), "nv_cpu_utilization 0.75")
	})
	text := scrape(t, url)
	for _, want := range []string{"nv_cpu_memory_total_bytes 1.6384e+07", "nv_cpu_memory_used_bytes 1.2288e+07"} {
		if !strings.Contains(text, want) {
			t.Errorf("no %s in\n%s", want, text)
		}
	}
}

// TestExtraCollectorsPlugIn: another subsystem's collector (GPU figures,
// say) is served beside the server's own.
func TestExtraCollectorsPlugIn(t *testing.T) {
	t.Parallel()
	srv := coretest.Start(t, coretest.NewProvider())
	s, url := serve(t, metricsserver.Options{Core: srv})
	g := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "nv_gpu_utilization", Help: "GPU utilization rate [0.0 - 1.0)"}, []string{"gpu_uuid"})
	g.WithLabelValues("GPU-1234").Set(0.5)
	if err := s.Register(g); err != nil {
		t.Fatal(err)
	}
	if text := scrape(t, url); !strings.Contains(text, `nv_gpu_utilization{gpu_uuid="GPU-1234"} 0.5`) {
		t.Errorf("the plugged-in collector is not served:\n%s", text)
	}
	if err := s.Register(g); err == nil {
		t.Error("registering the same collector twice succeeded")
	}
}

// TestNamespacedModelsShareTheirSeries: with model namespacing, a model of
// one name in two repositories is one series of each family, whose counts
// are those of both, as Triton's reporters with equal labels are one.
func TestNamespacedModelsShareTheirSeries(t *testing.T) {
	t.Parallel()
	p := coretest.NewProvider().Set("m", coretest.Reporting(true, coretest.Answering(coretest.Stream(1))))
	decoupled := coretest.ModelDir{Name: "m", Config: coretest.VectorConfig(coretest.Decoupled)}
	a := coretest.WriteRepository(t, decoupled)
	srv := coretest.Serve(t, core.Options{Backends: p, ModelRepositories: []string{a}, ModelNamespacing: true}, decoupled)
	_, url := serve(t, metricsserver.Options{Core: srv})
	for i, ns := range []string{a, srv.Repositories()[1], srv.Repositories()[1]} {
		m, err := srv.ModelIn(ns, "m", 0)
		if err != nil {
			t.Fatal(err)
		}
		c := coretest.NewCollector()
		req := coretest.Request("m", string(rune('a'+i)), coretest.Int32Input("INPUT0", []int64{1}, 1))
		if err := srv.Submit(t.Context(), m, req, c.Receive); err != nil {
			t.Fatal(err)
		}
		c.Wait(t)
	}
	body := scrape(t, url)
	for _, want := range []string{
		`nv_inference_request_success{model="m",version="1"} 3`,
		`nv_inference_exec_count{model="m",version="1"} 3`,
		`nv_inference_first_response_histogram_ms_count{model="m",version="1"} 3`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("no %s in\n%s", want, body)
		}
	}
	if n := strings.Count(body, `nv_inference_request_success{model="m"`); n != 1 {
		t.Errorf("%d series of nv_inference_request_success for m, want 1", n)
	}
}
