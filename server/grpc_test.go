package server

import (
	"strings"
	"testing"
	"time"
)

func TestGRPCFlagsBecomeTheServiceLimits(t *testing.T) {
	t.Parallel()
	c := flagConfig(t, []string{"--grpc-keepalive-time=1000", "--grpc-keepalive-timeout=2000", "--grpc-keepalive-permit-without-calls",
		"--grpc-http2-min-recv-ping-interval-without-data=3000", "--grpc-max-concurrent-streams=7", "--grpc-max-connection-idle=4000",
		"--grpc-max-stream-pending-requests=5", "--grpc-max-response-pool-size=6", "--grpc-max-stream-response-bytes=8",
		"--grpc-stream-stall-timeout=9", "--grpc-max-header-list-size=10", "--grpc-max-connections=11", "--grpc-max-connections-per-client=12"}...)
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	s, conns := c.GRPC.options()
	if s.MaxPendingRequests != 5 || s.MaxResponses != 6 || s.MaxResponseBytes != 8 || s.StallTimeout != 9*time.Millisecond {
		t.Errorf("stream limits %+v", s)
	}
	if conns.KeepaliveTime != time.Second || conns.KeepaliveTimeout != 2*time.Second || !conns.PermitPingsWithoutCalls ||
		conns.MinPingInterval != 3*time.Second || conns.MaxConcurrentStreams != 7 || conns.MaxIdle != 4*time.Second || conns.MaxHeaderListBytes != 10 ||
		conns.MaxConnections != 11 || conns.MaxConnectionsPerClient != 12 {
		t.Errorf("connection limits %+v", conns)
	}
}

func TestGRPCFlagsRefuseNonPositiveLimits(t *testing.T) {
	t.Parallel()
	for _, arg := range []string{"grpc-keepalive-time=0", "grpc-max-concurrent-streams=0", "grpc-max-stream-pending-requests=0",
		"grpc-max-response-pool-size=0", "grpc-max-stream-response-bytes=0", "grpc-stream-stall-timeout=0", "grpc-max-header-list-size=0",
		"grpc-max-connections-per-client=-1"} {
		c := flagConfig(t, "--"+arg)
		flag, _, _ := strings.Cut(arg, "=")
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), flag) {
			t.Errorf("--%s: %v, want an error naming the flag", arg, err)
		}
	}
}
