package main

import (
	"compress/gzip"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/serverlog"
	"github.com/tritonhost/tritonhost/internal/protocol"
)

// Triton's command line. Every option of Triton's tritonserver (server
// src/command_line_parser.cc; testdata/triton_options.go lists them) is an
// option of serve, with Triton's syntax and meaning: implemented, accepted
// and documented as without effect here (docs/triton-flags.md says why),
// or, for the endpoints this server does not have (SageMaker, Vertex AI),
// refused at start with a message that says so. This file holds the
// options the other flag files do not, the Triton-specific parts of
// theirs (bindTriton, validateTriton) and Triton's syntax:
//
//   - a boolean option takes true, on, 1, false, off or 0 in any case,
//     after "=" or as the next argument (--strict-readiness false), as
//     Triton's ParseOption<bool>; alone, it means true (tritonhost's
//     shorthand);
//   - --log-verbose takes true and false as 1 and 0;
//   - repeated options keep Triton's forms: --model-repository (once per
//     repository, a path that may hold commas), --backend-config
//     <backend>,<setting>=<value>, --host-policy <name>,<setting>=<value>,
//     --metrics-config <setting>=<value>, --load-model;
//   - an argument that is not an option is refused as Triton refuses it
//     ("Unexpected argument: ...").

// tritonBoolOptions are Triton's boolean options (Option::ArgBool).
var tritonBoolOptions = []string{
	"log-info", "log-warning", "log-error", "exit-on-error", "strict-readiness", "strict-model-config",
	"model-namespacing", "enable-peer-access", "allow-http", "reuse-http-port", "allow-grpc", "reuse-grpc-port",
	"grpc-use-ssl", "grpc-use-ssl-mutual", "grpc-keepalive-permit-without-calls", "allow-sagemaker", "allow-vertex-ai",
	"allow-metrics", "allow-gpu-metrics", "allow-cpu-metrics", "allow-client-shm",
}

// tritonBool is a boolean flag's value read as Triton reads one.
type tritonBool struct{ pflag.Value }

// parseTritonBool is Triton's ParseOption<bool>.
func parseTritonBool(s string) (bool, error) {
	switch strings.ToLower(s) {
	case "true", "on", "1":
		return true, nil
	case "false", "off", "0":
		return false, nil
	}
	return false, fmt.Errorf("invalid value for bool option: %s", s)
}

// Set implements pflag.Value.
func (b tritonBool) Set(s string) error {
	v, err := parseTritonBool(s)
	if err != nil {
		return err
	}
	return b.Value.Set(strconv.FormatBool(v))
}

// tritonIntBool is --log-verbose's value: a level, or true (1) or false
// (0), as Triton's ParseIntBoolOption.
type tritonIntBool struct{ pflag.Value }

// Set implements pflag.Value.
func (b tritonIntBool) Set(s string) error {
	switch strings.ToLower(s) {
	case "true":
		s = "1"
	case "false":
		s = "0"
	}
	return b.Value.Set(s)
}

// tritonArgs rewrites a boolean option followed by a boolean value as one
// argument (--allow-http false as --allow-http=false), which pflag takes
// for the option alone followed by an argument. serve takes no
// arguments, so a boolean value after a boolean option is always its
// value.
func tritonArgs(f *pflag.FlagSet, args []string) []string {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(out, args[i:]...)
		}
		if name, ok := strings.CutPrefix(a, "--"); ok && !strings.Contains(name, "=") && i+1 < len(args) {
			if fl := f.Lookup(name); fl != nil {
				if _, isBool := fl.Value.(tritonBool); isBool {
					if _, err := parseTritonBool(args[i+1]); err == nil {
						out = append(out, a+"="+args[i+1])
						i++
						continue
					}
				}
			}
		}
		out = append(out, a)
	}
	return out
}

// tritonCommandLine makes cmd read its command line with Triton's syntax
// (see above): it parses the flags itself, after tritonArgs, and then runs
// cmd's RunE. Call it once every flag is bound.
func tritonCommandLine(cmd *cobra.Command) {
	f := cmd.Flags()
	for _, name := range tritonBoolOptions {
		if fl := f.Lookup(name); fl != nil {
			fl.Value = tritonBool{fl.Value}
		}
	}
	if fl := f.Lookup("log-verbose"); fl != nil {
		fl.Value = tritonIntBool{fl.Value}
	}
	run := cmd.RunE
	cmd.DisableFlagParsing = true
	cmd.Args = cobra.ArbitraryArgs
	cmd.RunE = func(c *cobra.Command, args []string) error {
		if err := c.Flags().Parse(tritonArgs(c.Flags(), args)); err != nil {
			if errors.Is(err, pflag.ErrHelp) {
				return c.Help()
			}
			return c.FlagErrorFunc()(c, err)
		}
		if help, _ := c.Flags().GetBool("help"); help {
			return c.Help()
		}
		if rest := c.Flags().Args(); len(rest) > 0 {
			return fmt.Errorf("Unexpected argument: %s", rest[0])
		}
		return run(c, nil)
	}
}

// tritonFlags are Triton's options that belong to no other flag group:
// logging to a file, the deprecated --strict-model-config, client shared
// memory, host policies, the device options this server does not need,
// and the SageMaker and Vertex AI endpoints it does not have.
type tritonFlags struct {
	LogFile                string
	StrictModelConfig      bool
	AllowClientShm         bool
	HostPolicy             []string
	ModelLoadGPULimit      []string
	EnablePeerAccess       bool
	CUDAVirtualAddressSize []string
	BufferManagerThreads   int
	AllowSageMaker         bool
	SageMakerPort          int
	SageMakerSafePortRange string
	SageMakerThreads       int
	AllowVertexAI          bool
	VertexAIPort           int
	VertexAIThreads        int
	VertexAIDefaultModel   string
	ModelStore             []string // --model-store, merged into --model-repository

	flags        *pflag.FlagSet
	logOut       *os.File                   // the open --log-file (complete)
	hostPolicies map[string]core.HostPolicy // HostPolicy parsed (validate)
	gpuLimits    map[int]float64            // ModelLoadGPULimit parsed (validate)
}

// Triton's defaults of the options below.
const (
	tritonHTTPThreads      = 8
	tritonGRPCInferThreads = 2
	tritonGRPCAllocPool    = 8
	tritonPlatformPort     = 8080 // SageMaker's and Vertex AI's
	tritonEndpointThreads  = 8    // SageMaker's and Vertex AI's
	tritonLoadThreads      = 4
)

func (t *tritonFlags) bind(f *pflag.FlagSet) {
	t.flags = f
	f.StringVar(&t.LogFile, "log-file", "", "write the log to this file (appended to) instead of standard error")
	f.BoolVar(&t.StrictModelConfig, "strict-model-config", false, "deprecated (Triton's): true is --disable-auto-complete-config")
	f.BoolVar(&t.AllowClientShm, "allow-client-shm", true,
		"let clients register system and CUDA shared-memory regions and name them in requests (false: refused, as Triton's default since 26.04)")
	f.StringArrayVar(&t.HostPolicy, "host-policy", nil,
		"<policy>,<setting>=<value>: cpu-cores=<cpus> (e.g. 0-3,8) pins, and numa-node=<node> binds the memory of, the threads that initialize and execute the instances under that host policy (instance_group host_policy; by default cpu, gpu_<id> or model) (repeatable)")
	f.StringArrayVar(&t.ModelLoadGPULimit, "model-load-gpu-limit", nil,
		"<gpu>:<fraction>, Triton's bound on a GPU's memory use at load: not enforced here, so a server that uses GPUs refuses to start with it; without GPUs it limits nothing (see docs/triton-flags.md) (repeatable)")
	f.BoolVar(&t.EnablePeerAccess, "enable-peer-access", true, "accepted for Triton compatibility; this server does not enable CUDA peer access between GPUs itself (backends do what they need)")
	f.StringArrayVar(&t.CUDAVirtualAddressSize, "cuda-virtual-address-size", nil,
		"<gpu>:<bytes>: accepted for Triton compatibility; this server has no growable-memory implicit state that would reserve it (repeatable)")
	f.IntVar(&t.BufferManagerThreads, "buffer-manager-thread-count", 0, "accepted for Triton compatibility; tensors are copied on the goroutine that needs them")
	f.BoolVar(&t.AllowSageMaker, "allow-sagemaker", false, "refused when true: this server has no SageMaker endpoint")
	f.IntVar(&t.SageMakerPort, "sagemaker-port", tritonPlatformPort, "no effect: this server has no SageMaker endpoint")
	f.StringVar(&t.SageMakerSafePortRange, "sagemaker-safe-port-range", "", "<port>-<port>; no effect: this server has no SageMaker endpoint")
	f.IntVar(&t.SageMakerThreads, "sagemaker-thread-count", tritonEndpointThreads, "no effect: this server has no SageMaker endpoint")
	aip := os.Getenv("AIP_MODE") == "PREDICTION"
	f.BoolVar(&t.AllowVertexAI, "allow-vertex-ai", aip, "refused when true (Triton's default where AIP_MODE=PREDICTION): this server has no Vertex AI endpoint")
	f.IntVar(&t.VertexAIPort, "vertex-ai-port", vertexAIPort(), "no effect: this server has no Vertex AI endpoint")
	f.IntVar(&t.VertexAIThreads, "vertex-ai-thread-count", tritonEndpointThreads, "no effect: this server has no Vertex AI endpoint")
	f.StringVar(&t.VertexAIDefaultModel, "vertex-ai-default-model", "", "no effect: this server has no Vertex AI endpoint")
}

// vertexAIPort is --vertex-ai-port's default, Triton's: AIP_HTTP_PORT, else
// 8080.
func vertexAIPort() int {
	if p, err := strconv.Atoi(os.Getenv("AIP_HTTP_PORT")); err == nil {
		return p
	}
	return tritonPlatformPort
}

// given reports whether option name was on the command line.
func (t *tritonFlags) given(name string) bool { return t.flags != nil && t.flags.Changed(name) }

// complete applies what Triton's options mean for the others: --model-store
// adds repositories, --strict-model-config=true disables auto-complete
// (and --disable-auto-complete-config wins over =false, with Triton's
// warning), repeated repositories count once (Triton keeps a set); and
// opens --log-file.
func (t *tritonFlags) complete(o *serveOptions) error {
	o.ModelRepositories = dedupe(append(o.ModelRepositories, t.ModelStore...))
	if t.given("strict-model-config") {
		fmt.Fprintln(os.Stderr, "Warning: '--strict-model-config' has been deprecated! Please use '--disable-auto-complete-config' instead.")
		switch {
		case o.DisableAutoComplete && !t.StrictModelConfig:
			fmt.Fprintln(os.Stderr, "Warning: Overriding deprecated '--strict-model-config' from False to True in favor of '--disable-auto-complete-config'!")
		case t.StrictModelConfig:
			o.DisableAutoComplete = true
		}
	}
	if t.LogFile != "" && t.logOut == nil {
		f, err := os.OpenFile(t.LogFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return fmt.Errorf("--log-file: %w", err)
		}
		t.logOut = f
	}
	return nil
}

// dedupe drops the repeats of a list, keeping the first of each.
func dedupe(list []string) []string {
	seen := make(map[string]bool, len(list))
	out := list[:0]
	for _, s := range list {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// validate checks the options, and refuses the endpoints this server does
// not have and the settings it cannot honour.
func (t *tritonFlags) validate(o *serveOptions) error {
	if t.given("model-config-name") && o.Repository.ConfigName == "" {
		return errors.New("Error: empty argument for --model-config-name")
	}
	if t.BufferManagerThreads < 0 {
		return fmt.Errorf("--buffer-manager-thread-count must not be negative, not %d", t.BufferManagerThreads)
	}
	if t.AllowSageMaker {
		return errors.New("--allow-sagemaker=true: this server has no SageMaker endpoint (Triton's /invocations and /ping on --sagemaker-port); serve the models over Triton's HTTP/REST or gRPC protocols, which it has (see docs/triton-flags.md)")
	}
	if t.AllowVertexAI {
		why := "--allow-vertex-ai=true"
		if !t.given("allow-vertex-ai") {
			why = "AIP_MODE=PREDICTION (where Triton serves Vertex AI by default)"
		}
		return fmt.Errorf("%s: this server has no Vertex AI endpoint (Triton's prediction route on --vertex-ai-port); pass --allow-vertex-ai=false to serve Triton's HTTP/REST and gRPC protocols instead (see docs/triton-flags.md)", why)
	}
	for _, c := range []struct {
		name string
		v    int
	}{{"sagemaker-port", t.SageMakerPort}, {"vertex-ai-port", t.VertexAIPort}} {
		if c.v < 0 || c.v > 65535 {
			return fmt.Errorf("--%s %d is out of range", c.name, c.v)
		}
	}
	for _, c := range []struct {
		name string
		v    int
	}{{"sagemaker-thread-count", t.SageMakerThreads}, {"vertex-ai-thread-count", t.VertexAIThreads}} {
		if c.v <= 0 {
			return fmt.Errorf("--%s must be positive, not %d", c.name, c.v)
		}
	}
	if r := t.SageMakerSafePortRange; r != "" {
		if _, _, err := parsePair(r, "-", strconv.Atoi, strconv.Atoi); err != nil {
			return fmt.Errorf("--sagemaker-safe-port-range: %w", err)
		}
	}
	for _, s := range t.CUDAVirtualAddressSize {
		if _, _, err := parsePair(s, ":", atoiNonNegative, parseBytes); err != nil {
			return fmt.Errorf("--cuda-virtual-address-size: %w", err)
		}
	}
	t.gpuLimits = map[int]float64{}
	for _, s := range t.ModelLoadGPULimit {
		dev, frac, err := parsePair(s, ":", atoiNonNegative, func(v string) (float64, error) { return strconv.ParseFloat(v, 64) })
		if err == nil && (frac < 0 || frac > 1) {
			err = fmt.Errorf("the fraction %v is not within [0.0, 1.0]", frac)
		}
		if err != nil {
			return fmt.Errorf("--model-load-gpu-limit: %w", err)
		}
		t.gpuLimits[dev] = frac
	}
	policies, err := parseHostPolicies(t.HostPolicy)
	if err != nil {
		return err
	}
	t.hostPolicies = policies
	return checkPortCollision(o)
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

// checkPortCollision refuses two endpoints on one address and port, with
// Triton's words (CheckPortCollision). With --reuse-*-port the kernel
// would let them share it and split the connections between protocols.
func checkPortCollision(o *serveOptions) error {
	type ep struct {
		name, address string
		port          int
	}
	var eps []ep
	if o.HTTP.Allow {
		eps = append(eps, ep{"HTTP", o.HTTP.Address, o.HTTP.Port})
	}
	if o.GRPC.Allow {
		eps = append(eps, ep{"GRPC", o.GRPCAddress, o.GRPCPort})
	}
	if o.Metrics.Allow {
		eps = append(eps, ep{"metrics", o.Metrics.address(&o.HTTP), o.Metrics.Port})
	}
	for i, a := range eps {
		for _, b := range eps[i+1:] {
			if a.port != 0 && a.port == b.port && a.address == b.address {
				return fmt.Errorf("The server cannot listen to %s requests and %s requests at the same address and port %s:%d", a.name, b.name, a.address, a.port)
			}
		}
	}
	return nil
}

// logOutput is where the log goes: --log-file, else standard error.
func (t *tritonFlags) logOutput() *os.File {
	if t.logOut != nil {
		return t.logOut
	}
	return os.Stderr
}

// apply sets the core options of the host policies.
func (t *tritonFlags) apply(opts *core.Options) {
	if len(t.hostPolicies) > 0 {
		opts.HostPolicies = t.hostPolicies
	}
}

// checkGPUs refuses --model-load-gpu-limit on a server with GPUs, whose
// loads it would have to watch (gpus: the ids in use).
func (t *tritonFlags) checkGPUs(log *serverlog.Logger, gpus []int) error {
	if len(t.gpuLimits) == 0 {
		return nil
	}
	if len(gpus) > 0 {
		return errors.New("--model-load-gpu-limit: this server does not refuse loads by GPU memory use; remove the option, or bound the models' memory in their backends (see docs/triton-flags.md)")
	}
	log.Infof("--model-load-gpu-limit: the server uses no GPU, so no load is limited")
	return nil
}

// warn says, once at start, which of the Triton options given have no
// effect here, and why.
func (t *tritonFlags) warn(log *serverlog.Logger, o *serveOptions) {
	noEffect := func(name, why string) {
		if t.given(name) {
			log.Infof("--%s=%s: accepted for Triton compatibility, without effect: %s", name, t.flags.Lookup(name).Value.String(), why)
		}
	}
	const goroutines = "Go's runtime serves each connection and request on a goroutine of its own, spread over every core (GOMAXPROCS)"
	noEffect("http-thread-count", goroutines)
	noEffect("grpc-infer-thread-count", goroutines)
	noEffect("buffer-manager-thread-count", "tensors are copied by the goroutine that needs them")
	noEffect("grpc-infer-allocation-pool-size", "request and response states are Go values the garbage collector reclaims")
	noEffect("enable-peer-access", "the server makes no copy between GPUs; backends enable the peer access they need")
	noEffect("cuda-virtual-address-size", "the server has no growable-memory implicit state to reserve it for")
	for _, name := range []string{"sagemaker-port", "sagemaker-safe-port-range", "sagemaker-thread-count"} {
		noEffect(name, "the server has no SageMaker endpoint")
	}
	for _, name := range []string{"vertex-ai-port", "vertex-ai-thread-count", "vertex-ai-default-model"} {
		noEffect(name, "the server has no Vertex AI endpoint")
	}
	for name, p := range t.hostPolicies {
		for key := range p.Settings {
			if key != "cpu-cores" && key != "numa-node" {
				log.Warnf("--host-policy %s,%s: a setting for backends, which this server does not hand them (they see the policy's name only)", name, key)
			}
		}
	}
}

// Triton's repository options.
func (r *repositoryFlags) bindTriton(f *pflag.FlagSet) {
	f.StringVar(&r.ConfigName, "model-config-name", "", "read configs/<name>.pbtxt in each model directory that has it, in place of config.pbtxt (e.g. h100)")
	f.IntVar(&r.LoadThreadCount, "model-load-thread-count", tritonLoadThreads, "models loaded at once at start (0: 1)")
	f.IntVar(&r.LoadRetryCount, "model-load-retry-count", 0, "times a model version that failed to load is tried again at once")
	f.BoolVar(&r.Namespacing, "model-namespacing", false, "not supported yet: true is refused (a model name found in two repositories is refused as a duplicate)")
}

func (r *repositoryFlags) validateTriton() error {
	if strings.ContainsAny(r.ConfigName, " \t\n/") || r.ConfigName == "." || r.ConfigName == ".." {
		return fmt.Errorf("--model-config-name %q: a file name (configs/<name>.pbtxt), without spaces or /", r.ConfigName)
	}
	if r.LoadThreadCount < 0 {
		return fmt.Errorf("--model-load-thread-count must not be negative, not %d", r.LoadThreadCount)
	}
	if r.LoadRetryCount < 0 {
		return fmt.Errorf("--model-load-retry-count must not be negative, not %d", r.LoadRetryCount)
	}
	if r.Namespacing {
		return errors.New("--model-namespacing=true: not supported yet; models of the same name in two repositories are refused as duplicates (see docs/triton-flags.md)")
	}
	return nil
}

// applyTriton sets the core options of Triton's repository options.
func (r *repositoryFlags) applyTriton(opts *core.Options) {
	opts.ModelConfigName = r.ConfigName
	opts.LoadConcurrency = max(1, r.LoadThreadCount) // Triton's std::max(1u, ...)
	opts.LoadRetries = r.LoadRetryCount
}

// Triton's gRPC options.
func (g *grpcFlags) bindTriton(f *pflag.FlagSet) {
	f.BoolVar(&g.Allow, "allow-grpc", true, "serve Triton's gRPC protocol")
	f.BoolVar(&g.ReusePort, "reuse-grpc-port", false, "listen with SO_REUSEPORT, so that several servers (with the same models) share the gRPC port")
	f.StringVar(&g.HeaderForwardPattern, "grpc-header-forward-pattern", "",
		"regular expression (RE2, case-insensitive, unanchored): call metadata whose keys match become string parameters of each inference request")
	f.IntVar(&g.InferThreadCount, "grpc-infer-thread-count", tritonGRPCInferThreads, "2 to 128; accepted for Triton compatibility, without effect: requests run on goroutines")
	f.IntVar(&g.InferAllocationPoolSize, "grpc-infer-allocation-pool-size", tritonGRPCAllocPool, "accepted for Triton compatibility, without effect: request states are not pooled")
	f.StringVar(&g.CompressionLevel, "grpc-infer-response-compression-level", "none",
		`"none", "low", "medium" or "high": gzip the responses of ModelInfer and ModelStreamInfer at that level, for clients that accept gzip`)
	f.IntVar(&g.MaxConnectionAgeMs, "grpc-max-connection-age", 0, "ms after which a connection is closed gracefully (give or take 10%); 0: never")
	f.IntVar(&g.MaxConnectionAgeGraceMs, "grpc-max-connection-age-grace", 0, "ms the calls of a connection closed for its age have to finish before it is cut; 0: as long as they take")
}

// gzip levels of --grpc-infer-response-compression-level: none, gzip's
// fastest, its default (6) and its best.
var compressionLevels = map[string]int{"none": 0, "low": gzip.BestSpeed, "medium": 6, "high": gzip.BestCompression}

func (g *grpcFlags) validateTriton() error {
	if g.InferThreadCount < 2 || g.InferThreadCount > 128 {
		return fmt.Errorf("--grpc-infer-thread-count %d: invalid argument for --grpc_infer_thread_count. Must be in the range 2 to 128.", g.InferThreadCount)
	}
	if g.InferAllocationPoolSize < 0 {
		return fmt.Errorf("--grpc-infer-allocation-pool-size must not be negative, not %d", g.InferAllocationPoolSize)
	}
	level, ok := compressionLevels[strings.ToLower(g.CompressionLevel)]
	if !ok {
		return fmt.Errorf("--grpc-infer-response-compression-level %q: invalid argument for --grpc_infer_response_compression_level (want none, low, medium or high)", g.CompressionLevel)
	}
	g.compression = level
	if g.MaxConnectionAgeMs < 0 || g.MaxConnectionAgeGraceMs < 0 {
		return fmt.Errorf("--grpc-max-connection-age (%d) and --grpc-max-connection-age-grace (%d) must not be negative", g.MaxConnectionAgeMs, g.MaxConnectionAgeGraceMs)
	}
	re, err := protocol.HeaderForwardPattern(g.HeaderForwardPattern)
	if err != nil {
		return fmt.Errorf("--grpc-header-forward-pattern %q: %w", g.HeaderForwardPattern, err)
	}
	g.headerForward = re
	return nil
}

// Triton's HTTP options.
func (h *httpFlags) bindTriton(f *pflag.FlagSet) {
	f.BoolVar(&h.ReusePort, "reuse-http-port", false, "listen with SO_REUSEPORT, so that several servers (with the same models) share the HTTP port")
	f.StringVar(&h.HeaderForwardPattern, "http-header-forward-pattern", "",
		"regular expression (RE2, case-insensitive, unanchored): request headers whose names match become string parameters (named in lower case) of the inference request of /infer and /generate")
	f.IntVar(&h.ThreadCount, "http-thread-count", tritonHTTPThreads, "accepted for Triton compatibility, without effect: requests run on goroutines")
}

func (h *httpFlags) validateTriton() error {
	if h.ThreadCount <= 0 {
		return fmt.Errorf("--http-thread-count must be positive, not %d", h.ThreadCount)
	}
	re, err := protocol.HeaderForwardPattern(h.HeaderForwardPattern)
	if err != nil {
		return fmt.Errorf("--http-header-forward-pattern %q: %w", h.HeaderForwardPattern, err)
	}
	h.headerForward = re
	return nil
}

// Triton's --metrics-config.
func (m *metricsFlags) bindTriton(f *pflag.FlagSet) {
	f.StringArrayVar(&m.Config, "metrics-config", nil,
		"<setting>=<value>: counter_latencies=true and summary_latencies=false (the defaults) are what this server reports; histogram_latencies=true|false is accepted (the decoupled models' first-response histogram is always reported); other values are refused (repeatable)")
}

// metricsSettings are Triton's --metrics-config settings, each with the
// values this server serves; a value it does not serve is refused.
var metricsSettings = map[string]func(string) error{
	"counter_latencies": boolSetting(true, "the nv_inference_*_duration_us counters are always reported"),
	"summary_latencies": boolSetting(false, "this server reports no latency summaries"),
	"histogram_latencies": func(v string) error {
		_, err := parseTritonBool(v)
		return err
	},
	"summary_quantiles": func(string) error {
		return errors.New("this server reports no latency summaries")
	},
}

// boolSetting accepts a boolean setting's value when it is served.
func boolSetting(served bool, why string) func(string) error {
	return func(v string) error {
		b, err := parseTritonBool(v)
		if err != nil {
			return err
		}
		if b != served {
			return errors.New(why)
		}
		return nil
	}
}

func (m *metricsFlags) validateTriton() error {
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
