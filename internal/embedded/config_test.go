package embedded_test

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/tritonhost/tritonhost/abi"
	"github.com/tritonhost/tritonhost/core/ratelimit"
	"github.com/tritonhost/tritonhost/core/serverlog"
	"github.com/tritonhost/tritonhost/internal/embedded"
	"github.com/tritonhost/tritonhost/internal/testenv"
)

// optionSetters are the setters of TRITONSERVER_ServerOptions, each with
// what it sets in abi.ServerOptions (abi/options.go) given a value other
// than Triton's default; nil for a setter whose non-default value is
// refused (model namespacing, which no server here has).
var optionSetters = map[string]func(o *abi.ServerOptions){
	"TRITONSERVER_ServerOptionsSetServerId": func(o *abi.ServerOptions) { o.ID = "mine" },
	"TRITONSERVER_ServerOptionsSetModelRepositoryPath": func(o *abi.ServerOptions) {
		o.ModelRepositories = append(o.ModelRepositories, "/other")
	},
	"TRITONSERVER_ServerOptionsSetModelControlMode":  func(o *abi.ServerOptions) { o.ModelControl = abi.ModelControlNone },
	"TRITONSERVER_ServerOptionsSetStartupModel":      func(o *abi.ServerOptions) { o.ModelControl, o.StartupModels = abi.ModelControlExplicit, []string{"m"} },
	"TRITONSERVER_ServerOptionsSetStrictModelConfig": func(o *abi.ServerOptions) { o.StrictModelConfig = false },
	"TRITONSERVER_ServerOptionsSetModelConfigName":   func(o *abi.ServerOptions) { o.ModelConfigName = "h100" },
	"TRITONSERVER_ServerOptionsSetRateLimiterMode":   func(o *abi.ServerOptions) { o.RateLimit = true },
	"TRITONSERVER_ServerOptionsAddRateLimiterResource": func(o *abi.ServerOptions) {
		o.RateLimitResources = []ratelimit.Resource{{Name: "R", Count: 2, Device: ratelimit.EveryDevice}, {Name: "G", Count: 1, Device: 1}}
	},
	"TRITONSERVER_ServerOptionsSetPinnedMemoryPoolByteSize": func(o *abi.ServerOptions) { o.PinnedPoolBytes = 1 << 20 },
	"TRITONSERVER_ServerOptionsSetCudaMemoryPoolByteSize":   func(o *abi.ServerOptions) { o.CUDAPoolBytes = map[int]uint64{0: 1 << 20} },
	"TRITONSERVER_ServerOptionsSetCudaVirtualAddressSize": func(o *abi.ServerOptions) {
		o.CUDAVirtualAddressSizes = map[int]uint64{0: 1 << 30}
	},
	"TRITONSERVER_ServerOptionsSetResponseCacheByteSize": func(o *abi.ServerOptions) {
		o.CacheConfigs = map[string]string{"local": `{"size":"4096"}`}
	},
	"TRITONSERVER_ServerOptionsSetCacheConfig":                   func(o *abi.ServerOptions) { o.CacheConfigs = map[string]string{"redis": `{}`} },
	"TRITONSERVER_ServerOptionsSetCacheDirectory":                func(o *abi.ServerOptions) { o.CacheDirectory = "/caches" },
	"TRITONSERVER_ServerOptionsSetMinSupportedComputeCapability": func(o *abi.ServerOptions) { o.MinComputeCapability = 8 },
	"TRITONSERVER_ServerOptionsSetExitOnError":                   func(o *abi.ServerOptions) { o.ExitOnError = false },
	"TRITONSERVER_ServerOptionsSetStrictReadiness":               func(o *abi.ServerOptions) { o.StrictReadiness = false },
	"TRITONSERVER_ServerOptionsSetExitTimeout":                   func(o *abi.ServerOptions) { o.ExitTimeout = 5 * time.Second },
	"TRITONSERVER_ServerOptionsSetBufferManagerThreadCount":      func(o *abi.ServerOptions) { o.BufferManagerThreads = 2 },
	"TRITONSERVER_ServerOptionsSetModelLoadThreadCount":          func(o *abi.ServerOptions) { o.LoadConcurrency = 2 },
	"TRITONSERVER_ServerOptionsSetModelLoadRetryCount":           func(o *abi.ServerOptions) { o.LoadRetries = 3 },
	"TRITONSERVER_ServerOptionsSetModelNamespacing":              func(o *abi.ServerOptions) { o.ModelNamespacing = true },
	"TRITONSERVER_ServerOptionsSetEnablePeerAccess":              func(o *abi.ServerOptions) { o.PeerAccess = false },
	"TRITONSERVER_ServerOptionsSetLogFile":                       func(o *abi.ServerOptions) { o.LogFile = "/tmp/server.log" },
	"TRITONSERVER_ServerOptionsSetLogInfo":                       func(o *abi.ServerOptions) { o.LogInfo = false },
	"TRITONSERVER_ServerOptionsSetLogWarn":                       func(o *abi.ServerOptions) { o.LogWarning = false },
	"TRITONSERVER_ServerOptionsSetLogError":                      func(o *abi.ServerOptions) { o.LogError = false },
	"TRITONSERVER_ServerOptionsSetLogFormat":                     func(o *abi.ServerOptions) { o.LogFormat = serverlog.FormatISO8601 },
	"TRITONSERVER_ServerOptionsSetLogVerbose":                    func(o *abi.ServerOptions) { o.LogVerbose = 2 },
	"TRITONSERVER_ServerOptionsSetMetrics":                       func(o *abi.ServerOptions) { o.Metrics = false },
	"TRITONSERVER_ServerOptionsSetGpuMetrics":                    func(o *abi.ServerOptions) { o.GPUMetrics = false },
	"TRITONSERVER_ServerOptionsSetCpuMetrics":                    func(o *abi.ServerOptions) { o.CPUMetrics = false },
	"TRITONSERVER_ServerOptionsSetMetricsInterval":               func(o *abi.ServerOptions) { o.MetricsInterval = 500 * time.Millisecond },
	"TRITONSERVER_ServerOptionsSetBackendDirectory":              func(o *abi.ServerOptions) { o.BackendDirectory = "/backends" },
	"TRITONSERVER_ServerOptionsSetRepoAgentDirectory":            func(o *abi.ServerOptions) { o.RepoAgentDirectory = "/agents" },
	"TRITONSERVER_ServerOptionsSetModelLoadDeviceLimit":          func(o *abi.ServerOptions) { o.ModelLoadGPULimits = map[int]float64{0: 0.5} },
	"TRITONSERVER_ServerOptionsSetBackendConfig": func(o *abi.ServerOptions) {
		o.BackendConfig = map[string]map[string]string{"": {"k": "v"}, "identity": {"a": "b"}}
	},
	"TRITONSERVER_ServerOptionsSetHostPolicy": func(o *abi.ServerOptions) {
		o.HostPolicies = map[string]map[string]string{"gpu_0": {"numa-node": "0"}}
	},
	"TRITONSERVER_ServerOptionsSetMetricsConfig": func(o *abi.ServerOptions) {
		o.MetricsConfig = map[string]string{"counter_latencies": "true"}
	},
}

// TestEveryServerOptionReachesTheConfig: every setter of
// TRITONSERVER_ServerOptions that tritonserver.h declares is in
// optionSetters, every field of abi.ServerOptions is set by one of them,
// and each changes the server.Config that Config makes, which is then
// what server.New assembles, as it does for the serve command.
func TestEveryServerOptionReachesTheConfig(t *testing.T) {
	header, err := os.ReadFile(filepath.Join(testenv.RepoRoot(t), "include", "triton", "core", "tritonserver.h"))
	if err != nil {
		t.Fatal(err)
	}
	declared := regexp.MustCompile(`(?m)^TRITONSERVER_ServerOptions(?:Set|Add)\w+`).FindAllString(string(header), -1)
	slices.Sort(declared)
	declared = slices.Compact(declared)
	if len(declared) < 30 {
		t.Fatalf("only %d setters found in tritonserver.h", len(declared))
	}
	for _, name := range declared {
		if _, ok := optionSetters[name]; !ok {
			t.Errorf("%s: not in optionSetters (what does it set, and does it reach server.Config?)", name)
		}
	}
	for name := range optionSetters {
		if !slices.Contains(declared, name) {
			t.Errorf("%s: in optionSetters, not in tritonserver.h", name)
		}
	}

	base := abi.NewServerOptions()
	base.ModelRepositories = []string{"/models"}
	baseConfig := embedded.Config(base)
	if !baseConfig.GC.Unmanaged || !baseConfig.Isolation.NoWorkers || baseConfig.GRPC.Allow || baseConfig.HTTP.Allow || baseConfig.Metrics.Listen {
		t.Errorf("an embedded server's configuration %+v: want no listener, no workers and the process's collector left alone", baseConfig)
	}
	touched := map[string]bool{}
	for name, set := range optionSetters {
		if set == nil {
			continue
		}
		o := abi.NewServerOptions()
		o.ModelRepositories = []string{"/models"}
		set(&o)
		ov, bv := reflect.ValueOf(o), reflect.ValueOf(base)
		for i := range ov.NumField() {
			if !reflect.DeepEqual(ov.Field(i).Interface(), bv.Field(i).Interface()) {
				touched[ov.Type().Field(i).Name] = true
			}
		}
		if reflect.DeepEqual(embedded.Config(o), baseConfig) {
			t.Errorf("%s: the server's configuration is the same with and without it", name)
		}
	}
	for _, f := range reflect.VisibleFields(reflect.TypeFor[abi.ServerOptions]()) {
		if !touched[f.Name] {
			t.Errorf("abi.ServerOptions.%s: no setter in optionSetters sets it", f.Name)
		}
	}
}

// TestConfigSpellsTheOptionsAsTheFlags: the options that take several
// values become the serve flags' settings, which server.New parses.
func TestConfigSpellsTheOptionsAsTheFlags(t *testing.T) {
	o := abi.NewServerOptions()
	o.ModelRepositories = []string{t.TempDir()}
	for _, name := range []string{"TRITONSERVER_ServerOptionsSetBackendConfig", "TRITONSERVER_ServerOptionsAddRateLimiterResource",
		"TRITONSERVER_ServerOptionsSetCudaMemoryPoolByteSize", "TRITONSERVER_ServerOptionsSetCudaVirtualAddressSize",
		"TRITONSERVER_ServerOptionsSetModelLoadDeviceLimit", "TRITONSERVER_ServerOptionsSetHostPolicy", "TRITONSERVER_ServerOptionsSetMetricsConfig",
		"TRITONSERVER_ServerOptionsSetRateLimiterMode"} {
		optionSetters[name](&o)
	}
	c := embedded.Config(o)
	for _, tc := range []struct {
		name      string
		got, want []string
	}{
		{"backend config", c.Backends.Config, []string{"k=v", "identity,a=b"}},
		{"rate limit resources", c.RateLimit.Resources, []string{"R:2", "G:1:1"}},
		{"CUDA pools", c.GPU.CUDAPools, []string{"0:1048576"}},
		{"CUDA virtual address sizes", c.Triton.CUDAVirtualAddressSize, []string{"0:1073741824"}},
		{"model load GPU limits", c.Triton.ModelLoadGPULimit, []string{"0:0.5"}},
		{"host policies", c.Triton.HostPolicy, []string{"gpu_0,numa-node=0"}},
		{"metrics config", c.Metrics.Config, []string{"counter_latencies=true"}},
	} {
		if !slices.Equal(tc.got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, tc.got, tc.want)
		}
	}
	if c.RateLimit.Mode != "execution_count" {
		t.Errorf("rate limit mode %q", c.RateLimit.Mode)
	}
	// Every setting is one the server takes (Validate is New's first
	// step); NUMA node 0 need not exist on this machine.
	c.Triton.HostPolicy = nil
	if err := c.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
}
