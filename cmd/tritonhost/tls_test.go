package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/peer"

	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// tlsArgs turns on TLS (mutual with root) on every listener, with the
// same files.
func tlsArgs(cert, key, root string) []string {
	var args []string
	for _, l := range []string{"grpc", "http", "metrics"} {
		args = append(args, "--"+l+"-server-cert", cert, "--"+l+"-server-key", key)
		if root == "" {
			args = append(args, "--"+l+"-use-ssl")
		} else {
			args = append(args, "--"+l+"-use-ssl-mutual", "--"+l+"-root-cert", root)
		}
	}
	return args
}

func tlsConfig(roots *x509.CertPool, client *testenv.Issued) *tls.Config {
	cfg := &tls.Config{RootCAs: roots, ServerName: "127.0.0.1"}
	if client != nil {
		cfg.Certificates = []tls.Certificate{client.Cert}
	}
	return cfg
}

// grpcTLS calls ServerLive over a new TLS connection and returns the
// serial number of the server's certificate.
func grpcTLS(t *testing.T, addr string, cfg *tls.Config) (*big.Int, error) {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(credentials.NewTLS(cfg)))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var p peer.Peer
	if _, err := pb.NewGRPCInferenceServiceClient(conn).ServerLive(ctxFor(t), &pb.ServerLiveRequest{}, grpc.Peer(&p)); err != nil {
		return nil, err
	}
	return p.AuthInfo.(credentials.TLSInfo).State.PeerCertificates[0].SerialNumber, nil
}

// httpsGet gets path over a new TLS connection and returns the serial
// number of the server's certificate.
func httpsGet(addr, path string, cfg *tls.Config) (*big.Int, error) {
	c := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg, DisableKeepAlives: true}}
	resp, err := c.Get("https://" + addr + path)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: status %d", path, resp.StatusCode)
	}
	return resp.TLS.PeerCertificates[0].SerialNumber, nil
}

// listenerCalls reaches each listener over TLS with cfg and returns the
// server certificate's serial number.
func listenerCalls(t *testing.T, s *serverProcess) map[string]func(*tls.Config) (*big.Int, error) {
	return map[string]func(*tls.Config) (*big.Int, error){
		"gRPC":    func(cfg *tls.Config) (*big.Int, error) { return grpcTLS(t, s.Addr, cfg) },
		"HTTP":    func(cfg *tls.Config) (*big.Int, error) { return httpsGet(s.HTTP, "/v2/health/ready", cfg) },
		"metrics": func(cfg *tls.Config) (*big.Int, error) { return httpsGet(s.Metrics, "/metrics", cfg) },
	}
}

// TestTLSOnEveryListenerAndCertificateRotation: with --grpc-use-ssl and
// tritonhost's --http-use-ssl and --metrics-use-ssl, each listener serves
// TLS clients and refuses plaintext; when the certificate and key files
// are replaced, new connections get the new certificate within the reload
// interval, while the server runs on and a connection made before keeps
// working.
func TestTLSOnEveryListenerAndCertificateRotation(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ca1, ca2 := testenv.NewCA(t, "first ca"), testenv.NewCA(t, "second ca")
	first, second := ca1.Issue(t, "server", false), ca2.Issue(t, "server renewed", false)
	cert, key := testenv.WriteFile(t, dir, "tls.crt", first.CertPEM), testenv.WriteFile(t, dir, "tls.key", first.KeyPEM)
	s := startServer(t, "", append(tlsArgs(cert, key, ""), "--ssl-reload-interval", "100")...)
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(ca1.CertPEM)
	roots.AppendCertsFromPEM(ca2.CertPEM)
	calls := listenerCalls(t, s)
	for name, call := range calls {
		if serial, err := call(tlsConfig(roots, nil)); err != nil || serial.Cmp(first.Serial) != 0 {
			t.Fatalf("%s over TLS: serial %v, %v", name, serial, err)
		}
		if _, err := call(tlsConfig(ca2.Pool(), nil)); err == nil {
			t.Errorf("%s: a client that does not trust the server's authority connected", name)
		}
	}
	if _, err := s.Client.ServerLive(ctxFor(t), &pb.ServerLiveRequest{}); err == nil {
		t.Error("a plaintext gRPC call was served")
	}
	for _, addr := range []string{s.HTTP, s.Metrics} {
		if resp, err := http.Get("http://" + addr + "/v2/health/ready"); err == nil {
			if resp.Body.Close(); resp.StatusCode == http.StatusOK {
				t.Errorf("a plaintext HTTP request to %s was served", addr)
			}
		}
	}
	// A connection made before the rotation.
	before, err := grpc.NewClient(s.Addr, grpc.WithTransportCredentials(credentials.NewTLS(tlsConfig(roots, nil))))
	if err != nil {
		t.Fatal(err)
	}
	defer before.Close()
	beforeClient := pb.NewGRPCInferenceServiceClient(before)
	if _, err := beforeClient.ServerLive(ctxFor(t), &pb.ServerLiveRequest{}); err != nil {
		t.Fatal(err)
	}

	testenv.WriteFile(t, dir, "tls.key", second.KeyPEM)
	testenv.WriteFile(t, dir, "tls.crt", second.CertPEM)
	for name, call := range calls {
		testenv.WaitUntil(t, name+" serving the renewed certificate", func() bool {
			serial, err := call(tlsConfig(roots, nil))
			return err == nil && serial.Cmp(second.Serial) == 0
		})
	}
	if _, err := beforeClient.ServerLive(ctxFor(t), &pb.ServerLiveRequest{}); err != nil {
		t.Errorf("the connection made before the rotation: %v", err)
	}
	for _, name := range []string{"gRPC", "HTTP", "metrics"} {
		testenv.WaitUntil(t, "the reload of "+name+" in the log", func() bool { return strings.Contains(s.Log(), name+" TLS: reloaded "+cert) })
	}
}

// TestMutualTLSOfTheBinary: with --grpc-use-ssl-mutual and tritonhost's
// --http-use-ssl-mutual and --metrics-use-ssl-mutual, each listener serves
// a client whose certificate the root file's authority signed, and refuses
// one without a certificate or with another authority's; when the root
// file names another authority, its clients are served and the first
// one's refused, without a restart.
func TestMutualTLSOfTheBinary(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	serverCA, clientCA, otherCA := testenv.NewCA(t, "server ca"), testenv.NewCA(t, "client ca"), testenv.NewCA(t, "other ca")
	srv := serverCA.Issue(t, "server", false)
	alice, bob := clientCA.Issue(t, "alice", true), otherCA.Issue(t, "bob", true)
	root := testenv.WriteFile(t, dir, "ca.crt", clientCA.CertPEM)
	s := startServer(t, "", append(tlsArgs(testenv.WriteFile(t, dir, "tls.crt", srv.CertPEM),
		testenv.WriteFile(t, dir, "tls.key", srv.KeyPEM), root), "--ssl-reload-interval", "100")...)
	roots := serverCA.Pool()
	calls := listenerCalls(t, s)
	for name, call := range calls {
		if _, err := call(tlsConfig(roots, &alice)); err != nil {
			t.Errorf("%s with alice's certificate: %v", name, err)
		}
		if _, err := call(tlsConfig(roots, nil)); err == nil {
			t.Errorf("%s: a client without a certificate was served", name)
		}
		if _, err := call(tlsConfig(roots, &bob)); err == nil {
			t.Errorf("%s: bob, whose authority the root file does not hold, was served", name)
		}
	}
	testenv.WriteFile(t, dir, "ca.crt", otherCA.CertPEM)
	for name, call := range calls {
		testenv.WaitUntil(t, name+" serving bob", func() bool {
			_, err := call(tlsConfig(roots, &bob))
			return err == nil
		})
		if _, err := call(tlsConfig(roots, &alice)); err == nil {
			t.Errorf("%s: alice is served after her authority left the root file", name)
		}
	}
}

// TestTLSFlagsAreChecked: TLS without a certificate, mutual TLS without a
// root, files that do not make a certificate, and restricted-API values
// that do not parse stop the server at start, naming the flag.
func TestTLSFlagsAreChecked(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ca := testenv.NewCA(t, "ca")
	is := ca.Issue(t, "server", false)
	cert, key := testenv.WriteFile(t, dir, "tls.crt", is.CertPEM), testenv.WriteFile(t, dir, "tls.key", is.KeyPEM)
	junk := testenv.WriteFile(t, dir, "junk.pem", []byte("junk"))
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--grpc-use-ssl"}, "--grpc-use-ssl needs --grpc-server-cert and --grpc-server-key"},
		{[]string{"--http-use-ssl", "--http-server-cert", cert}, "--http-use-ssl needs --http-server-cert and --http-server-key"},
		{[]string{"--metrics-use-ssl-mutual", "--metrics-server-cert", cert, "--metrics-server-key", key}, "--metrics-use-ssl-mutual needs --metrics-root-cert"},
		{[]string{"--grpc-use-ssl", "--grpc-server-cert", junk, "--grpc-server-key", key}, "gRPC TLS (--grpc-use-ssl): certificate " + junk},
		{[]string{"--http-use-ssl-mutual", "--http-server-cert", cert, "--http-server-key", key, "--http-root-cert", junk}, "holds no PEM certificate"},
		{[]string{"--grpc-restricted-protocol", "inference"}, "--grpc-restricted-protocol option format is '<protocols>:<key>=<value>'. Got inference"},
		{[]string{"--http-restricted-api", "infer:k=v"}, "unknown restricted api 'infer'"},
		{[]string{"--http-restricted-api", "health:k=v", "--http-restricted-api", "logging,health:k2=v"}, "restricted api 'health' can not be specified in multiple config groups"},
	} {
		args := append([]string{"serve", "--model-repository", testenv.ExampleModels(t), "--backend-directory", testenv.BackendDir(t),
			"--grpc-address", "127.0.0.1", "--grpc-port", "0", "--http-address", "127.0.0.1", "--http-port", "0", "--metrics-port", "0"}, c.args...)
		out, err := exec.CommandContext(ctxFor(t), serverBinary, args...).CombinedOutput()
		if err == nil || !strings.Contains(string(out), c.want) {
			t.Errorf("%v: %v\n%s\nwant an error with %q", c.args, err, out, c.want)
		}
	}
}
