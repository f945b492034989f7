package server

import (
	"crypto/tls"
	"fmt"
	"net"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/tritonhost/tritonhost/core/serverlog"
	"github.com/tritonhost/tritonhost/internal/frontend/tlsfiles"
	"github.com/tritonhost/tritonhost/internal/protocol"
)

// Who may connect and call: TLS on each listener, and the restricted APIs.

// enabled reports whether the listener serves TLS (mutual TLS implies it,
// as in Triton).
func (s *TLSConfig) enabled() bool { return s.Use || s.Mutual }

// validate checks the TLS settings of the listener whose flags start
// with prefix ("grpc", "http", "metrics").
func (s *TLSConfig) validate(prefix string) error {
	if !s.enabled() {
		return nil
	}
	if s.Cert == "" || s.Key == "" {
		return fmt.Errorf("--%s-use-ssl needs --%s-server-cert and --%s-server-key", prefix, prefix, prefix)
	}
	if s.Mutual && s.Root == "" {
		return fmt.Errorf("--%s-use-ssl-mutual needs --%s-root-cert, the authorities that sign client certificates", prefix, prefix)
	}
	return nil
}

// source loads the listener's files; nil when it serves plaintext. name is
// the listener in messages, prefix that of its flags; next the application
// protocols it offers.
func (s *TLSConfig) source(log *serverlog.Logger, name, prefix string, next []string, interval time.Duration) (*tlsfiles.Source, error) {
	if !s.enabled() {
		if s.Cert != "" || s.Key != "" || s.Root != "" {
			log.Warnf("--%s-server-cert, --%s-server-key and --%s-root-cert are ignored without --%s-use-ssl: %s serves plaintext",
				prefix, prefix, prefix, prefix, name)
		}
		return nil, nil
	}
	src, err := tlsfiles.New(tlsfiles.Options{Name: name, CertFile: s.Cert, KeyFile: s.Key, ClientCAFile: s.Root,
		RequireClientCert: s.Mutual, NextProtos: next, CheckInterval: interval, Logger: log})
	if err != nil {
		return nil, fmt.Errorf("%s TLS (--%s-use-ssl): %w", name, prefix, err)
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
func (s *TLSConfig) grpcOptions(log *serverlog.Logger, interval time.Duration) ([]grpc.ServerOption, error) {
	src, err := s.source(log, "gRPC", "grpc", nil, interval) // gRPC's credentials offer h2 themselves
	if src == nil || err != nil {
		return nil, err
	}
	return []grpc.ServerOption{grpc.Creds(credentials.NewTLS(src.Config()))}, nil
}

// listener wraps an HTTP listener (HTTP/1.1, as the plaintext port) in TLS;
// without TLS it returns lis as it is.
func (s *TLSConfig) listener(log *serverlog.Logger, name, prefix string, lis net.Listener, interval time.Duration) (net.Listener, error) {
	src, err := s.source(log, name, prefix, []string{"http/1.1"}, interval)
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
