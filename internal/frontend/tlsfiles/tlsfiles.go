// Package tlsfiles serves TLS from PEM files that an operator may replace
// while the server runs (a certificate renewed, a CA rotated, a Kubernetes
// secret updated): each listener's tls.Config picks the files up again
// when they change, without a restart.
//
// There is no goroutine: a new connection's handshake checks the files,
// at most once per check interval and only one handshake at a time; the
// others, and every handshake between checks, use the certificates loaded
// last. Files that change into something unusable (a certificate written
// before its key) leave the previous certificates in use, with a warning,
// until a later check finds a usable set. Connections already open keep
// the certificates they were made with.
package tlsfiles

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"github.com/tritonhost/tritonhost/core/serverlog"
)

// DefaultCheckInterval is how often, at most, the files are checked.
const DefaultCheckInterval = 10 * time.Second

// Options name one listener's files and how it serves them.
type Options struct {
	// Name is the listener in log messages ("gRPC", "HTTP", "metrics").
	Name string
	// CertFile and KeyFile hold the server's certificate chain and private
	// key, PEM-encoded. Both are required.
	CertFile, KeyFile string
	// ClientCAFile holds the PEM certificates of the authorities a
	// client's certificate must chain to; required with RequireClientCert.
	ClientCAFile string
	// RequireClientCert makes TLS mutual: a client without a certificate
	// signed by one of ClientCAFile's authorities is refused during the
	// handshake.
	RequireClientCert bool
	// NextProtos are the application protocols offered (ALPN).
	NextProtos []string
	// CheckInterval bounds how often the files are read again (default
	// DefaultCheckInterval).
	CheckInterval time.Duration
	// Logger reports reloads and files that cannot be used (nil: none).
	Logger *serverlog.Logger
	// now is the clock (tests).
	now func() time.Time
}

// Source is a listener's TLS configuration, kept current with its files.
// Safe for concurrent use.
type Source struct {
	opts     Options
	current  atomic.Pointer[loaded]
	next     atomic.Int64 // when the files are checked next (unix ns)
	checking atomic.Bool  // a handshake is checking the files
	failed   []byte       // the contents last refused (guarded by checking), so each is reported once
}

// loaded is one set of files as read and the configuration they make.
type loaded struct {
	contents [3][]byte // cert, key, client CAs as read
	config   *tls.Config
}

// New loads the files; it fails if they cannot be read or do not make a
// usable configuration.
func New(opts Options) (*Source, error) {
	if opts.CertFile == "" || opts.KeyFile == "" {
		return nil, errors.New("a certificate file and a key file are required")
	}
	if opts.RequireClientCert && opts.ClientCAFile == "" {
		return nil, errors.New("mutual TLS needs a root certificate file to verify clients with")
	}
	if opts.CheckInterval <= 0 {
		opts.CheckInterval = DefaultCheckInterval
	}
	if opts.now == nil {
		opts.now = time.Now
	}
	s := &Source{opts: opts}
	contents, err := s.read()
	if err != nil {
		return nil, err
	}
	l, err := s.load(contents)
	if err != nil {
		return nil, err
	}
	s.current.Store(l)
	s.next.Store(opts.now().Add(opts.CheckInterval).UnixNano())
	return s, nil
}

// Config returns the configuration a listener serves with: each handshake
// gets the configuration of the files as last loaded.
func (s *Source) Config() *tls.Config {
	return &tls.Config{
		MinVersion:         tls.VersionTLS12,
		NextProtos:         s.opts.NextProtos,
		GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) { return s.currentConfig(), nil },
	}
}

// currentConfig returns the configuration to use now, after checking the
// files if it is time and no other handshake is.
func (s *Source) currentConfig() *tls.Config {
	now := s.opts.now()
	if now.UnixNano() >= s.next.Load() && s.checking.CompareAndSwap(false, true) {
		s.check()
		s.next.Store(now.Add(s.opts.CheckInterval).UnixNano())
		s.checking.Store(false)
	}
	return s.current.Load().config
}

// check reads the files and, if they changed, loads them.
func (s *Source) check() {
	contents, err := s.read()
	cur := s.current.Load()
	if err == nil && same(cur.contents, contents) {
		return
	}
	var l *loaded
	if err == nil {
		l, err = s.load(contents)
	}
	if err != nil {
		if key := []byte(err.Error()); !bytes.Equal(key, s.failed) {
			s.failed = key
			s.warnf("%s TLS: the certificate files changed but cannot be used; serving with the previous ones: %v", s.opts.Name, err)
		}
		return
	}
	s.failed = nil
	s.current.Store(l)
	if s.opts.Logger != nil {
		s.opts.Logger.Infof("%s TLS: reloaded %s", s.opts.Name, s.describe(l))
	}
}

func same(a, b [3][]byte) bool {
	return bytes.Equal(a[0], b[0]) && bytes.Equal(a[1], b[1]) && bytes.Equal(a[2], b[2])
}

func (s *Source) read() ([3][]byte, error) {
	var out [3][]byte
	for i, name := range []string{s.opts.CertFile, s.opts.KeyFile, s.opts.ClientCAFile} {
		if name == "" || i == 2 && !s.opts.RequireClientCert {
			continue
		}
		b, err := os.ReadFile(name)
		if err != nil {
			return out, fmt.Errorf("read %s: %w", name, err)
		}
		out[i] = b
	}
	return out, nil
}

// load makes the per-connection configuration from the files' contents.
func (s *Source) load(c [3][]byte) (*loaded, error) {
	cert, err := tls.X509KeyPair(c[0], c[1])
	if err != nil {
		return nil, fmt.Errorf("certificate %s with key %s: %w", s.opts.CertFile, s.opts.KeyFile, err)
	}
	cfg := &tls.Config{
		MinVersion:   tls.VersionTLS12,
		NextProtos:   s.opts.NextProtos,
		Certificates: []tls.Certificate{cert},
	}
	if s.opts.RequireClientCert {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(c[2]) {
			return nil, fmt.Errorf("root certificate %s holds no PEM certificate", s.opts.ClientCAFile)
		}
		cfg.ClientCAs, cfg.ClientAuth = pool, tls.RequireAndVerifyClientCert
	}
	return &loaded{contents: c, config: cfg}, nil
}

func (s *Source) describe(l *loaded) string {
	leaf := l.config.Certificates[0].Leaf
	if leaf == nil {
		return s.opts.CertFile
	}
	return fmt.Sprintf("%s (subject %q, valid until %s)", s.opts.CertFile, leaf.Subject.String(), leaf.NotAfter.UTC().Format(time.RFC3339))
}

func (s *Source) warnf(format string, args ...any) {
	if s.opts.Logger != nil {
		s.opts.Logger.Warnf(format, args...)
	}
}
