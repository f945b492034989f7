package main

import (
	"fmt"
	"math"
	"regexp"
	"time"

	"github.com/spf13/pflag"

	"github.com/tritonhost/tritonhost/core/serverlog"
	"github.com/tritonhost/tritonhost/internal/frontend/grpcserver"
	"github.com/tritonhost/tritonhost/internal/protocol"
)

// grpcFlags are the flags that bound what gRPC clients may hold: Triton's
// keepalive and HTTP/2 ping flags (in milliseconds, as Triton's), and
// tritonhost's own per-stream and per-connection limits; and who may call:
// Triton's TLS and restricted-protocol flags.
type grpcFlags struct {
	KeepaliveTimeMs          int
	KeepaliveTimeoutMs       int
	KeepalivePermitWithout   bool
	MaxPingsWithoutData      int
	MinRecvPingIntervalMs    int
	MaxPingStrikes           int
	MaxConcurrentStreams     int
	MaxHeaderListSize        int
	MaxConnectionIdleMs      int
	MaxConnections           int
	MaxConnectionsPerClient  int
	HandshakeTimeoutMs       int
	MaxStreamPendingRequests int
	MaxResponsePoolSize      int
	MaxStreamResponseBytes   int
	StreamStallTimeoutMs     int
	AllowLogFileSetting      bool
	SSL                      sslFlags
	RestrictedProtocol       []string

	// Triton's other gRPC options (triton_flags.go).
	Allow                   bool
	ReusePort               bool
	HeaderForwardPattern    string
	InferThreadCount        int
	InferAllocationPoolSize int
	CompressionLevel        string
	MaxConnectionAgeMs      int
	MaxConnectionAgeGraceMs int

	restricted    protocol.Restrictions // RestrictedProtocol parsed (validate)
	headerForward *regexp.Regexp        // HeaderForwardPattern compiled (validate); nil: none
	compression   int                   // CompressionLevel as a gzip level (validate); 0: none
}

// gRPC's ping policy that grpc-go applies and does not let change.
const (
	grpcFixedMaxPingStrikes      = 2
	grpcFixedMaxPingsWithoutData = 2
)

func (g *grpcFlags) bind(f *pflag.FlagSet) {
	f.IntVar(&g.KeepaliveTimeMs, "grpc-keepalive-time", msOf(grpcserver.DefaultKeepaliveTime), "ms of silence on a connection after which the server pings it")
	f.IntVar(&g.KeepaliveTimeoutMs, "grpc-keepalive-timeout", msOf(grpcserver.DefaultKeepaliveTimeout), "ms the server waits for a ping's answer before closing the connection")
	f.BoolVar(&g.KeepalivePermitWithout, "grpc-keepalive-permit-without-calls", false, "let clients ping with no call open (otherwise they are disconnected for it)")
	f.IntVar(&g.MaxPingsWithoutData, "grpc-http2-max-pings-without-data", grpcFixedMaxPingsWithoutData, "accepted for Triton compatibility; the server's own pings follow --grpc-keepalive-time")
	f.IntVar(&g.MinRecvPingIntervalMs, "grpc-http2-min-recv-ping-interval-without-data", msOf(grpcserver.DefaultMinPingInterval), "shortest interval, in ms, at which a client may ping; faster pings count as strikes")
	f.IntVar(&g.MaxPingStrikes, "grpc-http2-max-ping-strikes", grpcFixedMaxPingStrikes, "accepted for Triton compatibility; a client is disconnected after 2 strikes")
	f.IntVar(&g.MaxConcurrentStreams, "grpc-max-concurrent-streams", grpcserver.DefaultMaxConcurrentStreams, "calls (streams) one connection may have open at once")
	f.IntVar(&g.MaxHeaderListSize, "grpc-max-header-list-size", grpcserver.DefaultMaxHeaderListBytes, "largest header list (metadata) of one call, in bytes as HTTP/2 counts them; a call past it is reset")
	f.IntVar(&g.MaxConnectionIdleMs, "grpc-max-connection-idle", msOf(grpcserver.DefaultMaxConnectionIdle), "ms after which a connection with no call open is closed (clients reconnect when they need to)")
	f.IntVar(&g.MaxConnections, "grpc-max-connections", grpcserver.DefaultMaxConnections, "gRPC connections open at once; past it new ones wait for one to close")
	f.IntVar(&g.MaxConnectionsPerClient, "grpc-max-connections-per-client", 0,
		"gRPC connections one client (source IP address) may have open at once; past it its new ones are closed at once (0: a quarter of --grpc-max-connections)")
	f.IntVar(&g.HandshakeTimeoutMs, "grpc-handshake-timeout", msOf(grpcserver.DefaultHandshakeTimeout), "ms a new connection may take to finish TLS and send HTTP/2's preface and settings; then it is closed")
	f.IntVar(&g.MaxStreamPendingRequests, "grpc-max-stream-pending-requests", grpcserver.DefaultMaxPendingRequests, "requests one ModelStreamInfer stream may have unanswered; then the server stops reading it")
	f.IntVar(&g.MaxResponsePoolSize, "grpc-max-response-pool-size", protocol.DefaultStreamMaxResponses, "responses one stream may hold for a client that reads slowly")
	f.IntVar(&g.MaxStreamResponseBytes, "grpc-max-stream-response-bytes", protocol.DefaultStreamMaxResponseBytes, "bytes of responses one stream may hold for a client that reads slowly (a single larger response still goes)")
	f.IntVar(&g.StreamStallTimeoutMs, "grpc-stream-stall-timeout", msOf(protocol.DefaultStreamStallTimeout), "ms a response may wait for room in a full stream; then the stream is cut off and its requests cancelled")
	f.BoolVar(&g.AllowLogFileSetting, "allow-log-file-setting", false, "let LogSettings clients send the log to a file they name on this machine")
	g.SSL.bind(f, "grpc", "gRPC", false)
	f.StringArrayVar(&g.RestrictedProtocol, "grpc-restricted-protocol", nil, "<category>[,<category>...]:<key>=<value>: those RPCs answer only calls with metadata triton-grpc-protocol-<key>: <value>; categories: "+categoryList()+" (repeatable)")
	g.bindTriton(f) // triton_flags.go
}

func (g *grpcFlags) validate() error {
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
	if err := g.SSL.validate(); err != nil {
		return err
	}
	if err := g.validateTriton(); err != nil { // triton_flags.go
		return err
	}
	g.restricted = protocol.Restrictions{}
	return restrictedFlag(&g.restricted, "grpc-restricted-protocol", "protocol", protocol.GRPCRestrictedHeaderPrefix, true, g.RestrictedProtocol)
}

// warn says which Triton settings the server accepts but does not apply.
func (g *grpcFlags) warn(log *serverlog.Logger) {
	if g.MaxPingStrikes != grpcFixedMaxPingStrikes {
		log.Warnf("--grpc-http2-max-ping-strikes=%d: this server disconnects a client after %d strikes whatever the setting", g.MaxPingStrikes, grpcFixedMaxPingStrikes)
	}
	if g.MaxPingsWithoutData != grpcFixedMaxPingsWithoutData {
		log.Warnf("--grpc-http2-max-pings-without-data=%d: this server's pings follow --grpc-keepalive-time only", g.MaxPingsWithoutData)
	}
}

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

// msOf is d in whole milliseconds, as the flags take durations.
func msOf(d time.Duration) int { return int(d / time.Millisecond) }

// options returns the service's limits.
func (g *grpcFlags) options() (grpcserver.StreamLimits, grpcserver.ConnectionLimits) {
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
