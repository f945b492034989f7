// Package embedded creates the servers that TRITONSERVER_ServerNew asks
// for: a server running inside the calling process, with no network
// endpoint, as an application that embeds Triton (linked with
// libtritonserver.so) creates one. It converts the options
// (abi.ServerOptions) into a server.Config (Config), each option setting
// the field of the serve flag of the same meaning, and calls server.New:
// package server alone assembles servers.
//
// Linking the package registers its factory with package abi (in init,
// as database/sql drivers register themselves); the tritonhost binary and
// libtritonserver.so link it.
package embedded

import (
	"context"
	"errors"
	"slices"
	"sort"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/tritonhost/tritonhost/abi"
	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/ratelimit"
	"github.com/tritonhost/tritonhost/server"
)

// Version is what TRITONSERVER_ServerMetadata reports as the server's
// version; the program that links the package sets it from its own version
// stamp.
var Version = "dev"

func init() { abi.SetServerFactory(New) }

// Config returns the configuration of the server the options ask for:
// server.DefaultConfig with every option set, no listener (the
// application calls the server through the C API), metrics kept for
// TRITONSERVER_ServerMetrics, backends in the application's process, and
// its garbage collector left alone.
func Config(o abi.ServerOptions) server.Config {
	c := server.DefaultConfig()
	c.ID, c.Version = o.ID, Version

	m := &c.Models
	m.Repositories = slices.Clone(o.ModelRepositories)
	switch o.ModelControl {
	case abi.ModelControlExplicit:
		m.ControlMode = "explicit"
		m.LoadModels = slices.Clone(o.StartupModels) // Triton reads them under explicit control only
	case abi.ModelControlPoll:
		m.ControlMode, m.PollOnRequest = "poll", true
	default:
		m.ControlMode = "none"
	}
	m.DisableAutoComplete = o.StrictModelConfig
	m.ConfigName = o.ModelConfigName
	m.LoadThreadCount, m.LoadRetryCount = o.LoadConcurrency, o.LoadRetries
	m.Namespacing = o.ModelNamespacing

	c.Backends.Directory = o.BackendDirectory
	c.Backends.Config = backendConfig(o.BackendConfig)
	c.Isolation.NoWorkers = true // the program is the application, not tritonhost

	c.Plugins.CacheDirectory, c.Plugins.RepoAgentDirectory = o.CacheDirectory, o.RepoAgentDirectory
	c.Plugins.CacheJSON = o.CacheConfigs

	c.GPU.MinComputeCapability = o.MinComputeCapability
	c.GPU.PinnedPoolBytes = int64(min(o.PinnedPoolBytes, 1<<62))
	c.GPU.CUDAPools = pairs(o.CUDAPoolBytes, ":", func(n uint64) string { return strconv.FormatUint(n, 10) })
	c.GPU.AllowMetrics = o.GPUMetrics

	c.Log.Verbose, c.Log.Info, c.Log.Warning, c.Log.Error = o.LogVerbose, o.LogInfo, o.LogWarning, o.LogError
	c.Log.Format, c.Log.File = string(o.LogFormat), o.LogFile

	c.GRPC.Allow, c.HTTP.Allow = false, false
	c.Metrics.Allow, c.Metrics.Listen, c.Metrics.AllowCPU = o.Metrics, false, o.CPUMetrics
	c.Metrics.IntervalMs = int(o.MetricsInterval / time.Millisecond)
	for _, k := range sortedKeys(o.MetricsConfig) {
		c.Metrics.Config = append(c.Metrics.Config, k+"="+o.MetricsConfig[k])
	}

	if o.RateLimit {
		c.RateLimit.Mode = "execution_count"
	}
	for _, r := range o.RateLimitResources {
		arg := r.Name + ":" + strconv.FormatUint(r.Count, 10)
		if r.Device != ratelimit.EveryDevice {
			arg += ":" + strconv.Itoa(r.Device)
		}
		c.RateLimit.Resources = append(c.RateLimit.Resources, arg)
	}

	c.GC.Unmanaged = true // the application's process
	c.Lifecycle.ExitTimeoutSecs = int(o.ExitTimeout / time.Second)
	c.Lifecycle.ExitOnError, c.Lifecycle.StrictReadiness = o.ExitOnError, o.StrictReadiness

	t := &c.Triton
	if !o.PeerAccess {
		t.EnablePeerAccess = &o.PeerAccess
	}
	if o.BufferManagerThreads != 0 {
		t.BufferManagerThreads = &o.BufferManagerThreads
	}
	t.CUDAVirtualAddressSize = pairs(o.CUDAVirtualAddressSizes, ":", func(n uint64) string { return strconv.FormatUint(n, 10) })
	t.ModelLoadGPULimit = pairs(o.ModelLoadGPULimits, ":", func(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) })
	for _, p := range sortedKeys(o.HostPolicies) {
		for _, k := range sortedKeys(o.HostPolicies[p]) {
			t.HostPolicy = append(t.HostPolicy, p+","+k+"="+o.HostPolicies[p][k])
		}
	}
	return c
}

// backendConfig writes backend settings as --backend-config takes them:
// <backend>,<key>=<value>, or <key>=<value> for every backend.
func backendConfig(cfg map[string]map[string]string) []string {
	var out []string
	for _, b := range sortedKeys(cfg) {
		for _, k := range sortedKeys(cfg[b]) {
			s := k + "=" + cfg[b][k]
			if b != "" {
				s = b + "," + s
			}
			out = append(out, s)
		}
	}
	return out
}

// pairs writes a map by GPU as the <gpu><sep><value> settings of a flag.
func pairs[V any](m map[int]V, sep string, format func(V) string) []string {
	var out []string
	for _, k := range sortedKeys(m) {
		out = append(out, strconv.Itoa(k)+sep+format(m[k]))
	}
	return out
}

// sortedKeys returns m's keys in order, for settings in a stable order.
func sortedKeys[K int | string, V any](m map[K]V) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	return keys
}

// New creates a server as the options say (Config, server.New) and
// returns its host, with the server attached and described: its models
// have loaded (or failed to) when New returns. With ExitOnError, a model
// that failed to load makes New fail, as Triton's TRITONSERVER_ServerNew
// does ("failed to load all models"), after stopping what it started.
func New(o abi.ServerOptions) (*abi.Host, error) {
	srv, err := server.New(context.Background(), Config(o))
	switch {
	case errors.Is(err, server.ErrModelLoad):
		return nil, core.Errorf(core.CodeInternal, "failed to load all models")
	case err != nil:
		code := core.CodeOf(err)
		if code == core.CodeUnknown {
			code = core.CodeInvalidArg
		}
		return nil, core.Errorf(code, "create the server: %w", err)
	}
	e := &embedded{srv: srv}
	e.exitTimeout.Store(int64(o.ExitTimeout))
	host := srv.Host()
	info := host.ServerInfo()
	info.Stop, info.SetExitTimeout, info.Close = e.stop, e.setExitTimeout, srv.Release
	host.SetServerInfo(info)
	return host, nil
}

// embedded is a server New made, for ServerInfo's Stop and
// SetExitTimeout.
type embedded struct {
	srv         *server.Server
	exitTimeout atomic.Int64 // time.Duration
}

// stop shuts the server down within the exit timeout, once: later calls
// return the first one's error.
func (e *embedded) stop() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(e.exitTimeout.Load()))
	defer cancel()
	if err := e.srv.Shutdown(ctx); err != nil {
		return core.Errorf(core.CodeUnavailable, "%w", err)
	}
	return nil
}

func (e *embedded) setExitTimeout(seconds uint) {
	e.exitTimeout.Store(int64(time.Duration(seconds) * time.Second))
}
