package main

import (
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

func TestGRPCFlagsBecomeTheServiceLimits(t *testing.T) {
	t.Parallel()
	var g grpcFlags
	f := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	g.bind(f)
	err := f.Parse([]string{"--grpc-keepalive-time=1000", "--grpc-keepalive-timeout=2000", "--grpc-keepalive-permit-without-calls",
		"--grpc-http2-min-recv-ping-interval-without-data=3000", "--grpc-max-concurrent-streams=7", "--grpc-max-connection-idle=4000",
		"--grpc-max-stream-pending-requests=5", "--grpc-max-response-pool-size=6", "--grpc-max-stream-response-bytes=8",
		"--grpc-stream-stall-timeout=9", "--grpc-max-header-list-size=10", "--grpc-max-connections=11", "--grpc-max-connections-per-client=12"})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.validate(); err != nil {
		t.Fatal(err)
	}
	s, c := g.options()
	if s.MaxPendingRequests != 5 || s.MaxResponses != 6 || s.MaxResponseBytes != 8 || s.StallTimeout != 9*time.Millisecond {
		t.Errorf("stream limits %+v", s)
	}
	if c.KeepaliveTime != time.Second || c.KeepaliveTimeout != 2*time.Second || !c.PermitPingsWithoutCalls ||
		c.MinPingInterval != 3*time.Second || c.MaxConcurrentStreams != 7 || c.MaxIdle != 4*time.Second || c.MaxHeaderListBytes != 10 ||
		c.MaxConnections != 11 || c.MaxConnectionsPerClient != 12 {
		t.Errorf("connection limits %+v", c)
	}
}

func TestGRPCFlagsRefuseNonPositiveLimits(t *testing.T) {
	t.Parallel()
	for _, arg := range []string{"grpc-keepalive-time=0", "grpc-max-concurrent-streams=0", "grpc-max-stream-pending-requests=0",
		"grpc-max-response-pool-size=0", "grpc-max-stream-response-bytes=0", "grpc-stream-stall-timeout=0", "grpc-max-header-list-size=0",
		"grpc-max-connections-per-client=-1"} {
		var g grpcFlags
		f := pflag.NewFlagSet("serve", pflag.ContinueOnError)
		g.bind(f)
		if err := f.Parse([]string{"--" + arg}); err != nil {
			t.Fatal(err)
		}
		flag, _, _ := strings.Cut(arg, "=")
		if err := g.validate(); err == nil || !strings.Contains(err.Error(), flag) {
			t.Errorf("--%s: %v, want an error naming the flag", arg, err)
		}
	}
}
