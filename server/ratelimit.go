package server

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/tritonhost/tritonhost/core/ratelimit"
	"github.com/tritonhost/tritonhost/core/serverlog"
)

// Rate limiter modes, as --rate-limit spells them.
const (
	rateLimitOff            = "off"
	rateLimitExecutionCount = "execution_count"
)

// parse checks the mode and parses the resources, with Triton's texts.
func (r *RateLimitConfig) parse() (string, []ratelimit.Resource, error) {
	mode := strings.ToLower(r.Mode)
	if mode != rateLimitOff && mode != rateLimitExecutionCount {
		return "", nil, fmt.Errorf("invalid argument for --rate-limit: %q (want %s or %s)", mode, rateLimitOff, rateLimitExecutionCount)
	}
	var resources []ratelimit.Resource
	for _, arg := range r.Resources {
		res, err := parseRateLimitResource(arg)
		if err != nil {
			return "", nil, err
		}
		resources = append(resources, res)
	}
	return mode, resources, nil
}

// parseRateLimitResource parses one --rate-limit-resource.
func parseRateLimitResource(arg string) (ratelimit.Resource, error) {
	formatErr := fmt.Errorf("--rate-limit-resource option format is '<resource_name>:<count>:<device>' or '<resource_name>:<count>'. Got %s", arg)
	parts := strings.Split(arg, ":")
	if len(parts) < 2 || len(parts) > 3 || parts[0] == "" {
		return ratelimit.Resource{}, formatErr
	}
	count, err := strconv.ParseUint(parts[1], 10, 32)
	if err != nil {
		return ratelimit.Resource{}, fmt.Errorf("%w: the count %q is not a number of copies", formatErr, parts[1])
	}
	res := ratelimit.Resource{Name: parts[0], Count: count, Device: ratelimit.EveryDevice}
	if len(parts) == 3 {
		dev, err := strconv.ParseUint(parts[2], 10, 31)
		if err != nil {
			return ratelimit.Resource{}, fmt.Errorf("%w: the device %q is not a device id", formatErr, parts[2])
		}
		res.Device = int(dev)
	}
	return res, nil
}

// limiter returns the server's rate limiter: nil when --rate-limit is
// off, which leaves any --rate-limit-resource without effect (a warning
// says so), as in Triton.
func rateLimiter(s *settings, log *serverlog.Logger) (*ratelimit.Limiter, error) {
	if s.rateLimitMode != rateLimitExecutionCount {
		if len(s.rateResources) > 0 {
			log.Warnf("--rate-limit-resource has no effect with --rate-limit=%s", s.rateLimitMode)
		}
		return nil, nil
	}
	l, err := ratelimit.New(s.rateResources)
	if err != nil {
		return nil, fmt.Errorf("--rate-limit-resource: %w", err)
	}
	return l, nil
}
