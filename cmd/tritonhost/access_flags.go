package main

import (
	"crypto/tls"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/tritonhost/tritonhost/core/serverlog"
	"github.com/tritonhost/tritonhost/internal/frontend/tlsfiles"
	"github.com/tritonhost/tritonhost/internal/protocol"
)

// Who may connect and call: TLS on each listener, and the restricted APIs.

// sslFlags are one listener's TLS flags: Triton's for gRPC (--grpc-use-ssl,
// --grpc-use-ssl-mutual, --grpc-server-cert, --grpc-server-key,
// --grpc-root-cert), and the same names under --http- and --metrics- for
// tritonhost's own TLS on those ports, which Triton serves in plaintext
// only.
type sslFlags struct {
	prefix string // "grpc", "http", "metrics"
	Use    bool
	Mutual bool
	Cert   string
	Key    string
	Root   string
}

func (s *sslFlags) bind(f *pflag.FlagSet, prefix, listener string, own bool) {
	s.prefix = prefix
	note := ""
	if own {
		note = " (tritonhost's own: Triton serves " + listener + " in plaintext only)"
	}
	f.BoolVar(&s.Use, prefix+"-use-ssl", false, "serve "+listener+" over TLS, with --"+prefix+"-server-cert and --"+prefix+"-server-key"+note)
	f.BoolVar(&s.Mutual, prefix+"-use-ssl-mutual", false, "serve "+listener+" over mutual TLS: clients must present a certificate signed by --"+prefix+"-root-cert (implies --"+prefix+"-use-ssl)"+note)
	f.StringVar(&s.Cert, prefix+"-server-cert", "", "PEM file of the "+listener+" server's certificate chain; reloaded when it changes")
	f.StringVar(&s.Key, prefix+"-server-key", "", "PEM file of the "+listener+" server's private key; reloaded when it changes")
	f.StringVar(&s.Root, prefix+"-root-cert", "", "PEM file of the authorities that sign "+listener+" client certificates under --"+prefix+"-use-ssl-mutual; reloaded when it changes")
}

// enabled reports whether the listener serves TLS (mutual TLS implies it,
// as in Triton).
func (s *sslFlags) enabled() bool { return s.Use || s.Mutual }

func (s *sslFlags) validate() error {
	if !s.enabled() {
		return nil
	}
	if s.Cert == "" || s.Key == "" {
		return fmt.Errorf("--%s-use-ssl needs --%s-server-cert and --%s-server-key", s.prefix, s.prefix, s.prefix)
	}
	if s.Mutual && s.Root == "" {
		return fmt.Errorf("--%s-use-ssl-mutual needs --%s-root-cert, the authorities that sign client certificates", s.prefix, s.prefix)
	}
	return nil
}

// source loads the listener's files; nil when it serves plaintext. name is
// the listener in messages; next the application protocols it offers.
func (s *sslFlags) source(log *serverlog.Logger, name string, next []string, interval time.Duration) (*tlsfiles.Source, error) {
	if !s.enabled() {
		if s.Cert != "" || s.Key != "" || s.Root != "" {
			log.Warnf("--%s-server-cert, --%s-server-key and --%s-root-cert are ignored without --%s-use-ssl: %s serves plaintext",
				s.prefix, s.prefix, s.prefix, s.prefix, name)
		}
		return nil, nil
	}
	src, err := tlsfiles.New(tlsfiles.Options{Name: name, CertFile: s.Cert, KeyFile: s.Key, ClientCAFile: s.Root,
		RequireClientCert: s.Mutual, NextProtos: next, CheckInterval: interval, Logger: log})
	if err != nil {
		return nil, fmt.Errorf("%s TLS (--%s-use-ssl): %w", name, s.prefix, err)
	}
	mode := "TLS"
	if s.Mutual {
		mode = "mutual TLS (client certificates signed by " + s.Root + ")"
	}
	log.Infof("%s serves %s with %s, checked for changes every %v", name, mode, s.Cert, interval)
	return src, nil
}

// grpcOptions returns the gRPC server's transport credentials (none for
// plaintext).
func (s *sslFlags) grpcOptions(log *serverlog.Logger, interval time.Duration) ([]grpc.ServerOption, error) {
	src, err := s.source(log, "gRPC", nil, interval) // gRPC's credentials offer h2 themselves
	if src == nil || err != nil {
		return nil, err
	}
	return []grpc.ServerOption{grpc.Creds(credentials.NewTLS(src.Config()))}, nil
}

// listener wraps an HTTP listener (HTTP/1.1, as the plaintext port) in TLS;
// without TLS it returns lis as it is.
func (s *sslFlags) listener(log *serverlog.Logger, name string, lis net.Listener, interval time.Duration) (net.Listener, error) {
	src, err := s.source(log, name, []string{"http/1.1"}, interval)
	if src == nil || err != nil {
		return lis, err
	}
	return tls.NewListener(lis, src.Config()), nil
}

// restrictedFlag parses the values of a restricted-API flag into rs.
func restrictedFlag(rs *protocol.Restrictions, flag, kind, prefix string, lower bool, values []string) error {
	for _, v := range values {
		if err := rs.Add(flag, kind, prefix, lower, v); err != nil {
			return err
		}
	}
	return nil
}

// categoryList names the restricted-API categories, for --help.
func categoryList() string {
	var names []string
	for _, c := range protocol.Categories() {
		names = append(names, c.String())
	}
	return strings.Join(names, ", ")
}
