// Package deploy_test checks the deployment files: the Helm chart lints and
// renders, and every probe path and port the chart and the KServe
// ServingRuntime name answers on a running `tritonhost serve`.
package deploy_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/tritonhost/tritonhost/internal/testenv"
)

// helm returns the helm binary, or skips the test when it is not installed.
func helm(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("helm")
	if err != nil {
		t.Skip("helm is not installed (.ci/run installs it with go install helm.sh/helm/v3/cmd/helm): the chart is not checked")
	}
	return path
}

func chartDir(t *testing.T) string {
	return filepath.Join(testenv.RepoRoot(t), "deploy", "helm", "tritonhost")
}

func run(t *testing.T, name string, args ...string) []byte {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, out)
	}
	return out
}

// manifest is the part of a rendered Kubernetes object the tests read.
type manifest struct {
	Kind     string `yaml:"kind"`
	Metadata struct {
		Name string `yaml:"name"`
	} `yaml:"metadata"`
	Spec struct {
		ClusterIP string `yaml:"clusterIP"`
		Ports     []struct {
			Name       string `yaml:"name"`
			Port       int    `yaml:"port"`
			TargetPort string `yaml:"targetPort"`
		} `yaml:"ports"`
		Template struct {
			Spec podSpec `yaml:"spec"`
		} `yaml:"template"`
		Containers []container `yaml:"containers"` // ServingRuntime
		Endpoints  []struct {
			Port   string `yaml:"port"`
			Path   string `yaml:"path"`
			Scheme string `yaml:"scheme"`
		} `yaml:"endpoints"` // ServiceMonitor
		Metrics []struct {
			Pods struct {
				Metric struct {
					Name string `yaml:"name"`
				} `yaml:"metric"`
			} `yaml:"pods"`
		} `yaml:"metrics"` // HorizontalPodAutoscaler
	} `yaml:"spec"`
}

type podSpec struct {
	Containers []container `yaml:"containers"`
	Volumes    []struct {
		Name   string `yaml:"name"`
		Secret *struct {
			SecretName string `yaml:"secretName"`
		} `yaml:"secret"`
	} `yaml:"volumes"`
}

type container struct {
	Args  []string `yaml:"args"`
	Ports []struct {
		Name          string `yaml:"name"`
		ContainerPort int    `yaml:"containerPort"`
	} `yaml:"ports"`
	LivenessProbe  *probe `yaml:"livenessProbe"`
	ReadinessProbe *probe `yaml:"readinessProbe"`
	StartupProbe   *probe `yaml:"startupProbe"`
	Resources      struct {
		Limits map[string]any `yaml:"limits"`
	} `yaml:"resources"`
	Env []struct {
		Name      string `yaml:"name"`
		ValueFrom struct {
			SecretKeyRef struct {
				Name string `yaml:"name"`
				Key  string `yaml:"key"`
			} `yaml:"secretKeyRef"`
		} `yaml:"valueFrom"`
	} `yaml:"env"`
	VolumeMounts []struct {
		Name      string `yaml:"name"`
		MountPath string `yaml:"mountPath"`
	} `yaml:"volumeMounts"`
}

type probe struct {
	HTTPGet struct {
		Path   string    `yaml:"path"`
		Port   yaml.Node `yaml:"port"`
		Scheme string    `yaml:"scheme"`
	} `yaml:"httpGet"`
	TCPSocket *struct {
		Port yaml.Node `yaml:"port"`
	} `yaml:"tcpSocket"`
}

// port resolves a probe's or a Service's port (a number or a container
// port's name).
func (c *container) port(t *testing.T, p string) int {
	t.Helper()
	if n, err := strconv.Atoi(p); err == nil {
		return n
	}
	for _, cp := range c.Ports {
		if cp.Name == p {
			return cp.ContainerPort
		}
	}
	t.Fatalf("no container port named %q", p)
	return 0
}

func render(t *testing.T, sets ...string) []manifest {
	t.Helper()
	args := []string{"template", "th", chartDir(t)}
	for _, s := range sets {
		args = append(args, "--set", s)
	}
	return decodeAll(t, run(t, helm(t), args...))
}

func decodeAll(t *testing.T, data []byte) []manifest {
	t.Helper()
	var out []manifest
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var m manifest
		err := dec.Decode(&m)
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("rendered YAML: %v", err)
		}
		if m.Kind != "" {
			out = append(out, m)
		}
	}
}

func find(t *testing.T, ms []manifest, kind, name string) *manifest {
	t.Helper()
	for i := range ms {
		if ms[i].Kind == kind && (name == "" || ms[i].Metadata.Name == name) {
			return &ms[i]
		}
	}
	t.Fatalf("no %s %q rendered", kind, name)
	return nil
}

func TestChartLints(t *testing.T) {
	h := helm(t)
	run(t, h, "lint", "--strict", chartDir(t))
	run(t, h, "lint", "--strict", chartDir(t), "--set", "serviceMonitor.enabled=true,autoscaling.enabled=true,gpu.count=1")
}

// TestChartRendersTritonsLayout: Triton's ports, the health probes, both
// Services, and the optional ServiceMonitor, autoscaler and GPUs.
func TestChartRendersTritonsLayout(t *testing.T) {
	ms := render(t, "serviceMonitor.enabled=true", "autoscaling.enabled=true", "gpu.count=2")
	c := &find(t, ms, "Deployment", "").Spec.Template.Spec.Containers[0]
	for name, want := range map[string]int{"http": 8000, "grpc": 8001, "metrics": 8002} {
		if got := c.port(t, name); got != want {
			t.Errorf("container port %s = %d, want %d", name, got, want)
		}
	}
	if c.LivenessProbe.HTTPGet.Path != "/v2/health/live" || c.ReadinessProbe.HTTPGet.Path != "/v2/health/ready" {
		t.Errorf("probes %+v %+v", c.LivenessProbe.HTTPGet, c.ReadinessProbe.HTTPGet)
	}
	if c.Resources.Limits["nvidia.com/gpu"] != 2 {
		t.Errorf("limits %v, want nvidia.com/gpu: 2", c.Resources.Limits)
	}
	if s := find(t, ms, "Service", "th-tritonhost"); len(s.Spec.Ports) != 3 || s.Spec.ClusterIP != "" {
		t.Errorf("service %+v", s.Spec)
	}
	if s := find(t, ms, "Service", "th-tritonhost-headless"); s.Spec.ClusterIP != "None" || s.Spec.Ports[0].TargetPort != "grpc" {
		t.Errorf("headless service %+v", s.Spec)
	}
	if sm := find(t, ms, "ServiceMonitor", ""); sm.Spec.Endpoints[0].Port != "metrics" || sm.Spec.Endpoints[0].Path != "/metrics" {
		t.Errorf("service monitor %+v", sm.Spec.Endpoints)
	}
	if hpa := find(t, ms, "HorizontalPodAutoscaler", ""); hpa.Spec.Metrics[0].Pods.Metric.Name != "nv_inference_queue_duration_us" {
		t.Errorf("autoscaler %+v", hpa.Spec.Metrics)
	}
	for _, kind := range []string{"ServiceMonitor", "HorizontalPodAutoscaler"} {
		for _, m := range render(t) {
			if m.Kind == kind {
				t.Errorf("%s rendered while not enabled", kind)
			}
		}
	}
}

// TestChartReadsARepositoryInObjectStorage: with the repository's path in
// object storage, the server is pointed at it, no volume is mounted for
// it, and extraEnv brings the credentials from a Secret.
func TestChartReadsARepositoryInObjectStorage(t *testing.T) {
	ms := render(t, "modelRepository.path=s3://bucket/models",
		"extraEnv[0].name=AWS_ACCESS_KEY_ID", "extraEnv[0].valueFrom.secretKeyRef.name=s3-credentials",
		"extraEnv[0].valueFrom.secretKeyRef.key=access-key-id")
	spec := find(t, ms, "Deployment", "").Spec.Template.Spec
	c := &spec.Containers[0]
	if !slices.Contains(c.Args, "--model-repository=s3://bucket/models") {
		t.Errorf("args %v do not name the bucket", c.Args)
	}
	for _, v := range spec.Volumes {
		if v.Name == "models" {
			t.Errorf("a models volume is mounted for a repository in object storage")
		}
	}
	found := false
	for _, e := range c.Env {
		if e.Name == "AWS_ACCESS_KEY_ID" && e.ValueFrom.SecretKeyRef.Name == "s3-credentials" && e.ValueFrom.SecretKeyRef.Key == "access-key-id" {
			found = true
		}
	}
	if !found {
		t.Errorf("env %+v lacks AWS_ACCESS_KEY_ID from the Secret", c.Env)
	}
	local := find(t, render(t), "Deployment", "").Spec.Template.Spec
	if len(local.Volumes) == 0 || local.Volumes[0].Name != "models" {
		t.Errorf("the default chart mounts no models volume: %+v", local.Volumes)
	}
}

// TestChartProbesAndPortsAnswerOnTheServer runs tritonhost with the args the
// chart renders (on free ports) and checks every probe and port it names.
func TestChartProbesAndPortsAnswerOnTheServer(t *testing.T) {
	ports := freePorts(t, 3)
	ms := render(t, fmt.Sprintf("ports.http=%d", ports[0]), fmt.Sprintf("ports.grpc=%d", ports[1]), fmt.Sprintf("ports.metrics=%d", ports[2]),
		"serviceMonitor.enabled=true")
	c := &find(t, ms, "Deployment", "").Spec.Template.Spec.Containers[0]
	startServer(t, c.Args)
	for _, p := range []*probe{c.LivenessProbe, c.ReadinessProbe, c.StartupProbe} {
		checkGet(t, c.port(t, p.HTTPGet.Port.Value), p.HTTPGet.Path)
	}
	for _, s := range ms {
		for _, sp := range s.Spec.Ports {
			checkListening(t, c.port(t, sp.TargetPort))
		}
	}
	for _, ep := range find(t, ms, "ServiceMonitor", "").Spec.Endpoints {
		checkGet(t, c.port(t, ep.Port), ep.Path)
	}
}

// TestServingRuntimeProbesAnswerOnTheServer does the same for the KServe
// ServingRuntime's container.
func TestServingRuntimeProbesAnswerOnTheServer(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(testenv.RepoRoot(t), "deploy", "kserve", "servingruntime.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	rt := find(t, decodeAll(t, data), "ServingRuntime", "tritonhost")
	c := &rt.Spec.Containers[0]
	ports := freePorts(t, 3)
	// The runtime's own ports may be taken on this machine: move each to a
	// free one, keeping the rest of the command line.
	remap := map[string]int{}
	var args []string
	for _, a := range c.Args[1:] { // after "serve"
		name, v, ok := strings.Cut(a, "=")
		switch {
		case ok && name == "--http-port":
			remap[v] = ports[0]
			a = fmt.Sprintf("%s=%d", name, ports[0])
		case ok && name == "--grpc-port":
			a = fmt.Sprintf("%s=%d", name, ports[1])
		case ok && name == "--metrics-port":
			a = fmt.Sprintf("%s=%d", name, ports[2])
		}
		args = append(args, a)
	}
	startServer(t, args)
	for _, p := range []*probe{c.LivenessProbe, c.ReadinessProbe} {
		port := remap[p.HTTPGet.Port.Value]
		if port == 0 {
			t.Fatalf("probe port %s is not the runtime's --http-port", p.HTTPGet.Port.Value)
		}
		checkGet(t, port, p.HTTPGet.Path)
	}
	checkGet(t, ports[2], "/metrics")
}

func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var out []int
	var ls []net.Listener
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		out = append(out, l.Addr().(*net.TCPAddr).Port)
	}
	for _, l := range ls {
		l.Close()
	}
	return out
}

func checkGet(t *testing.T, port int, path string) {
	t.Helper()
	c := &http.Client{Timeout: 30 * time.Second}
	url := fmt.Sprintf("http://127.0.0.1:%d%s", port, path)
	resp, err := c.Get(url) // startServer waited for every listener
	if err != nil {
		t.Errorf("GET :%d%s: %v", port, path, err)
		return
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("GET :%d%s: %d, want 200", port, path, resp.StatusCode)
	}
}

func checkListening(t *testing.T, port int) {
	t.Helper()
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	conn, err := net.DialTimeout("tcp", addr, 10*time.Second) // startServer waited for every listener
	if err != nil {
		t.Errorf("port %d does not answer: %v", port, err)
		return
	}
	conn.Close()
}

var binary string // tritonhost, built once by TestMain

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "tritonhost-deploy-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if binary, err = testenv.BuildServer(dir, false); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// startServer runs `tritonhost serve` on the example models with the
// serve flags of args (their model repository and backend directory
// left out), bound to loopback, until the test ends; it returns once the
// server serves on every listener args leave on.
func startServer(t *testing.T, args []string) {
	t.Helper()
	var kept []string
	for _, a := range args {
		if !strings.HasPrefix(a, "--model-repository") && !strings.HasPrefix(a, "--backend-directory") {
			kept = append(kept, a)
		}
	}
	testenv.StartServer(t, testenv.ServerConfig{Binary: binary, Args: kept})
}
