package deploy_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"

	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// accessSets turn on TLS on every listener (mutual on gRPC) and restrict
// the repository and shared memory on gRPC and inference on HTTP, with
// keys kept in Secrets.
var accessSets = []string{
	"tls.grpc.enabled=true", "tls.grpc.mutual=true", "tls.grpc.secretName=grpc-tls",
	"tls.http.enabled=true", "tls.http.secretName=http-tls",
	"tls.metrics.enabled=true", "tls.metrics.secretName=metrics-tls",
	"tls.reloadIntervalMs=500",
	"restrictedAPIs.grpc[0].categories={model-repository,shared-memory}", "restrictedAPIs.grpc[0].key=admin-key",
	"restrictedAPIs.grpc[0].secretName=th-admin", "restrictedAPIs.grpc[0].secretKey=token",
	"restrictedAPIs.http[0].categories={inference}", "restrictedAPIs.http[0].key=infer-key",
	"restrictedAPIs.http[0].secretName=th-infer", "restrictedAPIs.http[0].secretKey=token",
	"serviceMonitor.enabled=true",
}

func TestChartLintsWithTLSAndRestrictedAPIs(t *testing.T) {
	args := []string{"lint", "--strict", chartDir(t)}
	for _, set := range accessSets {
		args = append(args, "--set", set)
	}
	run(t, helm(t), args...)
}

// TestChartRendersTLSAndRestrictedAPIs: the TLS values become each
// listener's flags, with its Secret mounted where they point; the
// restricted keys reach the flags through environment variables read from
// their Secrets; probes and the ServiceMonitor speak HTTPS.
func TestChartRendersTLSAndRestrictedAPIs(t *testing.T) {
	ms := render(t, accessSets...)
	d := find(t, ms, "Deployment", "")
	c := &d.Spec.Template.Spec.Containers[0]
	for _, want := range []string{
		"--grpc-use-ssl-mutual=true", "--grpc-server-cert=/etc/tritonhost/tls/grpc/tls.crt", "--grpc-server-key=/etc/tritonhost/tls/grpc/tls.key",
		"--grpc-root-cert=/etc/tritonhost/tls/grpc/ca.crt",
		"--http-use-ssl=true", "--http-server-cert=/etc/tritonhost/tls/http/tls.crt", "--http-server-key=/etc/tritonhost/tls/http/tls.key",
		"--metrics-use-ssl=true", "--metrics-server-cert=/etc/tritonhost/tls/metrics/tls.crt", "--ssl-reload-interval=500",
		"--grpc-restricted-protocol=model-repository,shared-memory:admin-key=$(TRITONHOST_GRPC_RESTRICTED_0)",
		"--http-restricted-api=inference:infer-key=$(TRITONHOST_HTTP_RESTRICTED_0)",
	} {
		if !slices.Contains(c.Args, want) {
			t.Errorf("args %q lack %q", c.Args, want)
		}
	}
	for _, a := range c.Args {
		if strings.Contains(a, "--http-root-cert") || strings.Contains(a, "--metrics-use-ssl-mutual") {
			t.Errorf("%s rendered without mutual TLS asked for", a)
		}
	}
	env := map[string]string{}
	for _, e := range c.Env {
		env[e.Name] = e.ValueFrom.SecretKeyRef.Name + "/" + e.ValueFrom.SecretKeyRef.Key
	}
	if env["TRITONHOST_GRPC_RESTRICTED_0"] != "th-admin/token" || env["TRITONHOST_HTTP_RESTRICTED_0"] != "th-infer/token" {
		t.Errorf("env %v", env)
	}
	mounts, secrets := map[string]string{}, map[string]string{}
	for _, m := range c.VolumeMounts {
		mounts[m.Name] = m.MountPath
	}
	for _, v := range d.Spec.Template.Spec.Volumes {
		if v.Secret != nil {
			secrets[v.Name] = v.Secret.SecretName
		}
	}
	for _, l := range []string{"grpc", "http", "metrics"} {
		if mounts["tls-"+l] != "/etc/tritonhost/tls/"+l || secrets["tls-"+l] != l+"-tls" {
			t.Errorf("%s: mounted at %q from secret %q", l, mounts["tls-"+l], secrets["tls-"+l])
		}
	}
	for _, p := range []*probe{c.LivenessProbe, c.ReadinessProbe, c.StartupProbe} {
		if p.HTTPGet.Scheme != "HTTPS" || p.TCPSocket != nil {
			t.Errorf("probe %+v, want HTTPS", p.HTTPGet)
		}
	}
	if sm := find(t, ms, "ServiceMonitor", ""); sm.Spec.Endpoints[0].Scheme != "https" {
		t.Errorf("service monitor %+v, want https", sm.Spec.Endpoints)
	}

	// The kubelet has no client certificate, nor the health key: then the
	// probes only connect.
	for _, sets := range [][]string{
		{"tls.http.enabled=true", "tls.http.mutual=true", "tls.http.secretName=s"},
		{"restrictedAPIs.http[0].categories={metadata,health}", "restrictedAPIs.http[0].key=k", "restrictedAPIs.http[0].secretName=s", "restrictedAPIs.http[0].secretKey=v"},
	} {
		c := &find(t, render(t, sets...), "Deployment", "").Spec.Template.Spec.Containers[0]
		if p := c.ReadinessProbe; p.TCPSocket == nil || p.TCPSocket.Port.Value != "http" || p.HTTPGet.Path != "" {
			t.Errorf("%v: readiness probe %+v, want a TCP check of the http port", sets, p)
		}
	}
	for _, m := range render(t) {
		for _, c := range m.Spec.Template.Spec.Containers {
			for _, a := range c.Args {
				if strings.Contains(a, "ssl") || strings.Contains(a, "restricted") {
					t.Errorf("default values render %s", a)
				}
			}
		}
	}
	for set, msg := range map[string]string{
		"tls.metrics.enabled=true":                    "tls.metrics.secretName is required",
		"restrictedAPIs.grpc[0].categories={logging}": "each entry needs categories, key, secretName and secretKey",
	} {
		out, err := helmTemplate(t, set)
		if err == nil || !strings.Contains(out, msg) {
			t.Errorf("--set %s: %v %s, want %q", set, err, out, msg)
		}
	}
}

func helmTemplate(t *testing.T, sets ...string) (string, error) {
	args := []string{"template", "th", chartDir(t)}
	for _, s := range sets {
		args = append(args, "--set", s)
	}
	out, err := execOutput(helm(t), args...)
	return out, err
}

// TestChartTLSAndRestrictedAPIsServeOnTheServer runs tritonhost with the
// access arguments the chart renders, its Secrets' paths and environment
// variables standing in for what Kubernetes would mount and expand, and
// checks the HTTPS probes, the ServiceMonitor's HTTPS scrape, the HTTP
// restriction, and a gRPC client with its certificate and key.
func TestChartTLSAndRestrictedAPIsServeOnTheServer(t *testing.T) {
	ports := freePorts(t, 3)
	ms := render(t, append(accessSets, fmt.Sprintf("ports.http=%d", ports[0]), fmt.Sprintf("ports.grpc=%d", ports[1]),
		fmt.Sprintf("ports.metrics=%d", ports[2]))...)
	c := &find(t, ms, "Deployment", "").Spec.Template.Spec.Containers[0]

	dir := t.TempDir()
	serverCA, clientCA := testenv.NewCA(t, "server ca"), testenv.NewCA(t, "client ca")
	srv, alice := serverCA.Issue(t, "tritonhost", false), clientCA.Issue(t, "alice", true)
	for _, l := range []string{"grpc", "http", "metrics"} {
		if err := os.MkdirAll(filepath.Join(dir, l), 0o755); err != nil {
			t.Fatal(err)
		}
		testenv.WriteFile(t, filepath.Join(dir, l), "tls.crt", srv.CertPEM)
		testenv.WriteFile(t, filepath.Join(dir, l), "tls.key", srv.KeyPEM)
		testenv.WriteFile(t, filepath.Join(dir, l), "ca.crt", clientCA.CertPEM)
	}
	secrets := map[string]string{"TRITONHOST_GRPC_RESTRICTED_0": "admin-token", "TRITONHOST_HTTP_RESTRICTED_0": "infer-token"}
	var args []string
	for _, a := range c.Args {
		a = strings.ReplaceAll(a, "/etc/tritonhost/tls/", dir+"/")
		for name, v := range secrets {
			a = strings.ReplaceAll(a, "$("+name+")", v)
		}
		args = append(args, a)
	}
	startServer(t, args)

	httpsClient := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: serverCA.Pool()}}}
	get := func(port int, path string, header ...string) int {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, fmt.Sprintf("https://127.0.0.1:%d%s", port, path), nil)
		if len(header) == 2 {
			req.Header.Set(header[0], header[1])
		}
		resp, err := httpsClient.Do(req) // startServer waited for every listener
		if err != nil {
			t.Fatalf("GET :%d%s: %v", port, path, err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, p := range []*probe{c.LivenessProbe, c.ReadinessProbe, c.StartupProbe} {
		if got := get(c.port(t, p.HTTPGet.Port.Value), p.HTTPGet.Path); got != http.StatusOK {
			t.Errorf("probe %s over HTTPS: %d", p.HTTPGet.Path, got)
		}
	}
	if got := get(ports[2], "/metrics"); got != http.StatusOK {
		t.Errorf("metrics over HTTPS: %d", got)
	}
	if got := get(ports[0], "/v2/models/simple/stats"); got != http.StatusOK {
		t.Errorf("an unrestricted route: %d", got)
	}
	post := func(header ...string) int {
		req, _ := http.NewRequest(http.MethodPost, fmt.Sprintf("https://127.0.0.1:%d/v2/models/identity_int32/infer", ports[0]),
			strings.NewReader(`{"inputs":[{"name":"INPUT0","datatype":"INT32","shape":[1],"data":[7]}]}`))
		if len(header) == 2 {
			req.Header.Set(header[0], header[1])
		}
		resp, err := httpsClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := post(); got != http.StatusForbidden {
		t.Errorf("infer without the key: %d, want 403", got)
	}
	if got := post("infer-key", "infer-token"); got != http.StatusOK {
		t.Errorf("infer with the key from the Secret: %d", got)
	}

	conn, err := grpc.NewClient(fmt.Sprintf("127.0.0.1:%d", ports[1]), grpc.WithTransportCredentials(credentials.NewTLS(
		&tls.Config{RootCAs: serverCA.Pool(), Certificates: []tls.Certificate{alice.Cert}})))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	g := pb.NewGRPCInferenceServiceClient(conn)
	if _, err := g.RepositoryIndex(ctx, &pb.RepositoryIndexRequest{}); err == nil || !strings.Contains(err.Error(), "expecting header 'triton-grpc-protocol-admin-key'") {
		t.Errorf("RepositoryIndex without the key: %v", err)
	}
	if _, err := g.RepositoryIndex(metadata.AppendToOutgoingContext(ctx, "triton-grpc-protocol-admin-key", "admin-token"), &pb.RepositoryIndexRequest{}); err != nil {
		t.Errorf("RepositoryIndex with the key over mutual TLS: %v", err)
	}
}

func execOutput(name string, args ...string) (string, error) {
	out, err := exec.Command(name, args...).CombinedOutput()
	return string(out), err
}
