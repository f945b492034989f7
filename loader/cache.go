package loader

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/tritonhost/tritonhost/core"
)

// DefaultCacheDirectory is Triton's --cache-directory default.
const DefaultCacheDirectory = "/opt/tritonserver/caches"

// CacheOpener opens response cache libraries (tritoncache.h). Package abi
// implements it.
type CacheOpener interface {
	// OpenCache loads the library at path for the cache named name and
	// runs its TRITONCACHE_CacheInitialize with config (JSON). On failure
	// nothing stays open.
	OpenCache(path, name, config string) (core.ResponseCache, error)
}

// CacheLibraryFile returns the file name of cache name's library,
// libtritoncache_<name>.so.
func CacheLibraryFile(name string) string { return "libtritoncache_" + name + ".so" }

// OpenCache opens the server's response cache as Triton does for
// --cache-config <name>,<key>=<value>: the library
// <dir>/<name>/libtritoncache_<name>.so, initialized with settings as a JSON
// object of strings (CacheConfigJSON). Closing the cache (its Close, which
// core.Server.Stop calls) finalizes it and closes the library.
func OpenCache(opener CacheOpener, dir, name string, settings map[string]string) (core.ResponseCache, error) {
	config, err := CacheConfigJSON(settings)
	if err != nil {
		return nil, err
	}
	return OpenCacheJSON(opener, dir, name, config)
}

// OpenCacheJSON is OpenCache with the configuration already JSON, as
// TRITONSERVER_ServerOptionsSetCacheConfig gives it.
func OpenCacheJSON(opener CacheOpener, dir, name, config string) (core.ResponseCache, error) {
	if !isFileName(name) {
		return nil, core.Errorf(core.CodeInvalidArg, "cache %q: the name must be a name, not a path", name)
	}
	file := CacheLibraryFile(name)
	path := filepath.Join(dir, name, file)
	if st, err := os.Stat(path); err != nil || st.IsDir() {
		return nil, core.Errorf(core.CodeInvalidArg, "unable to find '%s' for cache. Searched: %s", file, dir)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, core.Errorf(core.CodeInternal, "cache %q: %w", name, err)
	}
	c, err := opener.OpenCache(abs, name, config)
	if err != nil {
		return nil, fmt.Errorf("load cache library %s: %w", abs, err)
	}
	return c, nil
}

// CacheConfigJSON renders a cache's settings as its initialize receives
// them: a JSON object whose values are strings, as Triton passes
// --cache-config (the local cache reads {"size":"1048576"}).
func CacheConfigJSON(settings map[string]string) (string, error) {
	if settings == nil {
		settings = map[string]string{}
	}
	js, err := json.Marshal(settings)
	if err != nil {
		return "", fmt.Errorf("cache settings: %w", err)
	}
	return string(js), nil
}
