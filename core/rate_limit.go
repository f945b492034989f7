package core

import "github.com/tritonhost/tritonhost/core/ratelimit"

// The server's rate limiter (Options.RateLimiter, package ratelimit): each
// active instance of a version registers as the version loads, once its
// instances exist and before its warmup, and unregisters once the version
// executes no more (unload) or its load failed. Instance.execute allocates
// the instance's resources before each execution and releases them when
// the backend's Execute returns.

// registerRateLimits registers m's active instances with the server's rate
// limiter, if it has one, each with its instance_group's rate_limiter, on
// its device (0 for CPU and MODEL instances, as in Triton). On failure
// none stays registered, and the error names the model, the instance and
// the field.
func (m *Model) registerRateLimits() error {
	if m.srv == nil || m.srv.opts.RateLimiter == nil {
		return nil
	}
	rl := m.srv.opts.RateLimiter
	for _, inst := range m.instances {
		if inst.Passive() {
			continue
		}
		slot, err := rl.Register(inst.deviceID, inst.group.GetRateLimiter())
		if err != nil {
			m.unregisterRateLimits()
			return Errorf(CodeInvalidArg, "model %q version %d instance %q: instance_group rate_limiter: %w", m.name, m.version, inst.name, err)
		}
		inst.rate = slot
	}
	return nil
}

// unregisterRateLimits takes m's instances out of the rate limiter, once
// none executes (or ever will).
func (m *Model) unregisterRateLimits() {
	for _, inst := range m.instances {
		if inst.rate != nil {
			inst.rate.Unregister()
			inst.rate = nil
		}
	}
}

// RateLimiter returns the server's rate limiter (Options.RateLimiter; nil
// when rate limiting is off).
func (s *Server) RateLimiter() *ratelimit.Limiter { return s.opts.RateLimiter }
