package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/tritonhost/tritonhost/core/ratelimit"
	"github.com/tritonhost/tritonhost/core/serverlog"
)

// rateLimitFlags are Triton's rate limiter flags: --rate-limit (off, or
// execution_count) and --rate-limit-resource <name>:<count>[:<device>]
// (repeatable), which give a resource's copies on one device, or on every
// device when the device is left out (see package ratelimit).
type rateLimitFlags struct {
	Mode      string
	Resources []string

	resources []ratelimit.Resource // Resources, parsed by validate
}

// Rate limiter modes, as --rate-limit spells them.
const (
	rateLimitOff            = "off"
	rateLimitExecutionCount = "execution_count"
)

func (r *rateLimitFlags) bind(f *pflag.FlagSet) {
	f.StringVar(&r.Mode, "rate-limit", rateLimitOff,
		`"off": an instance executes as soon as it has work; "execution_count": an instance executes once the resources its instance_group's rate_limiter lists are free, the instance with the fewest executions (times its priority) first`)
	f.StringArrayVar(&r.Resources, "rate-limit-resource", nil,
		"with --rate-limit=execution_count, <name>:<count> copies of a resource on every device, or <name>:<count>:<device> on one (repeatable); once one is given, a resource not given has none (default: as many as the instances ask for)")
}

// validate checks the mode and parses the resources, with Triton's texts.
func (r *rateLimitFlags) validate() error {
	r.Mode = strings.ToLower(r.Mode)
	if r.Mode != rateLimitOff && r.Mode != rateLimitExecutionCount {
		return fmt.Errorf("invalid argument for --rate-limit: %q (want %s or %s)", r.Mode, rateLimitOff, rateLimitExecutionCount)
	}
	r.resources = r.resources[:0]
	for _, arg := range r.Resources {
		res, err := parseRateLimitResource(arg)
		if err != nil {
			return err
		}
		r.resources = append(r.resources, res)
	}
	return nil
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
func (r *rateLimitFlags) limiter(log *serverlog.Logger) (*ratelimit.Limiter, error) {
	if r.Mode != rateLimitExecutionCount {
		if len(r.resources) > 0 {
			log.Warnf("--rate-limit-resource has no effect with --rate-limit=%s", r.Mode)
		}
		return nil, nil
	}
	l, err := ratelimit.New(r.resources)
	if err != nil {
		return nil, fmt.Errorf("--rate-limit-resource: %w", err)
	}
	return l, nil
}
