package server

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/serverlog"
)

// Triton's options that belong to no other group: host policies, the
// device options this server does not need, and the SageMaker and Vertex
// AI endpoints it does not have (docs/triton-flags.md says why each has
// no effect or is refused).

// validate checks Triton's options, and refuses the endpoints this server
// does not have and the settings it cannot honour.
func (t *TritonConfig) validate(s *settings) error {
	if n := t.BufferManagerThreads; n != nil && *n < 0 {
		return fmt.Errorf("--buffer-manager-thread-count must not be negative, not %d", *n)
	}
	if t.AllowSageMaker {
		return errors.New("--allow-sagemaker=true: this server has no SageMaker endpoint (Triton's /invocations and /ping on --sagemaker-port); serve the models over Triton's HTTP/REST or gRPC protocols, which it has (see docs/triton-flags.md)")
	}
	if t.AllowVertexAI {
		return VertexAIError("--allow-vertex-ai=true")
	}
	for _, c := range []struct {
		name string
		v    *int
	}{{"sagemaker-port", t.SageMakerPort}, {"vertex-ai-port", t.VertexAIPort}} {
		if c.v != nil && (*c.v < 0 || *c.v > 65535) {
			return fmt.Errorf("--%s %d is out of range", c.name, *c.v)
		}
	}
	for _, c := range []struct {
		name string
		v    *int
	}{{"sagemaker-thread-count", t.SageMakerThreads}, {"vertex-ai-thread-count", t.VertexAIThreads}} {
		if c.v != nil && *c.v <= 0 {
			return fmt.Errorf("--%s must be positive, not %d", c.name, *c.v)
		}
	}
	if r := t.SageMakerSafePortRange; r != nil && *r != "" {
		if _, _, err := parsePair(*r, "-", strconv.Atoi, strconv.Atoi); err != nil {
			return fmt.Errorf("--sagemaker-safe-port-range: %w", err)
		}
	}
	for _, v := range t.CUDAVirtualAddressSize {
		if _, _, err := parsePair(v, ":", atoiNonNegative, parseBytes); err != nil {
			return fmt.Errorf("--cuda-virtual-address-size: %w", err)
		}
	}
	s.gpuLimits = map[int]float64{}
	for _, v := range t.ModelLoadGPULimit {
		dev, frac, err := parsePair(v, ":", atoiNonNegative, func(v string) (float64, error) { return strconv.ParseFloat(v, 64) })
		if err == nil && (frac < 0 || frac > 1) {
			err = fmt.Errorf("the fraction %v is not within [0.0, 1.0]", frac)
		}
		if err != nil {
			return fmt.Errorf("--model-load-gpu-limit: %w", err)
		}
		s.gpuLimits[dev] = frac
	}
	policies, err := parseHostPolicies(t.HostPolicy)
	if err != nil {
		return err
	}
	s.hostPolicies = policies
	return nil
}

// ErrNoVertexAI is what Validate's and New's errors wrap when
// Triton.AllowVertexAI asks for the Vertex AI endpoint, which this server
// does not have.
var ErrNoVertexAI = errors.New("this server has no Vertex AI endpoint (Triton's prediction route on --vertex-ai-port)")

// VertexAIError is the refusal of Vertex AI, asked for by why (the
// option, or the environment that made it Triton's default); it wraps
// ErrNoVertexAI.
func VertexAIError(why string) error {
	return fmt.Errorf("%s: %w; pass --allow-vertex-ai=false to serve Triton's HTTP/REST and gRPC protocols instead (see docs/triton-flags.md)", why, ErrNoVertexAI)
}

// parsePair parses Triton's pair options, <first><sep><second>, with
// Triton's message for a missing separator (ParsePairOption).
func parsePair[A, B any](arg, sep string, first func(string) (A, error), second func(string) (B, error)) (A, B, error) {
	var a A
	var b B
	x, y, ok := strings.Cut(arg, sep)
	if !ok {
		return a, b, fmt.Errorf("Cannot parse pair option due to incorrect number of inputs.--<pair option> argument requires format <first>%s<second>. Found: %s", sep, arg)
	}
	a, err := first(x)
	if err != nil {
		return a, b, fmt.Errorf("Invalid option value. Got %s", x)
	}
	b, err = second(y)
	if err != nil {
		return a, b, fmt.Errorf("Invalid option value. Got %s", y)
	}
	return a, b, nil
}

func atoiNonNegative(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err == nil && n < 0 {
		err = fmt.Errorf("%d is negative", n)
	}
	return n, err
}

func parseBytes(s string) (uint64, error) { return strconv.ParseUint(s, 10, 64) }

// parseHostPolicies reads --host-policy <name>,<setting>=<value> options
// with Triton's format and message (ParseGenericConfigOption): cpu-cores
// (CPU numbers and ranges, 0-3,8) and numa-node (a node number) become the
// policy's placement, checked on this machine; every setting is kept.
func parseHostPolicies(args []string) (map[string]core.HostPolicy, error) {
	policies := map[string]core.HostPolicy{}
	for _, arg := range args {
		name, setting, ok1 := strings.Cut(arg, ",")
		key, value, ok2 := strings.Cut(setting, "=")
		if !ok1 || !ok2 || name == "" || key == "" || value == "" {
			return nil, fmt.Errorf("--host-policy option format is '<policy name>,<setting>=<value>'. Got %s", arg)
		}
		p := policies[name]
		if p.Settings == nil {
			p.Settings = map[string]string{}
		}
		p.Settings[key] = value
		switch key {
		case "cpu-cores":
			cpus, err := parseCPUList(value)
			if err != nil {
				return nil, fmt.Errorf("--host-policy %s: cpu-cores %q: %w", arg, value, err)
			}
			p.CPUs = cpus
		case "numa-node":
			n, err := atoiNonNegative(value)
			if err != nil {
				return nil, fmt.Errorf("--host-policy %s: numa-node %q is not a node number", arg, value)
			}
			p.NUMANode = &n
		}
		policies[name] = p
	}
	for name, p := range policies {
		if err := core.CheckHostPolicy(p); err != nil {
			return nil, fmt.Errorf("--host-policy %s: %w", name, err)
		}
	}
	return policies, nil
}

// parseCPUList parses a CPU list as Linux writes them: numbers and ranges,
// comma-separated (0-3,8).
func parseCPUList(s string) ([]int, error) {
	var cpus []int
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := atoiNonNegative(strings.TrimSpace(lo))
		if err != nil {
			return nil, fmt.Errorf("%q is not a CPU number", part)
		}
		b := a
		if isRange {
			if b, err = atoiNonNegative(strings.TrimSpace(hi)); err != nil || b < a {
				return nil, fmt.Errorf("%q is not a range of CPUs", part)
			}
		}
		for c := a; c <= b; c++ {
			cpus = append(cpus, c)
		}
	}
	return cpus, nil
}

// applyHostPolicies sets the core options of the host policies.
func applyHostPolicies(opts *core.Options, s *settings) {
	if len(s.hostPolicies) > 0 {
		opts.HostPolicies = s.hostPolicies
	}
}

// checkGPUs refuses --model-load-gpu-limit on a server with GPUs, whose
// loads it would have to watch (gpus: the ids in use).
func checkGPUs(log *serverlog.Logger, limits map[int]float64, gpus []int) error {
	if len(limits) == 0 {
		return nil
	}
	if len(gpus) > 0 {
		return errors.New("--model-load-gpu-limit: this server does not refuse loads by GPU memory use; remove the option, or bound the models' memory in their backends (see docs/triton-flags.md)")
	}
	log.Infof("--model-load-gpu-limit: the server uses no GPU, so no load is limited")
	return nil
}

// warnTriton says, once at start, which of Triton's options set have no
// effect here, and why.
func (c *Config) warnTriton(log *serverlog.Logger, s *settings) {
	noEffect := func(name string, value any, why string) {
		switch v := value.(type) {
		case *int:
			if v != nil {
				value = strconv.Itoa(*v)
			} else {
				value = nil
			}
		case *bool:
			if v != nil {
				value = strconv.FormatBool(*v)
			} else {
				value = nil
			}
		case *string:
			if v != nil {
				value = *v
			} else {
				value = nil
			}
		case []string:
			if len(v) > 0 {
				value = "[" + strings.Join(v, ",") + "]"
			} else {
				value = nil
			}
		}
		if value != nil {
			log.Infof("--%s=%s: accepted for Triton compatibility, without effect: %s", name, value, why)
		}
	}
	t := &c.Triton
	const goroutines = "Go's runtime serves each connection and request on a goroutine of its own, spread over every core (GOMAXPROCS)"
	noEffect("http-thread-count", c.HTTP.ThreadCount, goroutines)
	noEffect("grpc-infer-thread-count", c.GRPC.InferThreadCount, goroutines)
	noEffect("buffer-manager-thread-count", t.BufferManagerThreads, "tensors are copied by the goroutine that needs them")
	noEffect("grpc-infer-allocation-pool-size", c.GRPC.InferAllocationPoolSize, "request and response states are Go values the garbage collector reclaims")
	noEffect("enable-peer-access", t.EnablePeerAccess, "the server makes no copy between GPUs; backends enable the peer access they need")
	noEffect("cuda-virtual-address-size", t.CUDAVirtualAddressSize, "the server has no growable-memory implicit state to reserve it for")
	const noSageMaker = "the server has no SageMaker endpoint"
	noEffect("sagemaker-port", t.SageMakerPort, noSageMaker)
	noEffect("sagemaker-safe-port-range", t.SageMakerSafePortRange, noSageMaker)
	noEffect("sagemaker-thread-count", t.SageMakerThreads, noSageMaker)
	const noVertexAI = "the server has no Vertex AI endpoint"
	noEffect("vertex-ai-port", t.VertexAIPort, noVertexAI)
	noEffect("vertex-ai-thread-count", t.VertexAIThreads, noVertexAI)
	noEffect("vertex-ai-default-model", t.VertexAIDefaultModel, noVertexAI)
	for name, p := range s.hostPolicies {
		for key := range p.Settings {
			if key != "cpu-cores" && key != "numa-node" {
				log.Warnf("--host-policy %s,%s: a setting for backends, which this server does not hand them (they see the policy's name only)", name, key)
			}
		}
	}
}
