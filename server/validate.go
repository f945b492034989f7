package server

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/tritonhost/tritonhost/abi"
	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/ratelimit"
	"github.com/tritonhost/tritonhost/core/serverlog"
	"github.com/tritonhost/tritonhost/internal/objstore"
	"github.com/tritonhost/tritonhost/internal/protocol"
	"github.com/tritonhost/tritonhost/internal/trace"
	"github.com/tritonhost/tritonhost/loader"
)

// settings are a Config's settings read: the defaults that depend on
// where the program runs filled in, the compound settings parsed, the
// names normalised. resolve makes them; New builds the server from them.
type settings struct {
	backendDirectory string
	backendConfig    map[string]map[string]string
	controlMode      string // "none", "explicit" or "poll"
	logFormat        serverlog.Format
	cudaPools        map[int]uint64
	trace            trace.Config
	cacheDirectory   string
	agentDirectory   string
	cacheName        string            // "" when the server has no cache
	cacheSettings    map[string]string // its settings (CacheConfig, ResponseCacheByteSize)
	cacheJSON        string            // or its JSON (CacheJSON)
	grpcRestricted   protocol.Restrictions
	grpcForward      *regexp.Regexp // nil: none
	compression      int            // a gzip level; 0: none
	httpRestricted   protocol.Restrictions
	httpForward      *regexp.Regexp // nil: none
	rateLimitMode    string
	rateResources    []ratelimit.Resource
	hostPolicies     map[string]core.HostPolicy
	gpuLimits        map[int]float64
}

// Validate checks every setting, as New does before it starts anything:
// the error names the serve flag of the first setting at fault.
func (c Config) Validate() error {
	_, err := c.resolve()
	return err
}

// resolve checks c and reads its settings, in the order the serve
// command has always checked its flags.
func (c *Config) resolve() (*settings, error) {
	c.Models.Repositories = dedupe(c.Models.Repositories)
	s := &settings{backendDirectory: c.Backends.Directory}
	if s.backendDirectory == "" {
		s.backendDirectory = besideProgram("backends", "/opt/tritonserver/backends")
	}
	cfg, err := parseBackendConfig(c.Backends.Config)
	if err != nil {
		return nil, err
	}
	s.backendConfig = cfg
	if s.trace, err = c.Trace.parse(); err != nil {
		return nil, err
	}
	if err := c.Plugins.parse(s); err != nil {
		return nil, err
	}
	if s.cudaPools, err = c.GPU.parse(c.SharedMemory.CUDAMaxRegions); err != nil {
		return nil, err
	}
	if err := c.validateModels(s); err != nil {
		return nil, err
	}
	if c.GRPC.Port < 0 || c.GRPC.Port > 65535 {
		return nil, fmt.Errorf("--grpc-port %d is out of range", c.GRPC.Port)
	}
	if c.GRPC.MaxMessageBytes <= 0 {
		return nil, fmt.Errorf("--grpc-max-message-size must be positive")
	}
	if c.Log.Format != string(serverlog.FormatDefault) && c.Log.Format != string(serverlog.FormatISO8601) {
		return nil, fmt.Errorf("--log-format %q: want default or ISO8601", c.Log.Format)
	}
	s.logFormat = serverlog.Format(c.Log.Format)
	if c.Repository.FilesMaxSize <= 0 {
		return nil, fmt.Errorf("--model-files-max-size must be positive, not %d", c.Repository.FilesMaxSize)
	}
	if c.Lifecycle.ExitTimeoutSecs < 0 {
		return nil, errors.New("--exit-timeout-secs must not be negative")
	}
	if c.Backends.OutputBufferCacheBytes < 0 {
		return nil, errors.New("--output-buffer-cache-byte-size must not be negative")
	}
	if c.Backends.ExtraProcs < 0 || c.Backends.ExtraProcs > abi.MaxExtraProcs {
		return nil, fmt.Errorf("--backend-thread-extra-procs must be 0 to %d, not %d", abi.MaxExtraProcs, c.Backends.ExtraProcs)
	}
	if c.Backends.CallTimeoutSecs <= 0 {
		return nil, errors.New("--backend-call-timeout-secs must be positive")
	}
	if err := c.HTTP.validate(s); err != nil {
		return nil, err
	}
	if err := c.Metrics.validate(); err != nil {
		return nil, err
	}
	if c.Backends.EnsembleStepWaitSecs <= 0 {
		return nil, errors.New("--ensemble-step-wait-secs must be positive")
	}
	if c.SharedMemory.SystemMaxRegions <= 0 {
		return nil, errors.New("--system-shm-max-regions must be positive")
	}
	if c.SSLReloadMs <= 0 {
		return nil, errors.New("--ssl-reload-interval must be positive")
	}
	if err := c.InProcess.validate(); err != nil {
		return nil, err
	}
	if err := c.GC.validate(); err != nil {
		return nil, err
	}
	if err := c.Plugins.validate(); err != nil {
		return nil, err
	}
	if err := c.Repository.validate(); err != nil {
		return nil, err
	}
	if err := c.validateModelOptions(); err != nil {
		return nil, err
	}
	if s.rateLimitMode, s.rateResources, err = c.RateLimit.parse(); err != nil {
		return nil, err
	}
	if err := c.Isolation.validate(); err != nil {
		return nil, err
	}
	if err := c.ObjectStorage.validate(c.Models.Repositories); err != nil {
		return nil, err
	}
	if err := c.GRPC.validate(s); err != nil {
		return nil, err
	}
	if err := c.Triton.validate(s); err != nil {
		return nil, err
	}
	return s, c.checkPortCollision()
}

// validateModels checks the repositories and how models are loaded.
func (c *Config) validateModels(s *settings) error {
	m := &c.Models
	if len(m.Repositories) == 0 {
		return errors.New("--model-repository is required")
	}
	for _, r := range m.Repositories {
		if objstore.IsRemote(r) {
			continue // checked by ObjectStorage.validate
		}
		if st, err := os.Stat(r); err != nil || !st.IsDir() {
			return fmt.Errorf("--model-repository %q is not a directory", r)
		}
	}
	s.controlMode = strings.ToLower(m.ControlMode)
	switch s.controlMode {
	case "none", "explicit":
	case "poll":
		if m.RepositoryPollSecs <= 0 && !m.PollOnRequest {
			return fmt.Errorf("--repository-poll-secs must be positive with --model-control-mode=poll, not %d", m.RepositoryPollSecs)
		}
	default:
		return fmt.Errorf("--model-control-mode %q: want none, explicit or poll", m.ControlMode)
	}
	if len(m.LoadModels) > 0 && s.controlMode != "explicit" {
		return errors.New("Error: Use of '--load-model' requires setting '--model-control-mode=explicit' as well.")
	}
	return nil
}

// validateModelOptions checks Triton's options of the model repository.
func (c *Config) validateModelOptions() error {
	m := &c.Models
	if strings.ContainsAny(m.ConfigName, " \t\n/") || m.ConfigName == "." || m.ConfigName == ".." {
		return fmt.Errorf("--model-config-name %q: a file name (configs/<name>.pbtxt), without spaces or /", m.ConfigName)
	}
	if m.LoadThreadCount < 0 {
		return fmt.Errorf("--model-load-thread-count must not be negative, not %d", m.LoadThreadCount)
	}
	if m.LoadRetryCount < 0 {
		return fmt.Errorf("--model-load-retry-count must not be negative, not %d", m.LoadRetryCount)
	}
	return nil
}

// parseBackendConfig reads --backend-config settings, by backend ("" for
// every backend).
func parseBackendConfig(list []string) (map[string]map[string]string, error) {
	cfg := map[string]map[string]string{}
	for _, s := range list {
		backend, setting := "", s
		if i := strings.IndexByte(s, ','); i >= 0 {
			backend, setting = s[:i], s[i+1:]
		}
		k, v, ok := strings.Cut(setting, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--backend-config %q: want <backend>,<key>=<value> or <key>=<value>", s)
		}
		if cfg[backend] == nil {
			cfg[backend] = map[string]string{}
		}
		cfg[backend][k] = v
	}
	return cfg, nil
}

// besideProgram returns <dir of the program's dir>/name when it is a
// directory (a release unpacked, or a source tree after make), else
// fallback, Triton's default.
func besideProgram(name, fallback string) string {
	if exe, err := os.Executable(); err == nil {
		dir := filepath.Join(filepath.Dir(filepath.Dir(exe)), name)
		if st, err := os.Stat(dir); err == nil && st.IsDir() {
			return dir
		}
	}
	return fallback
}

// Default plugin directories, Triton's.
var (
	defaultCacheDirectory     = loader.DefaultCacheDirectory
	defaultRepoAgentDirectory = loader.DefaultRepoAgentDirectory
)

// checkPortCollision refuses two endpoints on one address and port, with
// Triton's words (CheckPortCollision). With --reuse-*-port the kernel
// would let them share it and split the connections between protocols.
func (c *Config) checkPortCollision() error {
	type ep struct {
		name, address string
		port          int
	}
	var eps []ep
	if c.HTTP.Allow {
		eps = append(eps, ep{"HTTP", c.HTTP.Address, c.HTTP.Port})
	}
	if c.GRPC.Allow {
		eps = append(eps, ep{"GRPC", c.GRPC.Address, c.GRPC.Port})
	}
	if c.Metrics.Allow && c.Metrics.Listen {
		eps = append(eps, ep{"metrics", c.Metrics.address(&c.HTTP), c.Metrics.Port})
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

// dedupe returns list without its repeats, keeping the first of each, in
// a slice of its own.
func dedupe(list []string) []string {
	var out []string
	for _, s := range list {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}
