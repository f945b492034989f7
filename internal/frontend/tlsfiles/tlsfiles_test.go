package tlsfiles

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"math/big"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tritonhost/tritonhost/core/serverlog"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// clock is a test's time, moved by hand.
type clock struct{ ns atomic.Int64 }

func (c *clock) now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *clock) advance(d time.Duration) { c.ns.Add(int64(d)) }

// serve accepts TLS connections with src's configuration on loopback,
// completes each handshake and writes one byte, and closes the connection
// when the client does; it returns the address. The listener closes at cleanup.
func serve(t *testing.T, src *Source) string {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tl := tls.NewListener(lis, src.Config())
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			c, err := tl.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(10 * time.Second))
				if c.(*tls.Conn).Handshake() == nil {
					_, _ = c.Write([]byte("k")) // the client's sign that it was accepted
					_, _ = io.Copy(io.Discard, c)
				}
			})
		}
	})
	t.Cleanup(func() {
		tl.Close()
		wg.Wait()
	})
	return lis.Addr().String()
}

// handshake connects with roots to trust and an optional client
// certificate, and returns the serial number of the server's certificate.
func handshake(addr string, roots *x509.CertPool, client *tls.Certificate) (*big.Int, error) {
	cfg := &tls.Config{RootCAs: roots, ServerName: "127.0.0.1"}
	if client != nil {
		cfg.Certificates = []tls.Certificate{*client}
	}
	c, err := tls.DialWithDialer(&net.Dialer{Timeout: 10 * time.Second}, "tcp", addr, cfg)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	// Under TLS 1.3 the server checks the client's certificate after the
	// client's handshake ends: its byte, or its alert, is the verdict.
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.ReadFull(c, make([]byte, 1)); err != nil {
		return nil, err
	}
	return c.ConnectionState().PeerCertificates[0].SerialNumber, nil
}

// TestCertificatesReloadWhenTheirFilesChange: new connections get a
// replaced certificate once the check interval has passed, not before; a
// certificate replaced without its key keeps the previous pair in use,
// with one warning, until the key follows.
func TestCertificatesReloadWhenTheirFilesChange(t *testing.T) {
	dir := t.TempDir()
	ca1, ca2 := testenv.NewCA(t, "ca one"), testenv.NewCA(t, "ca two")
	a, b, c := ca1.Issue(t, "server a", false), ca2.Issue(t, "server b", false), ca2.Issue(t, "server c", false)
	certFile, keyFile := testenv.WriteFile(t, dir, "tls.crt", a.CertPEM), testenv.WriteFile(t, dir, "tls.key", a.KeyPEM)
	var clk clock
	log := &testenv.LogBuffer{}
	src, err := New(Options{Name: "HTTP", CertFile: certFile, KeyFile: keyFile, CheckInterval: time.Minute,
		Logger: serverlog.New(log), now: clk.now})
	if err != nil {
		t.Fatal(err)
	}
	addr := serve(t, src)
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(ca1.CertPEM)
	roots.AppendCertsFromPEM(ca2.CertPEM)
	want := func(step string, is testenv.Issued) {
		t.Helper()
		serial, err := handshake(addr, roots, nil)
		if err != nil || serial.Cmp(is.Serial) != 0 {
			t.Fatalf("%s: serial %v (%v), want %v", step, serial, err, is.Serial)
		}
	}
	want("at start", a)
	testenv.WriteFile(t, dir, "tls.crt", b.CertPEM)
	testenv.WriteFile(t, dir, "tls.key", b.KeyPEM)
	clk.advance(59 * time.Second)
	want("before the interval passed", a)
	clk.advance(time.Second)
	want("once it passed", b)
	if n := strings.Count(log.String(), "HTTP TLS: reloaded "+certFile); n != 1 {
		t.Errorf("%d reloads logged, want 1:\n%s", n, log.String())
	}

	testenv.WriteFile(t, dir, "tls.crt", c.CertPEM) // the key of c not written yet
	for range 3 {
		clk.advance(time.Minute)
		want("with c's certificate and b's key", b)
	}
	if n := strings.Count(log.String(), "cannot be used; serving with the previous ones"); n != 1 {
		t.Errorf("%d warnings, want 1:\n%s", n, log.String())
	}
	testenv.WriteFile(t, dir, "tls.key", c.KeyPEM)
	clk.advance(time.Minute)
	want("with c's key too", c)
}

// TestMutualTLSAcceptsOnlyClientsOfTheRootAndFollowsItsRotation: with a
// client CA file, a client without a certificate, or with one another
// authority signed, is refused; one the file's authority signed is
// served; when the file names a new authority, its clients are served and
// the old one's refused.
func TestMutualTLSAcceptsOnlyClientsOfTheRootAndFollowsItsRotation(t *testing.T) {
	dir := t.TempDir()
	serverCA, clientCA, otherCA := testenv.NewCA(t, "server ca"), testenv.NewCA(t, "client ca"), testenv.NewCA(t, "other ca")
	srv := serverCA.Issue(t, "server", false)
	alice, mallory := clientCA.Issue(t, "alice", true), otherCA.Issue(t, "mallory", true)
	var clk clock
	src, err := New(Options{Name: "gRPC", CertFile: testenv.WriteFile(t, dir, "tls.crt", srv.CertPEM), KeyFile: testenv.WriteFile(t, dir, "tls.key", srv.KeyPEM),
		ClientCAFile: testenv.WriteFile(t, dir, "ca.crt", clientCA.CertPEM), RequireClientCert: true, now: clk.now})
	if err != nil {
		t.Fatal(err)
	}
	addr := serve(t, src)
	roots := serverCA.Pool()
	for _, c := range []struct {
		who    string
		client *tls.Certificate
		ok     bool
	}{{"no certificate", nil, false}, {"alice", &alice.Cert, true}, {"mallory", &mallory.Cert, false}} {
		if _, err := handshake(addr, roots, c.client); (err == nil) != c.ok {
			t.Errorf("%s: %v, want accepted %v", c.who, err, c.ok)
		}
	}
	testenv.WriteFile(t, dir, "ca.crt", otherCA.CertPEM)
	clk.advance(DefaultCheckInterval)
	if _, err := handshake(addr, roots, &mallory.Cert); err != nil {
		t.Errorf("mallory, once the root names her authority: %v", err)
	}
	if _, err := handshake(addr, roots, &alice.Cert); err == nil {
		t.Error("alice is still served after her authority was rotated out")
	}
}

// TestNewRefusesFilesItCannotServe: missing files, a key that is not the
// certificate's, a root file without certificates, mutual TLS without a
// root.
func TestNewRefusesFilesItCannotServe(t *testing.T) {
	dir := t.TempDir()
	ca := testenv.NewCA(t, "ca")
	a, b := ca.Issue(t, "a", false), ca.Issue(t, "b", false)
	cert, key, other := testenv.WriteFile(t, dir, "a.crt", a.CertPEM), testenv.WriteFile(t, dir, "a.key", a.KeyPEM), testenv.WriteFile(t, dir, "b.key", b.KeyPEM)
	junk := testenv.WriteFile(t, dir, "junk.pem", []byte("not a certificate"))
	for _, c := range []struct {
		opts Options
		want string
	}{
		{Options{KeyFile: key}, "a certificate file and a key file are required"},
		{Options{CertFile: cert, KeyFile: dir + "/missing.key"}, "missing.key"},
		{Options{CertFile: cert, KeyFile: other}, "private key does not match public key"},
		{Options{CertFile: junk, KeyFile: key}, "junk.pem"},
		{Options{CertFile: cert, KeyFile: key, RequireClientCert: true}, "needs a root certificate file"},
		{Options{CertFile: cert, KeyFile: key, RequireClientCert: true, ClientCAFile: junk}, "holds no PEM certificate"},
	} {
		if _, err := New(c.opts); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want an error with %q", c.opts, err, c.want)
		}
	}
}
