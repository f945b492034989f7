package server

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/tritonhost/tritonhost/abi"
	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/serverlog"
	"github.com/tritonhost/tritonhost/loader"
)

// parse fills the default directories and reads the cache's settings:
// Triton's --cache-config or --response-cache-byte-size, else the JSON of
// TRITONSERVER_ServerOptionsSetCacheConfig.
func (p *PluginsConfig) parse(s *settings) error {
	s.cacheDirectory, s.agentDirectory = p.CacheDirectory, p.RepoAgentDirectory
	if s.cacheDirectory == "" {
		s.cacheDirectory = besideProgram("caches", defaultCacheDirectory)
	}
	if s.agentDirectory == "" {
		s.agentDirectory = besideProgram("repoagents", defaultRepoAgentDirectory)
	}
	if p.ResponseCacheByteSize < 0 {
		return fmt.Errorf("--response-cache-byte-size must not be negative, not %d", p.ResponseCacheByteSize)
	}
	if p.ResponseCacheByteSize > 0 {
		if len(p.CacheConfig) > 0 {
			return errors.New("incompatible flags --response-cache-byte-size and --cache-config: use --cache-config local,size=<bytes> alone")
		}
		s.cacheName = "local"
		s.cacheSettings = map[string]string{"size": strconv.FormatInt(p.ResponseCacheByteSize, 10)}
		return p.checkJSON(s)
	}
	for _, c := range p.CacheConfig {
		name, setting, ok := strings.Cut(c, ",")
		k, v, ok2 := strings.Cut(setting, "=")
		if !ok || !ok2 || name == "" || k == "" {
			return fmt.Errorf("--cache-config %q: want <cache>,<key>=<value>", c)
		}
		if s.cacheName != "" && name != s.cacheName {
			return fmt.Errorf("--cache-config: multiple cache configurations (%q and %q); the server has one cache", s.cacheName, name)
		}
		if s.cacheSettings == nil {
			s.cacheSettings = map[string]string{}
		}
		s.cacheName = name
		s.cacheSettings[k] = v
	}
	return p.checkJSON(s)
}

// checkJSON takes the cache of CacheJSON when the flags configure none.
func (p *PluginsConfig) checkJSON(s *settings) error {
	switch {
	case len(p.CacheJSON) == 0:
		return nil
	case s.cacheName != "":
		return fmt.Errorf("the response cache %q is configured twice: by --cache-config or --response-cache-byte-size, and as JSON", s.cacheName)
	case len(p.CacheJSON) > 1:
		return fmt.Errorf("%d caches are configured; a server has one", len(p.CacheJSON))
	}
	for name, config := range p.CacheJSON {
		s.cacheName, s.cacheJSON = name, config
	}
	return nil
}

func (p *PluginsConfig) validate() error {
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

// openPlugins opens the response cache the settings name (nil when none)
// and the repository agents' provider, on host.
func openPlugins(s *settings, host *abi.Host, log *serverlog.Logger) (core.ResponseCache, core.RepoAgentProvider, error) {
	agents := loader.NewRepoAgents(host, s.agentDirectory, log)
	if s.cacheName == "" {
		return nil, agents, nil
	}
	var cache core.ResponseCache
	var err error
	if s.cacheSettings != nil {
		cache, err = loader.OpenCache(host, s.cacheDirectory, s.cacheName, s.cacheSettings)
	} else {
		cache, err = loader.OpenCacheJSON(host, s.cacheDirectory, s.cacheName, s.cacheJSON)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("response cache %q: %w", s.cacheName, err)
	}
	log.Infof("response cache %q loaded from %s", s.cacheName, filepath.Join(s.cacheDirectory, s.cacheName))
	return cache, agents, nil
}

// apply sets the core options of the cache path.
func (p *PluginsConfig) apply(opts *core.Options, cache core.ResponseCache, agents core.RepoAgentProvider) {
	opts.ResponseCache, opts.RepoAgents = cache, agents
	opts.CacheCallTimeout = time.Duration(p.CacheCallTimeoutMs) * time.Millisecond
	opts.CacheMaxCalls = p.CacheMaxCalls
	opts.CacheMaxBytes = p.CacheHeldBytes
}
