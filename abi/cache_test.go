package abi_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/tritonhost/tritonhost/abi"
	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/internal/testenv"
	"github.com/tritonhost/tritonhost/loader"
)

// probeCacheDir builds testdata/cache_probe.c as the cache "probe" in a
// cache directory of its own and returns the directory.
func probeCacheDir(t *testing.T) string {
	t.Helper()
	lib := testenv.SharedLibrary(t, "tritoncache_probe", "testdata/cache_probe.c")
	dir := t.TempDir()
	testenv.CopyFile(t, lib, filepath.Join(dir, "probe", "libtritoncache_probe.so"))
	return dir
}

// openProbe opens the probe cache with settings on a host of its own and
// closes both at cleanup, checking that no handle was left live.
func openProbe(t *testing.T, settings map[string]string) core.ResponseCache {
	t.Helper()
	host := abi.NewHost(abi.HostOptions{})
	c, err := loader.OpenCache(host, probeCacheDir(t), "probe", settings)
	if err != nil {
		host.Close()
		t.Fatalf("OpenCache: %v", err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		host.Close()
	})
	return c
}

// lookup looks key up and returns the entry (nil when not found).
func lookup(t *testing.T, c core.ResponseCache, key string) ([]byte, error) {
	t.Helper()
	var got []byte
	found, err := c.Lookup(key, func(n int) []byte { got = make([]byte, n); return got })
	if !found {
		return nil, err
	}
	return got, err
}

func TestCacheInsertThenLookupRoundTrips(t *testing.T) {
	c := openProbe(t, map[string]string{"checks": "1"})
	entry := bytes.Repeat([]byte("0123456789"), 1000)
	if got, err := lookup(t, c, "k1"); got != nil || err != nil {
		t.Fatalf("lookup before insert: %q, %v; want a miss", got, err)
	}
	if err := c.Insert("k1", entry); err != nil {
		t.Fatalf("Insert: %v", err)
	}
	got, err := lookup(t, c, "k1")
	if err != nil || !bytes.Equal(got, entry) {
		t.Fatalf("lookup after insert: %d bytes, %v; want the %d bytes inserted", len(got), err, len(entry))
	}
	if err := c.Insert("k1", entry); core.CodeOf(err) != core.CodeAlreadyExists {
		t.Errorf("second insert of k1: %v (code %v), want CodeAlreadyExists", err, core.CodeOf(err))
	}
	if err := c.Insert("empty", nil); err != nil {
		t.Errorf("inserting an empty entry: %v", err)
	}
	if got, err := lookup(t, c, "empty"); got == nil || len(got) != 0 || err != nil {
		t.Errorf("lookup of the empty entry: %v, %v; want found and empty", got, err)
	}
}

// TestCacheHostFunctionsRefuseBadArguments: the probe cache calls every
// TRITONCACHE host function with NULLs, made-up and stale handles, indices
// out of range, GPU memory and a second copy, in each insert and lookup,
// and fails naming the first that did not refuse as tritoncache.h says.
func TestCacheHostFunctionsRefuseBadArguments(t *testing.T) {
	c := openProbe(t, map[string]string{"checks": "1"})
	for i := range 3 { // later calls also check the previous call's handles are dead
		key := fmt.Sprint("k", i)
		if err := c.Insert(key, []byte(key)); err != nil {
			t.Fatalf("insert %d: %v", i, err)
		}
		if got, err := lookup(t, c, key); err != nil || string(got) != key {
			t.Fatalf("lookup %d: %q, %v", i, got, err)
		}
	}
}

func TestCacheLookupFailures(t *testing.T) {
	tests := []struct {
		name     string
		settings map[string]string
		alloc    func(n int) []byte
		want     string // in the error; "" for a plain miss
	}{
		{"cache error", map[string]string{"lookup_error": "1"}, nil, "refuses to look up"},
		{"found without copying", map[string]string{"no_copy": "1"}, nil, "without copying"},
		{"entry larger than the server holds", nil, func(int) []byte { return nil }, "larger than the server holds"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := openProbe(t, tt.settings)
			if err := c.Insert("k", []byte("value")); err != nil {
				t.Fatal(err)
			}
			alloc := tt.alloc
			if alloc == nil {
				alloc = func(n int) []byte { return make([]byte, n) }
			}
			found, err := c.Lookup("k", alloc)
			if found || err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Lookup: found %v, error %v; want a failure saying %q", found, err, tt.want)
			}
		})
	}
}

func TestCacheInsertFailureIsTheCachesError(t *testing.T) {
	c := openProbe(t, map[string]string{"insert_error": "1"})
	err := c.Insert("k", []byte("v"))
	if err == nil || core.CodeOf(err) != core.CodeInternal || !strings.Contains(err.Error(), "refuses to insert") {
		t.Errorf("Insert: %v (code %v), want the cache's INTERNAL error", err, core.CodeOf(err))
	}
}

func TestOpenCacheRefusesWhatItCannotLoad(t *testing.T) {
	host := abi.NewHost(abi.HostOptions{})
	defer host.Close()
	dir := probeCacheDir(t)
	noLookup := testenv.SharedLibrary(t, "tritoncache_partial", "testdata/initialize_fails.c")
	testenv.CopyFile(t, noLookup, filepath.Join(dir, "partial", "libtritoncache_partial.so"))
	tests := []struct {
		name, cache string
		settings    map[string]string
		want        string
	}{
		{"missing library", "nope", nil, "unable to find 'libtritoncache_nope.so' for cache. Searched: " + dir},
		{"missing entry point", "partial", nil, "does not export TRITONCACHE_Cache"},
		{"initialize fails", "probe", map[string]string{"fail_init": "1"}, "TRITONCACHE_CacheInitialize failed: the probe cache refuses to start"},
		{"a path for a name", "../probe", nil, "must be a name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := loader.OpenCache(host, dir, tt.cache, tt.settings)
			if err == nil {
				c.Close()
				t.Fatal("OpenCache succeeded")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q, want it to contain %q", err, tt.want)
			}
		})
	}
}

// TestCacheCallsRunConcurrently: lookups and inserts from many goroutines
// at once each see their own data.
func TestCacheCallsRunConcurrently(t *testing.T) {
	c := openProbe(t, nil)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 5 {
				key := fmt.Sprintf("g%d-%d", g, i)
				if err := c.Insert(key, []byte(key)); err != nil {
					t.Errorf("insert %s: %v", key, err)
					return
				}
				if got, err := lookup(t, c, key); err != nil || string(got) != key {
					t.Errorf("lookup %s: %q, %v", key, got, err)
				}
			}
		})
	}
	wg.Wait()
}

// TestCacheCountsItsCalls checks the probe's call log, which the server
// tests rely on.
func TestCacheCountsItsCalls(t *testing.T) {
	log := filepath.Join(t.TempDir(), "calls")
	c := openProbe(t, map[string]string{"count_file": log})
	_ = c.Insert("k", []byte("v"))
	_, _ = lookup(t, c, "k")
	data, err := os.ReadFile(log)
	if err != nil || string(data) != "insert\nlookup\n" {
		t.Errorf("call log %q, %v", data, err)
	}
}

// TestPluginsLinkedAsTritonsLoad: a cache and an agent linked the way
// Triton's are, against the libtritonserver.so stub (DT_NEEDED), load and
// work: the host provides that library itself.
func TestPluginsLinkedAsTritonsLoad(t *testing.T) {
	testenv.BackendDir(t) // builds the stub, build/stub/libtritonserver.so
	stub := filepath.Join(testenv.RepoRoot(t), "build", "stub")
	dir := t.TempDir()
	build := func(name, src string) string {
		out := filepath.Join(dir, "probe", "lib"+name+".so")
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("gcc", "-shared", "-fPIC", "-std=c11", "-I", filepath.Join(testenv.RepoRoot(t), "include"), "-o", out, src,
			"-Wl,--no-as-needed", "-L", stub, "-ltritonserver")
		if msg, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("gcc: %v\n%s", err, msg)
		}
		if !slices.Contains(testenv.ReadDynamicSymbols(t, out).Needed, "libtritonserver.so") {
			t.Fatalf("%s does not need libtritonserver.so", out)
		}
		return out
	}
	cacheLib := build("tritoncache_probe", "testdata/cache_probe.c")
	agentLib := build("tritonrepoagent_probe", "testdata/repoagent_probe.c")
	host := abi.NewHost(abi.HostOptions{})
	defer host.Close()
	c, err := loader.OpenCache(host, dir, "probe", nil)
	if err != nil {
		t.Fatalf("OpenCache %s: %v", cacheLib, err)
	}
	if err := c.Insert("k", []byte("v")); err != nil {
		t.Error(err)
	}
	if err := c.Close(); err != nil {
		t.Error(err)
	}
	m, err := loader.NewRepoAgents(host, dir, nil).NewModel("probe", core.RepoAgentModelSpec{Model: "m", Location: dir, Config: []byte("{}")})
	if err != nil {
		t.Fatalf("agent %s: %v", agentLib, err)
	}
	if err := m.Action(core.RepoActionLoad); err != nil {
		t.Error(err)
	}
	m.Finalize()
}
