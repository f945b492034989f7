package abi

/*
#include "server_options.h"
*/
import "C"

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/ratelimit"
	"github.com/tritonhost/tritonhost/core/serverlog"
)

// ModelControl is how a server made by TRITONSERVER_ServerNew loads its
// models, numbered as TRITONSERVER_ModelControlMode.
type ModelControl int

// Model control modes.
const (
	ModelControlNone     ModelControl = 0 // every model at start
	ModelControlPoll     ModelControl = 1 // every model at start, then TRITONSERVER_ServerPollModelRepository
	ModelControlExplicit ModelControl = 2 // the startup models, then load and unload requests
)

// ServerOptions are the settings of a TRITONSERVER_ServerOptions object,
// which TRITONSERVER_ServerNew hands to the server factory (SetServerFactory).
// The setters check what they can alone and refuse the settings of what no
// server here has (model namespacing); the factory checks the rest as the
// serve command checks its flags. Each field names the `tritonhost serve`
// flag that sets the same thing.
type ServerOptions struct {
	ID                   string           // --id
	ModelRepositories    []string         // --model-repository
	ModelControl         ModelControl     // --model-control-mode
	StartupModels        []string         // --load-model
	StrictModelConfig    bool             // --disable-auto-complete-config
	ModelConfigName      string           // --model-config-name
	PinnedPoolBytes      uint64           // --pinned-memory-pool-byte-size
	CUDAPoolBytes        map[int]uint64   // --cuda-memory-pool-byte-size
	MinComputeCapability float64          // --min-supported-compute-capability
	ExitOnError          bool             // --exit-on-error
	StrictReadiness      bool             // --strict-readiness
	ExitTimeout          time.Duration    // --exit-timeout-secs
	LoadConcurrency      int              // --model-load-thread-count
	LoadRetries          int              // --model-load-retry-count
	ModelNamespacing     bool             // --model-namespacing
	PeerAccess           bool             // --enable-peer-access
	BufferManagerThreads int              // --buffer-manager-thread-count
	LogFile              string           // "": standard error
	LogInfo              bool             // --log-info
	LogWarning           bool             // --log-warning
	LogError             bool             // --log-error
	LogFormat            serverlog.Format // --log-format
	LogVerbose           int              // --log-verbose
	Metrics              bool             // --allow-metrics
	GPUMetrics           bool             // --allow-gpu-metrics
	CPUMetrics           bool             // --allow-cpu-metrics
	MetricsInterval      time.Duration    // --metrics-interval-ms
	BackendDirectory     string           // --backend-directory
	RepoAgentDirectory   string           // --repoagent-directory
	CacheDirectory       string           // --cache-directory
	// CacheConfigs holds the response cache's configuration by cache name
	// (--cache-config; --response-cache-byte-size for "local"): the JSON
	// its initialize receives. A server has at most one cache.
	CacheConfigs map[string]string
	// BackendConfig holds --backend-config settings, by backend ("" for
	// every backend).
	BackendConfig map[string]map[string]string
	// RateLimit is --rate-limit=execution_count
	// (TRITONSERVER_RATE_LIMIT_EXEC_COUNT); off by default.
	RateLimit bool
	// RateLimitResources are --rate-limit-resource's counts, in the order
	// given (Device ratelimit.EveryDevice: every device).
	RateLimitResources []ratelimit.Resource
	// CUDAVirtualAddressSizes are --cuda-virtual-address-size's sizes, by
	// GPU.
	CUDAVirtualAddressSizes map[int]uint64
	// ModelLoadGPULimits are --model-load-gpu-limit's fractions, by GPU.
	ModelLoadGPULimits map[int]float64
	// HostPolicies hold --host-policy settings, by policy.
	HostPolicies map[string]map[string]string
	// MetricsConfig holds --metrics-config settings.
	MetricsConfig map[string]string
}

// NewServerOptions returns Triton's defaults for an embedded server (see
// TRITONSERVER_ServerOptionsNew in tritonserver.h).
func NewServerOptions() ServerOptions {
	return ServerOptions{
		ID:                   "triton",
		ModelControl:         ModelControlPoll,
		StrictModelConfig:    true,
		PinnedPoolBytes:      256 << 20,
		MinComputeCapability: 6.0, // Triton's TRITON_MIN_COMPUTE_CAPABILITY
		ExitOnError:          true,
		StrictReadiness:      true,
		ExitTimeout:          30 * time.Second,
		LoadConcurrency:      4,
		PeerAccess:           true,
		LogInfo:              true,
		LogWarning:           true,
		LogError:             true,
		LogFormat:            serverlog.FormatDefault,
		Metrics:              true,
		GPUMetrics:           true,
		CPUMetrics:           true,
		MetricsInterval:      2 * time.Second,
		BackendDirectory:     "/opt/tritonserver/backends",
		RepoAgentDirectory:   "/opt/tritonserver/repoagents",
		CacheDirectory:       "/opt/tritonserver/caches",
	}
}

// clone returns a copy that shares nothing with o.
func (o ServerOptions) clone() ServerOptions {
	o.ModelRepositories = slices.Clone(o.ModelRepositories)
	o.StartupModels = slices.Clone(o.StartupModels)
	o.CUDAPoolBytes = maps.Clone(o.CUDAPoolBytes)
	o.CacheConfigs = maps.Clone(o.CacheConfigs)
	cfg := make(map[string]map[string]string, len(o.BackendConfig))
	for b, kv := range o.BackendConfig {
		cfg[b] = maps.Clone(kv)
	}
	o.BackendConfig = cfg
	o.RateLimitResources = slices.Clone(o.RateLimitResources)
	o.CUDAVirtualAddressSizes = maps.Clone(o.CUDAVirtualAddressSizes)
	o.ModelLoadGPULimits = maps.Clone(o.ModelLoadGPULimits)
	policies := make(map[string]map[string]string, len(o.HostPolicies))
	for p, kv := range o.HostPolicies {
		policies[p] = maps.Clone(kv)
	}
	o.HostPolicies = policies
	o.MetricsConfig = maps.Clone(o.MetricsConfig)
	return o
}

// serverOptions holds the settings of every live TRITONSERVER_ServerOptions
// object, in the whole process (options name no server).
var serverOptions table[*ServerOptions]

//export thostOptionsNew
func thostOptionsNew() (key C.uint64_t) {
	defer recoverLog("TRITONSERVER_ServerOptionsNew") // key 0: every setter refuses the options
	o := NewServerOptions()
	return C.uint64_t(serverOptions.add(&o))
}

//export thostOptionsDelete
func thostOptionsDelete(key C.uint64_t) {
	defer recoverLog("TRITONSERVER_ServerOptionsDelete")
	serverOptions.take(uint64(key))
}

//export thostOptionsSet
func thostOptionsSet(key C.uint64_t, which C.int, v *C.struct_thost_option_value, fn *C.char) (ret *C.TRITONSERVER_Error) {
	defer recoverError(C.GoString(fn), &ret)
	o, ok := serverOptions.get(uint64(key))
	if !ok {
		return cErrorf(core.CodeInvalidArg, "%s: invalid server options", C.GoString(fn))
	}
	return cError(o.set(int(which), optionValue{s1: goString(v.s1), s2: goString(v.s2), s3: goString(v.s3),
		i: int64(v.i), u: uint64(v.u), d: float64(v.d), b: bool(v.b)}))
}

func goString(s *C.char) string {
	if s == nil {
		return ""
	}
	return C.GoString(s)
}

// optionValue is one setter's value (struct thost_option_value).
type optionValue struct {
	s1, s2, s3 string
	i          int64
	u          uint64
	d          float64
	b          bool
}

// unsupported is the error of a setting no server here can honour:
// Triton's code for a feature its build leaves out.
func unsupported(format string, args ...any) error {
	return core.Errorf(core.CodeUnsupported, format, args...)
}

// set applies one setter to o, or refuses it.
func (o *ServerOptions) set(which int, v optionValue) error {
	switch which {
	case C.THOST_OPT_SERVER_ID:
		o.ID = v.s1
	case C.THOST_OPT_REPOSITORY:
		if !slices.Contains(o.ModelRepositories, v.s1) {
			o.ModelRepositories = append(o.ModelRepositories, v.s1)
		}
	case C.THOST_OPT_CONTROL_MODE:
		if v.i < int64(ModelControlNone) || v.i > int64(ModelControlExplicit) {
			return core.Errorf(core.CodeInvalidArg, "unknown control mode '%d'", v.i)
		}
		o.ModelControl = ModelControl(v.i)
	case C.THOST_OPT_STARTUP_MODEL:
		if !slices.Contains(o.StartupModels, v.s1) {
			o.StartupModels = append(o.StartupModels, v.s1)
		}
	case C.THOST_OPT_STRICT_CONFIG:
		o.StrictModelConfig = v.b
	case C.THOST_OPT_PINNED_POOL:
		o.PinnedPoolBytes = v.u
	case C.THOST_OPT_CUDA_POOL:
		if v.i < 0 {
			return core.Errorf(core.CodeInvalidArg, "expects device ID >= 0, got %d", v.i)
		}
		if o.CUDAPoolBytes == nil {
			o.CUDAPoolBytes = map[int]uint64{}
		}
		o.CUDAPoolBytes[int(v.i)] = v.u
	case C.THOST_OPT_MIN_COMPUTE_CAPABILITY:
		if v.d < 0 {
			return core.Errorf(core.CodeInvalidArg, "minimum compute capability %g is negative", v.d)
		}
		o.MinComputeCapability = v.d
	case C.THOST_OPT_EXIT_ON_ERROR:
		o.ExitOnError = v.b
	case C.THOST_OPT_STRICT_READINESS:
		o.StrictReadiness = v.b
	case C.THOST_OPT_EXIT_TIMEOUT:
		o.ExitTimeout = time.Duration(v.u) * time.Second
	case C.THOST_OPT_LOAD_THREADS:
		o.LoadConcurrency = int(min(v.u, 1<<10))
		if v.u == 0 {
			o.LoadConcurrency = 4
		}
	case C.THOST_OPT_PEER_ACCESS:
		o.PeerAccess = v.b
	case C.THOST_OPT_LOG_FILE:
		o.LogFile = v.s1
	case C.THOST_OPT_LOG_INFO:
		o.LogInfo = v.b
	case C.THOST_OPT_LOG_WARN:
		o.LogWarning = v.b
	case C.THOST_OPT_LOG_ERROR:
		o.LogError = v.b
	case C.THOST_OPT_LOG_FORMAT:
		switch v.i {
		case C.TRITONSERVER_LOG_DEFAULT:
			o.LogFormat = serverlog.FormatDefault
		case C.TRITONSERVER_LOG_ISO8601:
			o.LogFormat = serverlog.FormatISO8601
		default:
			return core.Errorf(core.CodeInvalidArg, "unknown log format '%d'", v.i)
		}
	case C.THOST_OPT_LOG_VERBOSE:
		o.LogVerbose = int(max(v.i, 0))
	case C.THOST_OPT_METRICS:
		o.Metrics = v.b
	case C.THOST_OPT_GPU_METRICS:
		o.GPUMetrics = v.b
	case C.THOST_OPT_CPU_METRICS:
		o.CPUMetrics = v.b
	case C.THOST_OPT_METRICS_INTERVAL:
		if v.u == 0 {
			return core.Errorf(core.CodeInvalidArg, "metrics interval must be positive")
		}
		o.MetricsInterval = time.Duration(min(v.u, uint64(time.Hour/time.Millisecond))) * time.Millisecond
	case C.THOST_OPT_BACKEND_DIRECTORY:
		o.BackendDirectory = v.s1
	case C.THOST_OPT_REPOAGENT_DIRECTORY:
		o.RepoAgentDirectory = v.s1
	case C.THOST_OPT_CACHE_DIRECTORY:
		o.CacheDirectory = v.s1
	case C.THOST_OPT_RESPONSE_CACHE_SIZE:
		// The older form of a "local" cache's size; 0 sets no cache.
		if v.u == 0 {
			delete(o.CacheConfigs, "local")
			return nil
		}
		o.setCacheConfig("local", fmt.Sprintf(`{"size":"%d"}`, v.u))
	case C.THOST_OPT_CACHE_CONFIG:
		if !json.Valid([]byte(v.s2)) {
			return core.Errorf(core.CodeInvalidArg, "cache %q: the configuration is not JSON: %q", v.s1, v.s2)
		}
		o.setCacheConfig(v.s1, v.s2)
	case C.THOST_OPT_RATE_LIMITER:
		switch v.i {
		case C.TRITONSERVER_RATE_LIMIT_OFF:
			o.RateLimit = false
		case C.TRITONSERVER_RATE_LIMIT_EXEC_COUNT:
			o.RateLimit = true
		default:
			return core.Errorf(core.CodeInvalidArg, "unknown rate limit mode '%d'", v.i)
		}
	case C.THOST_OPT_RATE_LIMITER_RESOURCE:
		r := ratelimit.Resource{Name: v.s1, Count: v.u, Device: int(v.i)}
		if _, err := ratelimit.New([]ratelimit.Resource{r}); err != nil {
			return core.Errorf(core.CodeInvalidArg, "%v", err)
		}
		o.RateLimitResources = append(o.RateLimitResources, r)
	case C.THOST_OPT_BACKEND_CONFIG:
		if o.BackendConfig == nil {
			o.BackendConfig = map[string]map[string]string{}
		}
		if o.BackendConfig[v.s1] == nil {
			o.BackendConfig[v.s1] = map[string]string{}
		}
		o.BackendConfig[v.s1][v.s2] = v.s3
	default:
		return o.setTriton(which, v)
	}
	return nil
}

// setInMap sets (*m)[k] = v, making the map if need be.
func setInMap[K comparable, V any](m *map[K]V, k K, v V) {
	if *m == nil {
		*m = map[K]V{}
	}
	(*m)[k] = v
}

func (o *ServerOptions) setCacheConfig(name, config string) {
	if o.CacheConfigs == nil {
		o.CacheConfigs = map[string]string{}
	}
	o.CacheConfigs[name] = config
}

// setTriton sets Triton's other options, those the serve command takes
// with Triton's syntax (docs/triton-flags.md says what each does here),
// and refuses model namespacing, which no server here has.
func (o *ServerOptions) setTriton(which int, v optionValue) error {
	switch which {
	case C.THOST_OPT_CONFIG_NAME:
		o.ModelConfigName = v.s1
	case C.THOST_OPT_CUDA_VIRTUAL_ADDRESS:
		if v.i < 0 {
			return core.Errorf(core.CodeInvalidArg, "expects device ID >= 0, got %d", v.i)
		}
		setInMap(&o.CUDAVirtualAddressSizes, int(v.i), v.u)
	case C.THOST_OPT_BUFFER_MANAGER_THREADS:
		o.BufferManagerThreads = int(min(v.u, 1<<10))
	case C.THOST_OPT_LOAD_RETRIES:
		o.LoadRetries = int(min(v.u, 1<<10))
	case C.THOST_OPT_NAMESPACING:
		o.ModelNamespacing = v.b
	case C.THOST_OPT_LOAD_DEVICE_LIMIT:
		switch {
		case v.i < 0:
			return core.Errorf(core.CodeInvalidArg, "expects device ID >= 0, got %d", v.i)
		case v.d < 0 || v.d > 1:
			return core.Errorf(core.CodeInvalidArg, "expects limit fraction to be in range [0.0, 1.0], got %f", v.d)
		case v.u != C.TRITONSERVER_INSTANCEGROUPKIND_GPU:
			return core.Errorf(core.CodeInvalidArg, "given device kind is not supported, got: %s",
				C.GoString(C.TRITONSERVER_InstanceGroupKindString(C.TRITONSERVER_InstanceGroupKind(v.u))))
		}
		setInMap(&o.ModelLoadGPULimits, int(v.i), v.d)
	case C.THOST_OPT_HOST_POLICY:
		if v.s2 != "numa-node" && v.s2 != "cpu-cores" {
			return unsupported("Unsupported host policy setting '%s' is specified, supported settings are 'numa-node', 'cpu-cores'", v.s2)
		}
		policy := o.HostPolicies[v.s1]
		setInMap(&policy, v.s2, v.s3)
		setInMap(&o.HostPolicies, v.s1, policy)
	case C.THOST_OPT_METRICS_CONFIG:
		if v.s1 != "" {
			return unsupported("metrics settings of the group %q are not supported: --metrics-config takes <setting>=<value>", v.s1)
		}
		setInMap(&o.MetricsConfig, v.s2, v.s3)
	default:
		return core.Errorf(core.CodeInternal, "unknown server option %d", which)
	}
	return nil
}
