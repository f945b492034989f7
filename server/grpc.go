package server

import (
	"compress/gzip"
	"fmt"
	"math"
	"strings"

	"github.com/tritonhost/tritonhost/core/serverlog"
	"github.com/tritonhost/tritonhost/internal/frontend/grpcserver"
	"github.com/tritonhost/tritonhost/internal/protocol"
)

// gRPC's ping policy that grpc-go applies and does not let change.
const (
	grpcFixedMaxPingStrikes      = 2
	grpcFixedMaxPingsWithoutData = 2
)

func (g *GRPCConfig) validate(s *settings) error {
	for _, c := range []struct {
		name string
		v    int
	}{
		{"grpc-keepalive-time", g.KeepaliveTimeMs}, {"grpc-keepalive-timeout", g.KeepaliveTimeoutMs},
		{"grpc-http2-min-recv-ping-interval-without-data", g.MinRecvPingIntervalMs},
		{"grpc-max-concurrent-streams", g.MaxConcurrentStreams}, {"grpc-max-header-list-size", g.MaxHeaderListSize},
		{"grpc-max-connection-idle", g.MaxConnectionIdleMs},
		{"grpc-max-connections", g.MaxConnections}, {"grpc-handshake-timeout", g.HandshakeTimeoutMs},
		{"grpc-max-stream-pending-requests", g.MaxStreamPendingRequests}, {"grpc-max-response-pool-size", g.MaxResponsePoolSize},
		{"grpc-max-stream-response-bytes", g.MaxStreamResponseBytes}, {"grpc-stream-stall-timeout", g.StreamStallTimeoutMs},
	} {
		if c.v <= 0 {
			return fmt.Errorf("--%s must be positive, not %d", c.name, c.v)
		}
	}
	if g.MaxConnectionsPerClient < 0 {
		return fmt.Errorf("--grpc-max-connections-per-client must not be negative, not %d", g.MaxConnectionsPerClient)
	}
	if g.MaxHeaderListSize > math.MaxUint32 {
		return fmt.Errorf("--grpc-max-header-list-size %d is more than HTTP/2 can announce (%d)", g.MaxHeaderListSize, uint32(math.MaxUint32))
	}
	if err := g.SSL.validate("grpc"); err != nil {
		return err
	}
	if err := g.validateTriton(s); err != nil {
		return err
	}
	s.grpcRestricted = protocol.Restrictions{}
	return restrictedFlag(&s.grpcRestricted, "grpc-restricted-protocol", "protocol", protocol.GRPCRestrictedHeaderPrefix, true, g.RestrictedProtocol)
}

// warn says which Triton settings the server accepts but does not apply.
func (g *GRPCConfig) warn(log *serverlog.Logger) {
	if g.MaxPingStrikes != grpcFixedMaxPingStrikes {
		log.Warnf("--grpc-http2-max-ping-strikes=%d: this server disconnects a client after %d strikes whatever the setting", g.MaxPingStrikes, grpcFixedMaxPingStrikes)
	}
	if g.MaxPingsWithoutData != grpcFixedMaxPingsWithoutData {
		log.Warnf("--grpc-http2-max-pings-without-data=%d: this server's pings follow --grpc-keepalive-time only", g.MaxPingsWithoutData)
	}
}

// options returns the service's limits.
func (g *GRPCConfig) options() (grpcserver.StreamLimits, grpcserver.ConnectionLimits) {
	return grpcserver.StreamLimits{
			MaxPendingRequests: g.MaxStreamPendingRequests,
			MaxResponses:       g.MaxResponsePoolSize,
			MaxResponseBytes:   g.MaxStreamResponseBytes,
			StallTimeout:       ms(g.StreamStallTimeoutMs),
		}, grpcserver.ConnectionLimits{
			MaxConcurrentStreams:    uint32(g.MaxConcurrentStreams),
			MaxIdle:                 ms(g.MaxConnectionIdleMs),
			KeepaliveTime:           ms(g.KeepaliveTimeMs),
			KeepaliveTimeout:        ms(g.KeepaliveTimeoutMs),
			MinPingInterval:         ms(g.MinRecvPingIntervalMs),
			PermitPingsWithoutCalls: g.KeepalivePermitWithout,
			MaxHeaderListBytes:      uint32(g.MaxHeaderListSize),
			MaxConnections:          g.MaxConnections,
			MaxConnectionsPerClient: g.MaxConnectionsPerClient,
			HandshakeTimeout:        ms(g.HandshakeTimeoutMs),
			MaxAge:                  ms(g.MaxConnectionAgeMs),
			MaxAgeGrace:             ms(g.MaxConnectionAgeGraceMs),
		}
}

// gzip levels of --grpc-infer-response-compression-level: none, gzip's
// fastest, its default (6) and its best.
var compressionLevels = map[string]int{"none": 0, "low": gzip.BestSpeed, "medium": 6, "high": gzip.BestCompression}

// validateTriton checks Triton's other gRPC options.
func (g *GRPCConfig) validateTriton(s *settings) error {
	if n := g.InferThreadCount; n != nil && (*n < 2 || *n > 128) {
		return fmt.Errorf("--grpc-infer-thread-count %d: invalid argument for --grpc_infer_thread_count. Must be in the range 2 to 128.", *n)
	}
	if n := g.InferAllocationPoolSize; n != nil && *n < 0 {
		return fmt.Errorf("--grpc-infer-allocation-pool-size must not be negative, not %d", *n)
	}
	level, ok := compressionLevels[strings.ToLower(g.CompressionLevel)]
	if !ok {
		return fmt.Errorf("--grpc-infer-response-compression-level %q: invalid argument for --grpc_infer_response_compression_level (want none, low, medium or high)", g.CompressionLevel)
	}
	s.compression = level
	if g.MaxConnectionAgeMs < 0 || g.MaxConnectionAgeGraceMs < 0 {
		return fmt.Errorf("--grpc-max-connection-age (%d) and --grpc-max-connection-age-grace (%d) must not be negative", g.MaxConnectionAgeMs, g.MaxConnectionAgeGraceMs)
	}
	re, err := protocol.HeaderForwardPattern(g.HeaderForwardPattern)
	if err != nil {
		return fmt.Errorf("--grpc-header-forward-pattern %q: %w", g.HeaderForwardPattern, err)
	}
	s.grpcForward = re
	return nil
}
