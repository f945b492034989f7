package server

import (
	"maps"
	"strings"
	"testing"
)

func TestPluginFlagsReadTheCacheAsTritonDoes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		flags    PluginsConfig
		cache    string
		settings map[string]string
		err      string
	}{
		{name: "no cache"},
		{name: "one setting", flags: PluginsConfig{CacheConfig: []string{"local,size=1048576"}},
			cache: "local", settings: map[string]string{"size": "1048576"}},
		{name: "settings add up, values keep their commas and equals", flags: PluginsConfig{CacheConfig: []string{"redis,host=a", "redis,password=x=y,z"}},
			cache: "redis", settings: map[string]string{"host": "a", "password": "x=y,z"}},
		{name: "the older flag", flags: PluginsConfig{ResponseCacheByteSize: 4096},
			cache: "local", settings: map[string]string{"size": "4096"}},
		{name: "two caches", flags: PluginsConfig{CacheConfig: []string{"local,size=1", "redis,host=a"}}, err: "multiple cache configurations"},
		{name: "both flags", flags: PluginsConfig{ResponseCacheByteSize: 1, CacheConfig: []string{"local,size=1"}}, err: "incompatible flags"},
		{name: "no setting", flags: PluginsConfig{CacheConfig: []string{"local"}}, err: "want <cache>,<key>=<value>"},
		{name: "no key", flags: PluginsConfig{CacheConfig: []string{"local,=1"}}, err: "want <cache>,<key>=<value>"},
		{name: "negative size", flags: PluginsConfig{ResponseCacheByteSize: -1}, err: "must not be negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := tt.flags
			var set settings
			err := p.parse(&set)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("complete: %v, want an error saying %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if set.cacheName != tt.cache || !maps.Equal(set.cacheSettings, tt.settings) {
				t.Errorf("cache %q %v, want %q %v", set.cacheName, set.cacheSettings, tt.cache, tt.settings)
			}
			if set.cacheDirectory == "" || set.agentDirectory == "" {
				t.Error("the directories have no default")
			}
		})
	}
}
