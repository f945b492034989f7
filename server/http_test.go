package server

import (
	"strings"
	"testing"
	"time"
)

func TestHTTPFlagsBecomeTheServerLimits(t *testing.T) {
	t.Parallel()
	c := flagConfig(t, []string{"--http-max-input-size=1", "--http-max-header-bytes=2", "--http-read-header-timeout=3", "--http-idle-timeout=4",
		"--http-write-timeout=5", "--http-stream-stall-timeout=6", "--http-max-stream-responses=7", "--http-max-stream-response-bytes=8",
		"--http-address=127.0.0.2", "--metrics-interval-ms=9", "--http-read-body-timeout=10", "--http-read-body-min-rate=11", "--http-max-connections=12",
		"--http-max-connections-per-client=13", "--metrics-max-connections-per-client=14"}...)
	set, err := c.resolve()
	if err != nil {
		t.Fatal(err)
	}
	h, m := &c.HTTP, &c.Metrics
	o := h.options(set)
	if o.MaxInputBytes != 1 || o.MaxHeaderBytes != 2 || o.ReadHeaderTimeout != 3*time.Millisecond || o.IdleTimeout != 4*time.Millisecond ||
		o.WriteTimeout != 5*time.Millisecond || o.Stream.StallTimeout != 6*time.Millisecond || o.Stream.MaxResponses != 7 || o.Stream.MaxResponseBytes != 8 ||
		o.ReadBodyTimeout != 10*time.Millisecond || o.ReadBodyMinRate != 11 || o.MaxConnections != 12 || o.MaxConnectionsPerClient != 13 {
		t.Errorf("HTTP options %+v", o)
	}
	if m.MaxConnectionsPerClient != 14 {
		t.Errorf("--metrics-max-connections-per-client gave %d", m.MaxConnectionsPerClient)
	}
	// Metrics follow the HTTP address, as in Triton, unless told otherwise.
	if got := m.address(h); got != "127.0.0.2" {
		t.Errorf("metrics address %q, want the HTTP address", got)
	}
	h.Allow = false
	if got := m.address(h); got != "0.0.0.0" {
		t.Errorf("metrics address without HTTP %q, want 0.0.0.0", got)
	}
	m.Address = "127.0.0.3"
	if got := m.address(h); got != "127.0.0.3" {
		t.Errorf("metrics address %q, want --metrics-address", got)
	}
}

func TestHTTPAndMetricsFlagsRefuseBadValues(t *testing.T) {
	t.Parallel()
	for _, arg := range []string{"--http-port=70000", "--http-max-input-size=0", "--http-max-header-bytes=0", "--http-read-header-timeout=0",
		"--http-idle-timeout=0", "--http-write-timeout=0", "--http-stream-stall-timeout=0", "--http-max-stream-responses=0",
		"--http-max-stream-response-bytes=0", "--metrics-port=-1", "--metrics-interval-ms=0", "--http-read-body-timeout=0",
		"--http-read-body-min-rate=0", "--http-max-connections=0", "--http-max-connections-per-client=-1",
		"--metrics-max-connections-per-client=-1"} {
		c := flagConfig(t, arg)
		err := c.Validate()
		name, _, _ := strings.Cut(arg, "=")
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: %v, want an error naming the flag", arg, err)
		}
	}
}
