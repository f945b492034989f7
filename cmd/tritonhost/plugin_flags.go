package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/tritonhost/tritonhost/abi"
	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/serverlog"
	"github.com/tritonhost/tritonhost/loader"
)

// pluginFlags are the response cache's and the repository agents' flags:
// Triton's (--cache-config, --response-cache-byte-size,
// --cache-directory, --repoagent-directory) and the bounds of the cache
// path (tritonhost's own).
type pluginFlags struct {
	CacheConfig           []string
	ResponseCacheByteSize int64
	CacheDirectory        string
	RepoAgentDirectory    string
	CacheCallTimeoutMs    int
	CacheMaxCalls         int
	CacheHeldBytes        int64

	cacheName     string            // "" when the server has no cache
	cacheSettings map[string]string // its --cache-config settings
}

func (p *pluginFlags) bind(f *pflag.FlagSet) {
	f.StringArrayVar(&p.CacheConfig, "cache-config", nil,
		"response cache setting <cache>,<key>=<value> (repeatable, one cache): e.g. local,size=1048576 loads <cache-directory>/local/libtritoncache_local.so")
	f.Int64Var(&p.ResponseCacheByteSize, "response-cache-byte-size", 0,
		"the older form of --cache-config local,size=<bytes> (0: no cache)")
	f.StringVar(&p.CacheDirectory, "cache-directory", "",
		"directory holding <cache>/libtritoncache_<cache>.so (default: caches/ next to the binary's directory, else "+loader.DefaultCacheDirectory+")")
	f.StringVar(&p.RepoAgentDirectory, "repoagent-directory", "",
		"directory holding <agent>/libtritonrepoagent_<agent>.so (default: repoagents/ next to the binary's directory, else "+loader.DefaultRepoAgentDirectory+")")
	f.IntVar(&p.CacheCallTimeoutMs, "cache-call-timeout", int(core.DefaultCacheCallTimeout/time.Millisecond),
		"ms a request waits for its response cache lookup; a slower lookup is a miss")
	f.IntVar(&p.CacheMaxCalls, "cache-max-calls", core.DefaultCacheMaxCalls,
		"response cache lookups and inserts running at once; a lookup past it is a miss")
	f.Int64Var(&p.CacheHeldBytes, "cache-held-byte-size", core.DefaultCacheMaxBytes,
		"bytes of responses held on their way into or out of the response cache; an insert past it is dropped and counted")
}

// complete fills the default directories and reads the cache's settings.
func (p *pluginFlags) complete() error {
	if p.CacheDirectory == "" {
		p.CacheDirectory = besideBinary("caches", loader.DefaultCacheDirectory)
	}
	if p.RepoAgentDirectory == "" {
		p.RepoAgentDirectory = besideBinary("repoagents", loader.DefaultRepoAgentDirectory)
	}
	if p.ResponseCacheByteSize < 0 {
		return fmt.Errorf("--response-cache-byte-size must not be negative, not %d", p.ResponseCacheByteSize)
	}
	if p.ResponseCacheByteSize > 0 {
		if len(p.CacheConfig) > 0 {
			return errors.New("incompatible flags --response-cache-byte-size and --cache-config: use --cache-config local,size=<bytes> alone")
		}
		p.cacheName = "local"
		p.cacheSettings = map[string]string{"size": strconv.FormatInt(p.ResponseCacheByteSize, 10)}
		return nil
	}
	for _, s := range p.CacheConfig {
		name, setting, ok := strings.Cut(s, ",")
		k, v, ok2 := strings.Cut(setting, "=")
		if !ok || !ok2 || name == "" || k == "" {
			return fmt.Errorf("--cache-config %q: want <cache>,<key>=<value>", s)
		}
		if p.cacheName != "" && name != p.cacheName {
			return fmt.Errorf("--cache-config: multiple cache configurations (%q and %q); the server has one cache", p.cacheName, name)
		}
		if p.cacheSettings == nil {
			p.cacheSettings = map[string]string{}
		}
		p.cacheName = name
		p.cacheSettings[k] = v
	}
	return nil
}

func (p *pluginFlags) validate() error {
	if p.CacheCallTimeoutMs <= 0 {
		return fmt.Errorf("--cache-call-timeout must be positive, not %d", p.CacheCallTimeoutMs)
	}
	if p.CacheMaxCalls <= 0 {
		return fmt.Errorf("--cache-max-calls must be positive, not %d", p.CacheMaxCalls)
	}
	if p.CacheHeldBytes <= 0 {
		return fmt.Errorf("--cache-held-byte-size must be positive, not %d", p.CacheHeldBytes)
	}
	return nil
}

// open opens the response cache the flags name (nil when none) and the
// repository agents' provider, on host.
func (p *pluginFlags) open(host *abi.Host, log *serverlog.Logger) (core.ResponseCache, core.RepoAgentProvider, error) {
	agents := loader.NewRepoAgents(host, p.RepoAgentDirectory, log)
	if p.cacheName == "" {
		return nil, agents, nil
	}
	cache, err := loader.OpenCache(host, p.CacheDirectory, p.cacheName, p.cacheSettings)
	if err != nil {
		return nil, nil, fmt.Errorf("response cache %q: %w", p.cacheName, err)
	}
	log.Infof("response cache %q loaded from %s", p.cacheName, filepath.Join(p.CacheDirectory, p.cacheName))
	return cache, agents, nil
}

// apply sets the core options of the cache path.
func (p *pluginFlags) apply(opts *core.Options, cache core.ResponseCache, agents core.RepoAgentProvider) {
	opts.ResponseCache, opts.RepoAgents = cache, agents
	opts.CacheCallTimeout = time.Duration(p.CacheCallTimeoutMs) * time.Millisecond
	opts.CacheMaxCalls = p.CacheMaxCalls
	opts.CacheMaxBytes = p.CacheHeldBytes
}

// besideBinary returns <dir of the binary's dir>/name when it is a
// directory (a release unpacked, or a source tree after make), else
// fallback, Triton's default.
func besideBinary(name, fallback string) string {
	if exe, err := os.Executable(); err == nil {
		dir := filepath.Join(filepath.Dir(filepath.Dir(exe)), name)
		if st, err := os.Stat(dir); err == nil && st.IsDir() {
			return dir
		}
	}
	return fallback
}
