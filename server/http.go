package server

import (
	"errors"
	"fmt"
	"strings"
	"syscall"

	"github.com/tritonhost/tritonhost/core/serverlog"
	"github.com/tritonhost/tritonhost/internal/frontend/httpserver"
	"github.com/tritonhost/tritonhost/internal/protocol"
)

func (h *HTTPConfig) validate(s *settings) error {
	if h.Port < 0 || h.Port > 65535 {
		return fmt.Errorf("--http-port %d is out of range", h.Port)
	}
	if h.MaxInputSize <= 0 {
		return fmt.Errorf("--http-max-input-size must be positive, not %d", h.MaxInputSize)
	}
	if h.ReadBodyMinRate <= 0 {
		return fmt.Errorf("--http-read-body-min-rate must be positive, not %d", h.ReadBodyMinRate)
	}
	if h.MaxConnectionsPerClient < 0 {
		return fmt.Errorf("--http-max-connections-per-client must not be negative, not %d", h.MaxConnectionsPerClient)
	}
	for _, c := range []struct {
		name string
		v    int
	}{
		{"http-max-header-bytes", h.MaxHeaderBytes}, {"http-read-header-timeout", h.ReadHeaderTimeoutMs},
		{"http-idle-timeout", h.IdleTimeoutMs}, {"http-write-timeout", h.WriteTimeoutMs},
		{"http-stream-stall-timeout", h.StreamStallTimeoutMs}, {"http-max-stream-responses", h.MaxStreamResponses},
		{"http-max-stream-response-bytes", h.MaxStreamResponseBytes}, {"http-read-body-timeout", h.ReadBodyTimeoutMs},
		{"http-max-connections", h.MaxConnections},
	} {
		if c.v <= 0 {
			return fmt.Errorf("--%s must be positive, not %d", c.name, c.v)
		}
	}
	if err := h.SSL.validate("http"); err != nil {
		return err
	}
	if n := h.ThreadCount; n != nil && *n <= 0 {
		return fmt.Errorf("--http-thread-count must be positive, not %d", *n)
	}
	re, err := protocol.HeaderForwardPattern(h.HeaderForwardPattern)
	if err != nil {
		return fmt.Errorf("--http-header-forward-pattern %q: %w", h.HeaderForwardPattern, err)
	}
	s.httpForward = re
	s.httpRestricted = protocol.Restrictions{}
	return restrictedFlag(&s.httpRestricted, "http-restricted-api", "api", "", false, h.RestrictedAPI)
}

// warnConnectionCaps says when the endpoints' connection caps together
// leave the process too few file descriptors for the models (and for the
// others' own files) under a flood of connections.
func (c *Config) warnConnectionCaps(log *serverlog.Logger) {
	var lim syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim) != nil {
		return
	}
	var caps []string
	var total uint64
	if c.GRPC.Allow {
		caps = append(caps, fmt.Sprintf("--grpc-max-connections=%d", c.GRPC.MaxConnections))
		total += uint64(c.GRPC.MaxConnections)
	}
	if c.HTTP.Allow {
		caps = append(caps, fmt.Sprintf("--http-max-connections=%d", c.HTTP.MaxConnections))
		total += uint64(c.HTTP.MaxConnections)
	}
	if c.Metrics.Allow && c.Metrics.Listen {
		caps = append(caps, fmt.Sprintf("--metrics-max-connections=%d", c.Metrics.MaxConnections))
		total += uint64(c.Metrics.MaxConnections)
	}
	if total > lim.Cur/2 {
		log.Warnf("%s: %d connections together, more than half the open-file limit (%d): a flood of connections could leave the models too few", strings.Join(caps, ", "), total, lim.Cur)
	}
}

// options returns the HTTP server's options (without the parts it shares
// with gRPC).
func (h *HTTPConfig) options(s *settings) httpserver.Options {
	return httpserver.Options{
		MaxInputBytes:           h.MaxInputSize,
		MaxHeaderBytes:          h.MaxHeaderBytes,
		ReadHeaderTimeout:       ms(h.ReadHeaderTimeoutMs),
		IdleTimeout:             ms(h.IdleTimeoutMs),
		WriteTimeout:            ms(h.WriteTimeoutMs),
		ReadBodyTimeout:         ms(h.ReadBodyTimeoutMs),
		ReadBodyMinRate:         h.ReadBodyMinRate,
		MaxConnections:          h.MaxConnections,
		MaxConnectionsPerClient: h.MaxConnectionsPerClient,
		Stream: httpserver.StreamLimits{MaxResponses: h.MaxStreamResponses, MaxResponseBytes: h.MaxStreamResponseBytes,
			StallTimeout: ms(h.StreamStallTimeoutMs)},
		Restricted:    &s.httpRestricted,
		HeaderForward: s.httpForward,
	}
}

func (m *MetricsConfig) validate() error {
	if m.Port < 0 || m.Port > 65535 {
		return fmt.Errorf("--metrics-port %d is out of range", m.Port)
	}
	if m.IntervalMs <= 0 {
		return fmt.Errorf("--metrics-interval-ms must be positive, not %d", m.IntervalMs)
	}
	if m.MaxConnections <= 0 {
		return fmt.Errorf("--metrics-max-connections must be positive, not %d", m.MaxConnections)
	}
	if m.MaxConnectionsPerClient < 0 {
		return fmt.Errorf("--metrics-max-connections-per-client must not be negative, not %d", m.MaxConnectionsPerClient)
	}
	if err := m.validateTriton(); err != nil {
		return err
	}
	return m.SSL.validate("metrics")
}

// address is where metrics listen: Address, else the HTTP address when
// HTTP is served (as Triton), else every interface.
func (m *MetricsConfig) address(h *HTTPConfig) string {
	switch {
	case m.Address != "":
		return m.Address
	case h.Allow:
		return h.Address
	}
	return "0.0.0.0"
}

// metricsSettings are Triton's --metrics-config settings, each with the
// values this server serves; a value it does not serve is refused.
var metricsSettings = map[string]func(string) error{
	"counter_latencies": boolSetting(true, "the nv_inference_*_duration_us counters are always reported"),
	"summary_latencies": boolSetting(false, "this server reports no latency summaries"),
	"histogram_latencies": func(v string) error {
		_, err := ParseTritonBool(v)
		return err
	},
	"summary_quantiles": func(string) error {
		return errors.New("this server reports no latency summaries")
	},
}

// boolSetting accepts a boolean setting's value when it is served.
func boolSetting(served bool, why string) func(string) error {
	return func(v string) error {
		b, err := ParseTritonBool(v)
		if err != nil {
			return err
		}
		if b != served {
			return errors.New(why)
		}
		return nil
	}
}

// ParseTritonBool reads a boolean as Triton's ParseOption<bool> does:
// true, on, 1, false, off or 0, in any case.
func ParseTritonBool(s string) (bool, error) {
	switch strings.ToLower(s) {
	case "true", "on", "1":
		return true, nil
	case "false", "off", "0":
		return false, nil
	}
	return false, fmt.Errorf("invalid value for bool option: %s", s)
}

func (m *MetricsConfig) validateTriton() error {
	for _, arg := range m.Config {
		key, value, ok := strings.Cut(arg, "=")
		if !ok || key == "" || value == "" || strings.Contains(key, ",") {
			return fmt.Errorf("--metrics-config option format is <setting>=<value>. Got %s", arg)
		}
		check, known := metricsSettings[key]
		if !known {
			return fmt.Errorf("--metrics-config %s: unknown setting %q (Triton's are counter_latencies, summary_latencies, summary_quantiles, histogram_latencies)", arg, key)
		}
		if err := check(value); err != nil {
			return fmt.Errorf("--metrics-config %s: %w (see docs/triton-flags.md)", arg, err)
		}
	}
	return nil
}
