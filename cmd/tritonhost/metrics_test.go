package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"

	"github.com/tritonhost/tritonhost/internal/frontend/metricsserver"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// scrapeMetrics GETs /metrics of the server's metrics endpoint and checks
// it: promlint always, and promtool check metrics when it is installed (CI
// installs it). Only the naming-convention problems of Triton's own names
// are allowed.
func (s *serverProcess) scrapeMetrics(t *testing.T) string {
	t.Helper()
	resp, err := httpGet("http://" + s.Metrics + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	problems, err := promlint.New(bytes.NewReader(resp)).Lint()
	if err != nil {
		t.Fatalf("the exposition does not parse: %v", err)
	}
	for _, p := range problems {
		if !metricsserver.NamingConvention(p.Text) {
			t.Errorf("lint: %s: %s", p.Metric, p.Text)
		}
	}
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Log("promtool is not installed (Debian package prometheus; .ci/run installs it): checked with promlint only")
		return string(resp)
	}
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = bytes.NewReader(resp)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit) && exit.ExitCode() == 3: // lint problems: only Triton's names may draw them
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			if !metricsserver.NamingConvention(line) {
				t.Errorf("promtool check metrics: %s", line)
			}
		}
	default:
		t.Errorf("promtool check metrics failed (%v):\n%s", err, out)
	}
	return string(resp)
}

// sample returns the value of the line starting with series.
func sample(t *testing.T, text, series string) float64 {
	t.Helper()
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` (\S+)$`).FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("no %s in the metrics", series)
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestMetricsPassPromtoolAndRiseWithTraffic(t *testing.T) {
	t.Parallel()
	s := startServer(t, "", "--metrics-interval-ms", "100")
	const success = `nv_inference_request_success{model="identity_fp32",version="1"}`
	const first = `nv_inference_first_response_histogram_ms_count{model="repeat_int32",version="1"}`
	before := s.scrapeMetrics(t)
	for _, series := range []string{"nv_cpu_utilization", "nv_cpu_memory_total_bytes", "nv_cpu_memory_used_bytes",
		`nv_inference_queue_duration_us{model="simple",version="1"}`, `nv_inference_pending_request_count{model="simple",version="1"}`,
		`nv_inference_request_failure{model="simple",reason="REJECTED",version="1"}`} {
		sample(t, before, series)
	}
	for range 5 {
		if status, _, body := s.httpCall(t, "POST", "/v2/models/identity_fp32/infer",
			[]byte(`{"inputs":[{"name":"INPUT0","datatype":"FP32","shape":[1,2],"data":[1,2]}]}`)); status != 200 {
			t.Fatalf("infer: %d %s", status, body)
		}
	}
	if status, _, body := s.httpCall(t, "POST", "/v2/models/repeat_int32/generate_stream", []byte(`{"IN":[1,2],"DELAY":[0,0],"WAIT":0}`)); status != 200 {
		t.Fatalf("generate_stream: %d %s", status, body)
	}
	// An ensemble streams over HTTP too, and counts as its steps do.
	const pipe = `{model="square_pipeline",version="1"}`
	if status, _, body := s.httpCall(t, "POST", "/v2/models/square_pipeline/generate_stream", []byte(`{"IN":3}`)); status != 200 ||
		strings.Count(string(body), "data: ") != 3 {
		t.Fatalf("generate_stream of square_pipeline: %d %s, want three events", status, body)
	}
	// identity reports a request's statistics after its response, which
	// the client may have read first: wait for the fifth request's.
	const execs = `nv_inference_exec_count{model="identity_fp32",version="1"}`
	testenv.Eventually(func() bool {
		text, err := httpGet("http://" + s.Metrics + "/metrics")
		return err == nil && sample(t, string(text), success) >= sample(t, before, success)+5 && sample(t, string(text), execs) >= 1
	})
	after := s.scrapeMetrics(t)
	if got, was := sample(t, after, "nv_inference_request_success"+pipe), sample(t, before, "nv_inference_request_success"+pipe); got != was+1 {
		t.Errorf("square_pipeline successes went from %v to %v after one request", was, got)
	}
	if got := sample(t, after, "nv_inference_pending_request_count"+pipe); got != 0 {
		t.Errorf("square_pipeline has %v pending requests after its only one finished", got)
	}
	if got, was := sample(t, after, success), sample(t, before, success); got != was+5 {
		t.Errorf("%s went from %v to %v after 5 requests", success, was, got)
	}
	if got, was := sample(t, after, first), sample(t, before, first); got != was+1 {
		t.Errorf("%s went from %v to %v after one streamed request", first, was, got)
	}
	if sample(t, after, execs) < 1 {
		t.Error("no execution counted")
	}
}

var gpuUtilizationRE = regexp.MustCompile(`(?m)^nv_gpu_utilization\{gpu_uuid="([^"]+)"\} (\S+)$`)

// TestMetricsReportTheGPUs: on the two GPUs of the fake NVML (no CUDA
// driver: the GPUs are measured, not used), /metrics carries Triton's GPU
// families for each GPU, by UUID, with the fake's figures, and still
// passes promtool; --allow-gpu-metrics=false leaves them out.
func TestMetricsReportTheGPUs(t *testing.T) {
	t.Parallel()
	env := os.Environ()
	noDriver := []string{"--nvml-library", testenv.FakeNVML(t), "--cuda-driver-library", "/nonexistent/libcuda.so.1"}
	s := startServerEnv(t, "", env, noDriver...)
	text := s.scrapeMetrics(t)
	gpus := gpuUtilizationRE.FindAllStringSubmatch(text, -1)
	if len(gpus) != 2 || gpus[0][1] == gpus[1][1] {
		t.Fatalf("nv_gpu_utilization lines %v, want one for each of 2 GPUs:\n%s", gpus, text)
	}
	for uuid, figures := range map[string]map[string]float64{
		testenv.FakeNVMLGPU0: {"nv_gpu_utilization": 0.42, "nv_gpu_memory_total_bytes": 80 << 30, "nv_gpu_memory_used_bytes": 3 << 30,
			"nv_gpu_power_usage": 123.456, "nv_gpu_power_limit": 700, "nv_energy_consumption": 0},
		testenv.FakeNVMLGPU1: {"nv_gpu_utilization": 0.5, "nv_gpu_memory_total_bytes": 40 << 30, "nv_gpu_memory_used_bytes": 1 << 30,
			"nv_gpu_power_usage": 100, "nv_gpu_power_limit": 400, "nv_energy_consumption": 0},
	} {
		label := `{gpu_uuid="` + uuid + `"}`
		for series, want := range figures {
			if got := sample(t, text, series+label); got != want {
				t.Errorf("%s%s = %v, want %v", series, label, got, want)
			}
		}
	}

	off := startServerEnv(t, "", env, append(noDriver, "--allow-gpu-metrics=false")...)
	if text := off.scrapeMetrics(t); strings.Contains(text, "nv_gpu_") || strings.Contains(text, "nv_energy_consumption") {
		t.Errorf("--allow-gpu-metrics=false, yet the GPU families are there:\n%s", text)
	}
}
